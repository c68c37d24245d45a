package io.kse.extender.tools;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class ConfigReferenceTest {
  @Test
  void docsConfigurationMdIsWhatTheCodeGenerates() throws Exception {
    Path doc = Path.of("../docs/configuration.md");
    assertThat(Files.readString(doc))
        .as("docs/configuration.md is stale; regenerate it with ConfigReference (see its header)")
        .isEqualTo(ConfigReference.render());
  }

  @Test
  void everyAnnotationKeyInTheCodeIsDocumented() throws Exception {
    List<String> keys = new ArrayList<>();
    for (Class<?> c : List.of(io.kse.policy.WellKnown.class, io.kse.extender.k8s.WellKnown.class)) {
      for (Field f : c.getDeclaredFields()) {
        if (Modifier.isStatic(f.getModifiers())
            && f.getType() == String.class
            && f.get(null) instanceof String s
            && s.startsWith("kse.io/")
            && !s.equals("kse.io/")
            && !f.getName().equals("SCHEDULING_GATE") // a gate and a taint: their own table
            && !f.getName().equals("TAINT_KEY")) {
          keys.add(s);
        }
      }
    }
    assertThat(keys).isNotEmpty();
    assertThat(ConfigReference.ANNOTATIONS.keySet()).containsAll(keys);
  }
}

package io.kse.policy;

import io.kse.policy.model.Policy;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.OptionalLong;

/** Test helpers: the example policies and pod facts. */
final class Policies {
  private Policies() {}

  static Path examples() {
    Path p = Path.of("examples");
    return Files.isDirectory(p) ? p : Path.of("policy/examples");
  }

  static String example(String name) {
    try {
      return Files.readString(examples().resolve(name));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  static Policy lab() {
    return PolicyParser.parse(example("lab.yaml"), "lab.yaml");
  }

  static Policy minimal() {
    return PolicyParser.parse(example("minimal.yaml"), "minimal.yaml");
  }

  /** A pod in {@code ns} with these annotations and GPUs, and optional priority class/value. */
  static PodFacts pod(
      String ns,
      Map<String, String> annotations,
      long gpus,
      String priorityClass,
      Integer priority) {
    return new PodFacts(
        ns,
        "p",
        "uid-1",
        Map.of(),
        annotations,
        Optional.ofNullable(priorityClass),
        priority == null ? OptionalInt.empty() : OptionalInt.of(priority),
        Optional.empty(),
        4000,
        16L << 30,
        gpus > 0 ? Map.of(PodFacts.GPU, gpus) : Map.of(),
        OptionalLong.empty());
  }

  /** The same pod asking for these extended resources besides its GPUs. */
  static PodFacts withResources(PodFacts p, Map<String, Long> extended) {
    Map<String, Long> res = new java.util.HashMap<>(p.extendedResources());
    res.putAll(extended);
    return new PodFacts(
        p.namespace(),
        p.name(),
        p.uid(),
        p.labels(),
        p.annotations(),
        p.priorityClassName(),
        p.priority(),
        p.owner(),
        p.cpuMillis(),
        p.memoryBytes(),
        res,
        p.activeDeadlineSeconds());
  }
}

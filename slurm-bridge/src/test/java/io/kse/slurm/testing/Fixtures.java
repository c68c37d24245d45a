package io.kse.slurm.testing;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;

/** Recorded and hand-written slurmrestd responses under {@code src/test/resources/slurm/}. */
public final class Fixtures {
  private static final ObjectMapper JSON = new ObjectMapper();

  private Fixtures() {}

  public static JsonNode json(String versionId, String name) {
    try {
      return JSON.readTree(text(versionId, name));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  public static String text(String versionId, String name) {
    String path = "/slurm/" + versionId + "/" + name;
    try (InputStream in = Fixtures.class.getResourceAsStream(path)) {
      if (in == null) {
        throw new IllegalArgumentException("no fixture " + path);
      }
      return new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}

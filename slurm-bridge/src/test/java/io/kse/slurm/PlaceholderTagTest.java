package io.kse.slurm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Random;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class PlaceholderTagTest {
  @ParameterizedTest(name = "seed {0}")
  @ValueSource(longs = {1, 2, 3, 42, 4711})
  void commentRoundTripsForRandomKubernetesNames(long seed) {
    Random r = new Random(seed);
    for (int i = 0; i < 200; i++) {
      PlaceholderTag t =
          new PlaceholderTag(
              dnsName(r), dnsName(r), new UUID(r.nextLong(), r.nextLong()).toString());
      assertThat(PlaceholderTag.fromComment(t.toComment())).contains(t);
    }
  }

  @Test
  void commentsOfOtherJobsAreNotPlaceholders() {
    assertThat(PlaceholderTag.fromComment("exp-42")).isEmpty();
    assertThat(PlaceholderTag.fromComment("")).isEmpty();
    assertThat(PlaceholderTag.fromComment(null)).isEmpty();
    assertThat(PlaceholderTag.fromComment("kse:v1 pod=broken")).isEmpty();
  }

  @Test
  void refusesBlankOrSpacedParts() {
    assertThatThrownBy(() -> new PlaceholderTag("ns", "a b", "u")).hasMessageContaining("name");
    assertThatThrownBy(() -> new PlaceholderTag("", "a", "u")).hasMessageContaining("namespace");
  }

  private static String dnsName(Random r) {
    String chars = "abcdefghijklmnopqrstuvwxyz0123456789-.";
    StringBuilder s = new StringBuilder().append((char) ('a' + r.nextInt(26)));
    int len = r.nextInt(40);
    for (int i = 0; i < len; i++) {
      s.append(chars.charAt(r.nextInt(chars.length())));
    }
    return s.append((char) ('a' + r.nextInt(26))).toString();
  }
}

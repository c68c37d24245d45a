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

  @ParameterizedTest(name = "seed {0}")
  @ValueSource(longs = {7, 8, 9})
  void groupCommentsRoundTripAndAreKeptUnderTheGroup(long seed) {
    Random r = new Random(seed);
    for (int i = 0; i < 200; i++) {
      String ns = dnsName(r);
      String group = "lws/" + dnsName(r) + "/" + r.nextInt(100);
      int size = 1 + r.nextInt(64);
      PlaceholderTag t =
          PlaceholderTag.group(ns, dnsName(r), UUID.randomUUID().toString(), group, size);
      assertThat(PlaceholderTag.fromComment(t.toComment())).contains(t);
      assertThat(t.key()).isEqualTo("group:" + ns + "/" + group);
    }
  }

  @Test
  void aPodOfItsOwnIsKeptUnderItsUid() {
    PlaceholderTag t = new PlaceholderTag("ns", "p", "u-1");
    assertThat(t.key()).isEqualTo("u-1");
    assertThat(t.toComment()).isEqualTo("kse:v1 pod=ns/p uid=u-1");
    assertThat(PlaceholderTag.fromComment("kse:v1 pod=ns/p uid=u-1 group=kse/g size=3"))
        .contains(PlaceholderTag.group("ns", "p", "u-1", "kse/g", 3));
  }

  @Test
  void theSubmittingClusterIsInTheCommentAndTellsWhoseItIs() {
    PlaceholderTag t = PlaceholderTag.group("ns", "p", "u-1", "kse/g", 2).inCluster("prod-eu");
    assertThat(t.toComment())
        .isEqualTo("kse:v1 cluster=prod-eu pod=ns/p uid=u-1 group=kse/g size=2");
    assertThat(PlaceholderTag.fromComment(t.toComment())).contains(t);
    assertThat(t.submittedBy("prod-eu")).isTrue();
    assertThat(t.foreignTo("prod-eu")).isFalse();
    assertThat(t.foreignTo("staging")).isTrue();
    assertThat(t.submittedBy("staging")).isFalse();
    // the older form names no cluster: read as before, never foreign, never ours from Slurm alone
    PlaceholderTag old = PlaceholderTag.fromComment("kse:v1 pod=ns/p uid=u-1").orElseThrow();
    assertThat(old.cluster()).isEmpty();
    assertThat(old.foreignTo("prod-eu")).isFalse();
    assertThat(old.submittedBy("prod-eu")).isFalse();
    assertThatThrownBy(() -> t.inCluster("Prod_EU")).hasMessageContaining("DNS label");
  }

  @Test
  void anEditedGroupCommentIsNotOurs() {
    assertThat(PlaceholderTag.fromComment("kse:v1 pod=ns/p uid=u group=g size=0")).isEmpty();
    assertThat(PlaceholderTag.fromComment("kse:v1 pod=ns/p uid=u group=G size=2")).isEmpty();
    assertThat(PlaceholderTag.fromComment("kse:v1 pod=ns/p uid=u group=g")).isEmpty();
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

  /** Parsed comments are remembered (issue 30): the answers stay those of a fresh parse. */
  @Test
  void aRememberedCommentParsesAsAFreshOneAndTheMemoryIsBounded() {
    String edited = "kse:v1 pod=ns/p uid=u 1"; // ours in form, edited: never ours to act on
    assertThat(PlaceholderTag.fromComment(edited)).isEmpty();
    assertThat(PlaceholderTag.fromComment(edited)).isEmpty();
    for (int i = 0; i <= PlaceholderTag.PARSED_KEPT; i++) {
      String c = "kse:v1 pod=ns/p-" + i + " uid=u-" + i;
      assertThat(PlaceholderTag.fromComment(c)).map(PlaceholderTag::uid).contains("u-" + i);
      assertThat(PlaceholderTag.fromComment(c)).map(PlaceholderTag::name).contains("p-" + i);
    }
    assertThat(PlaceholderTag.fromComment(edited)).isEmpty();
  }
}

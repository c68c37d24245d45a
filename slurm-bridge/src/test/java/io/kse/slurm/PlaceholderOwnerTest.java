package io.kse.slurm;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class PlaceholderOwnerTest {
  static SlurmJob job(String comment, String user) {
    return new SlurmJob(
            7,
            "j",
            comment,
            JobState.PENDING,
            "None",
            "inference",
            "",
            List.of(),
            1,
            Instant.EPOCH,
            Optional.empty(),
            Optional.empty(),
            0,
            "",
            "",
            0,
            Instant.EPOCH)
        .withUser(user);
  }

  static final String OURS = "kse:v1 cluster=c1 pod=serving/llm-0 uid=u-1";
  static final String OTHER_CLUSTER = "kse:v1 cluster=c2 pod=serving/llm-0 uid=u-1";
  static final String OLD_FORM = "kse:v1 pod=serving/llm-0 uid=u-1";

  @ParameterizedTest(name = "{0} by {1}: ours={2} impostor={3}")
  @CsvSource({
    "OURS, kse, true, false",
    "OURS, mallory, false, true",
    "OURS, '', false, true",
    "OLD_FORM, kse, true, false",
    "OLD_FORM, mallory, false, true",
    "OTHER_CLUSTER, kse, false, false",
    "OTHER_CLUSTER, mallory, false, false",
    "NONE, mallory, false, false",
  })
  void aJobIsOursOnlyWithOurTagOurClusterAndOurSlurmUser(
      String comment, String user, boolean ours, boolean impostor) {
    String text =
        switch (comment) {
          case "OURS" -> OURS;
          case "OTHER_CLUSTER" -> OTHER_CLUSTER;
          case "OLD_FORM" -> OLD_FORM;
          default -> "training run 42";
        };
    PlaceholderOwner owner = new PlaceholderOwner(Optional.of("c1"), Optional.of("kse"));
    SlurmJob j = job(text, user);
    assertThat(owner.tagOf(j).isPresent()).isEqualTo(ours);
    assertThat(owner.impostor(j)).isEqualTo(impostor);
  }

  @ParameterizedTest
  @CsvSource({"kse", "mallory"})
  void withoutAKnownUserTheCommentAloneDecidesAsBefore(String user) {
    PlaceholderOwner owner = new PlaceholderOwner(Optional.of("c1"), Optional.empty());
    assertThat(owner.tagOf(job(OURS, user))).isPresent();
    assertThat(owner.impostor(job(OURS, user))).isFalse();
  }
}

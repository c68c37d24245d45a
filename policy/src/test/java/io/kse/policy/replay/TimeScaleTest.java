package io.kse.policy.replay;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class TimeScaleTest {
  @Test
  void traceTimeShrinksByTheSpeedAndGrowsBack() {
    TimeScale x60 = new TimeScale(60);
    assertThat(x60.wall(Duration.ofHours(1))).isEqualTo(Duration.ofMinutes(1));
    assertThat(x60.trace(Duration.ofSeconds(90))).isEqualTo(Duration.ofMinutes(90));
  }

  @Test
  void slurmSettingsScaleToWholeSecondsAndSayWhenFloored() {
    TimeScale x60 = new TimeScale(60);
    // a 15-minute exemption becomes 15 s; a 30 s grace would be 0.5 s: Slurm has whole seconds
    assertThat(x60.slurm(Duration.ofMinutes(15))).isEqualTo(new TimeScale.SlurmSeconds(15, false));
    assertThat(x60.slurm(Duration.ofSeconds(30))).isEqualTo(new TimeScale.SlurmSeconds(1, true));
    assertThat(x60.slurm(Duration.ZERO)).isEqualTo(new TimeScale.SlurmSeconds(0, false));
    assertThat(new TimeScale(1).slurm(Duration.ofSeconds(30)))
        .isEqualTo(new TimeScale.SlurmSeconds(30, false));
  }

  @Test
  void aSpeedBelowOneIsRefused() {
    assertThatThrownBy(() -> new TimeScale(0.5)).hasMessageContaining("speed must be");
    assertThatThrownBy(() -> new TimeScale(Double.NaN)).hasMessageContaining("speed must be");
  }
}

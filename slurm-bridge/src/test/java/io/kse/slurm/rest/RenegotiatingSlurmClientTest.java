package io.kse.slurm.rest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kse.slurm.ApiVersion;
import io.kse.slurm.SlurmRejectedException;
import io.kse.slurm.testing.FakeSlurmRestd;
import io.kse.slurm.testing.FakeSlurmRestd.Answer;
import io.kse.slurm.testing.Fixtures;
import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Issue 44: Slurm upgraded under a running extender drops the REST version it discovered at start;
 * the next call finds the version slurmrestd serves now and goes on, without a restart.
 */
class RenegotiatingSlurmClientTest {
  private final FakeSlurmRestd restd = new FakeSlurmRestd();

  @AfterEach
  void stop() {
    restd.close();
  }

  RenegotiatingSlurmClient client() {
    SlurmHttp http =
        new SlurmHttp(
            restd.url(),
            Optional.empty(),
            TokenSource.of(SlurmErrorsTest.VALID),
            Duration.ofSeconds(1),
            Duration.ofSeconds(2),
            Optional.empty());
    return new RenegotiatingSlurmClient(
        http, VersionProbe.discover(http), v -> new RestSlurmClient(http, v));
  }

  void serve(String version, String job) {
    restd.on("GET /slurm/" + version + "/ping/", Answer.ok(Fixtures.text(version, "ping.json")));
    restd.on("GET /slurm/" + version + "/partitions/", Answer.ok("{\"partitions\":[]}"));
    restd.on(
        "GET /slurm/" + version + "/job/" + job,
        Answer.ok(Fixtures.text(version, "job-running.json")));
  }

  void stopServing(String version, String job) {
    for (String p : new String[] {"/ping/", "/partitions/", "/job/" + job}) {
      restd.on("GET /slurm/" + version + p, new Answer(404, "", 0));
    }
  }

  @Test
  void aVersionDroppedByAnUpgradeIsReplacedByTheOneServedAndTheCallGoesThrough() {
    serve("v0.0.42", "4711");
    RenegotiatingSlurmClient c = client();
    assertThat(c.apiVersion()).isEqualTo(ApiVersion.V0042);
    assertThat(c.job(4711)).get().extracting(j -> j.id()).isEqualTo(4711L);

    stopServing("v0.0.42", "4711"); // the upgrade: 26.05 serves v0.0.43-v0.0.45
    serve("v0.0.45", "1");
    assertThat(c.job(1)).as("the refused call, sent again at the new version").isPresent();
    assertThat(c.apiVersion()).isEqualTo(ApiVersion.V0045);
    assertThat(restd.requests())
        .extracting(r -> r.method() + " " + r.path())
        .containsSubsequence(
            "GET /slurm/v0.0.42/job/1", // refused: 404
            "GET /slurm/v0.0.42/ping/", // is the version still served? no
            "GET /slurm/v0.0.45/ping/", // the newest served
            "GET /slurm/v0.0.45/job/1");
  }

  @Test
  void aRefusalWhileTheVersionIsStillServedIsPassedOnWithoutSwitching() {
    serve("v0.0.42", "4711");
    RenegotiatingSlurmClient c = client();
    restd.on(
        "GET /slurm/v0.0.42/job/9",
        new Answer(400, "{\"errors\":[{\"error_number\":9001,\"error\":\"bad request\"}]}", 0));
    assertThatThrownBy(() -> c.job(9)).isInstanceOf(SlurmRejectedException.class);
    assertThat(c.apiVersion()).isEqualTo(ApiVersion.V0042);
  }
}

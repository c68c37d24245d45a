package io.kse.slurm.rest;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.kse.slurm.SlurmException;
import io.kse.slurm.SlurmNotFoundException;
import io.kse.slurm.SlurmRejectedException;
import io.kse.slurm.SlurmUnauthorizedException;
import io.kse.slurm.SlurmUnavailableException;
import io.kse.slurm.testing.Fixtures;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import org.junit.jupiter.api.Test;

/** Classification of real slurmrestd 22.05 failure answers (recorded) and of HTTP statuses. */
class SlurmErrorsTest {
  private static final Duration FAST = Duration.ofMillis(30);
  private static final Duration SLOW = Duration.ofSeconds(9);

  static String jwt(long exp) {
    String payload = "{\"exp\":" + exp + ",\"iat\":1,\"sun\":\"kse\"}";
    return "eyJhbGciOiJIUzI1NiJ9."
        + Base64.getUrlEncoder().withoutPadding().encodeToString(payload.getBytes())
        + ".sig";
  }

  static final String VALID = jwt(Instant.now().plusSeconds(3600).getEpochSecond());

  @Test
  void aMissingJobIsNotFoundDespiteHttp500() {
    SlurmException e = classify(500, Fixtures.json("v0.0.38", "job-missing.json"), FAST);
    assertThat(e).isInstanceOf(SlurmNotFoundException.class).hasMessageContaining("2017");
  }

  @Test
  void aFastUnspecifiedErrorIsARefusedToken() {
    SlurmException e = classify(500, Fixtures.json("v0.0.38", "ping-bad-token.json"), FAST);
    assertThat(e)
        .isInstanceOf(SlurmUnauthorizedException.class)
        .hasMessageContaining("refused the request at once");
  }

  @Test
  void anExpiredTokenIsNamedAsSuch() {
    String expired = jwt(1_000_000);
    SlurmException e =
        SlurmErrors.classify(
            "ping", 500, Fixtures.json("v0.0.38", "ping-bad-token.json"), "", FAST, expired);
    assertThat(e).isInstanceOf(SlurmUnauthorizedException.class).hasMessageContaining("expired at");
  }

  @Test
  void aSlowUnspecifiedErrorIsAnUnreachableController() {
    // recorded with slurmctld stopped: the same body as a bad token, but after slurmrestd's retries
    SlurmException e = classify(500, Fixtures.json("v0.0.38", "ping-bad-token.json"), SLOW);
    assertThat(e)
        .isInstanceOf(SlurmUnavailableException.class)
        .hasMessageContaining("did not answer");
  }

  @Test
  void http511WithError1007IsAnUnauthorizedTokenNotAnOutage() throws Exception {
    // as Slurm 25.11's slurmrestd answers an expired token: it was read as "Slurm unavailable",
    // retried, and tripped the circuit breaker
    String body =
        "{\"errors\":[{\"description\":\"Unable to authenticate\",\"error_number\":1007,"
            + "\"error\":\"Protocol authentication error\",\"source\":\"slurm_rest_auth\"}],"
            + "\"warnings\":[]}";
    SlurmException e =
        SlurmErrors.classify(
            "ping",
            511,
            new com.fasterxml.jackson.databind.ObjectMapper().readTree(body),
            body,
            FAST,
            jwt(1_000_000));
    assertThat(e).isInstanceOf(SlurmUnauthorizedException.class).hasMessageContaining("expired at");
  }

  @Test
  void http401IsUnauthorized() {
    SlurmException e =
        SlurmErrors.classify("ping", 401, null, "Authentication failure", FAST, "garbage");
    assertThat(e)
        .isInstanceOf(SlurmUnauthorizedException.class)
        .hasMessageContaining("Authentication failure")
        .hasMessageContaining("not a JWT");
  }

  @Test
  void slurmErrorsOnInputAreRejectionsWithSlurmsText() {
    SlurmException e = classify(500, Fixtures.json("v0.0.38", "submit-bad-partition.json"), FAST);
    assertThat(e)
        .isInstanceOf(SlurmRejectedException.class)
        .hasMessageContaining("Invalid partition name specified (2000)");
  }

  @Test
  void serverErrorsWithoutSlurmErrorsAndOverloadAreUnavailable() {
    assertThat(SlurmErrors.classify("x", 503, null, "busy", FAST, VALID))
        .isInstanceOf(SlurmUnavailableException.class);
    assertThat(SlurmErrors.classify("x", 502, null, "", FAST, VALID))
        .isInstanceOf(SlurmUnavailableException.class);
    assertThat(SlurmErrors.classify("x", 500, null, "<html>", FAST, VALID))
        .isInstanceOf(SlurmUnavailableException.class);
  }

  @Test
  void anUnservedPathIsARejectionNamingTheLikelyCause() {
    assertThat(SlurmErrors.classify("ping", 404, null, "", FAST, VALID))
        .isInstanceOf(SlurmRejectedException.class)
        .hasMessageContaining("wrong API version");
  }

  @Test
  void communicationErrorsFromSlurmctldAreUnavailable() {
    JsonNode body =
        new com.fasterxml.jackson.databind.ObjectMapper()
            .createObjectNode()
            .set(
                "errors",
                new com.fasterxml.jackson.databind.ObjectMapper()
                    .createArrayNode()
                    .add(
                        new com.fasterxml.jackson.databind.ObjectMapper()
                            .createObjectNode()
                            .put("error_number", 1001)
                            .put("error", "Communication connection failure")));
    assertThat(classify(500, body, FAST)).isInstanceOf(SlurmUnavailableException.class);
  }

  private static SlurmException classify(int status, JsonNode body, Duration elapsed) {
    return SlurmErrors.classify("call", status, body, body.toString(), elapsed, VALID);
  }
}

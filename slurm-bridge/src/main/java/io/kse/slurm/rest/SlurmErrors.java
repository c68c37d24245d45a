package io.kse.slurm.rest;

import com.fasterxml.jackson.databind.JsonNode;
import io.kse.slurm.SlurmException;
import io.kse.slurm.SlurmNotFoundException;
import io.kse.slurm.SlurmRejectedException;
import io.kse.slurm.SlurmUnauthorizedException;
import io.kse.slurm.SlurmUnavailableException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Turns a slurmrestd answer into a typed {@link SlurmException}. The rules come from what
 * slurmrestd 22.05 really answers (see the recorded responses in the tests): a missing job is HTTP
 * 500 with Slurm error 2017, not 404; a refused token and an unreachable slurmctld both come back
 * as error -1 "Unspecified error", told apart by how fast the answer came.
 */
final class SlurmErrors {
  static final int INVALID_JOB_ID = 2017;

  /** Slurm's "Protocol authentication error": newer slurmrestd answers a bad token with it. */
  static final int AUTHENTICATION_ERROR = 1007;

  static final int INVALID_NODE_NAME = 2018;

  /**
   * slurmctld unreachable means slurmrestd's own connect retries ran first (9–18 s measured); a
   * refusal of the token comes back in milliseconds.
   */
  static final Duration FAST_REFUSAL = Duration.ofSeconds(2);

  private SlurmErrors() {}

  /** One entry of a response's {@code errors} array. */
  record SlurmError(int code, String error, String description, String source) {
    @Override
    public String toString() {
      StringBuilder s = new StringBuilder();
      s.append(error.isEmpty() ? "error" : error).append(" (").append(code).append(')');
      if (!description.isEmpty()) {
        s.append(": ").append(description);
      }
      return s.toString();
    }
  }

  static List<SlurmError> errors(JsonNode body) {
    List<SlurmError> out = new ArrayList<>();
    if (body == null || !body.path("errors").isArray()) {
      return out;
    }
    for (JsonNode e : body.get("errors")) {
      // 22.05 names the code error_number, errno or error_code depending on the call
      int code = e.path("error_number").asInt(e.path("errno").asInt(e.path("error_code").asInt(0)));
      out.add(
          new SlurmError(
              code,
              e.path("error").asText(""),
              e.path("description").asText(""),
              e.path("source").asText("")));
    }
    return out;
  }

  /**
   * The exception for a failed call.
   *
   * @param what the operation, for the message (e.g. {@code GET job 42})
   * @param status the HTTP status
   * @param body the parsed body, or null when it was not JSON
   * @param rawBody the body text, for messages when it was not JSON
   * @param elapsed how long the call took
   * @param token the token that was sent, to diagnose refusals
   */
  static SlurmException classify(
      String what, int status, JsonNode body, String rawBody, Duration elapsed, String token) {
    List<SlurmError> errors = errors(body);
    String detail = errors.isEmpty() ? abbreviate(rawBody) : errors.toString();
    String prefix = what + " failed: HTTP " + status + " " + detail;

    // Slurm 24.05+ answers an invalid or expired token with 511 and error 1007, not 401/403:
    // that is a refusal of the credentials (no retry), not slurmctld being away
    if (status == 401
        || status == 403
        || status == 511
        || errors.stream().anyMatch(e -> e.code() == AUTHENTICATION_ERROR)) {
      return new SlurmUnauthorizedException(
          prefix + "; slurmrestd refused the credentials" + tokenHint(token));
    }
    if (errors.stream()
        .anyMatch(e -> e.code() == INVALID_JOB_ID || e.code() == INVALID_NODE_NAME)) {
      return new SlurmNotFoundException(prefix);
    }
    if (!errors.isEmpty() && errors.stream().allMatch(e -> e.code() == -1)) {
      if (elapsed.compareTo(FAST_REFUSAL) < 0) {
        return new SlurmUnauthorizedException(
            prefix
                + "; slurmctld refused the request at once, which is what it does with a JWT"
                + " it cannot verify"
                + tokenHint(token));
      }
      return new SlurmUnavailableException(
          prefix + "; slurmctld did not answer slurmrestd within " + elapsed.toMillis() + " ms");
    }
    if (errors.stream().anyMatch(e -> e.code() >= 1000 && e.code() < 2000)) {
      return new SlurmUnavailableException(prefix + "; slurmrestd could not talk to slurmctld");
    }
    if (status == 404 && errors.isEmpty()) {
      return new SlurmRejectedException(
          prefix + "; slurmrestd does not serve this path (wrong API version or URL?)");
    }
    if (status == 429 || status == 502 || status == 503 || status == 504) {
      return new SlurmUnavailableException(prefix);
    }
    if (status >= 500 && errors.isEmpty()) {
      return new SlurmUnavailableException(prefix);
    }
    return new SlurmRejectedException(prefix);
  }

  private static String tokenHint(String token) {
    if (token == null) {
      return ": no token configured";
    }
    return Jwt.problem(token, java.time.Instant.now())
        .map(p -> ": " + p)
        .orElse(": check the token and that it was minted for this cluster's jwt key");
  }

  static String abbreviate(String text) {
    if (text == null || text.isBlank()) {
      return "(empty body)";
    }
    String t = text.strip().replaceAll("\\s+", " ");
    return t.length() <= 200 ? t : t.substring(0, 200) + "…";
  }
}

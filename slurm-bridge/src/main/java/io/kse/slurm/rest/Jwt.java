package io.kse.slurm.rest;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.time.Instant;
import java.util.Base64;
import java.util.Optional;

/**
 * Reads the claims Slurm puts in its JWTs ({@code exp}, {@code sun}) without verifying the
 * signature: only slurmctld can do that. Used to name the problem when a token is refused.
 */
public final class Jwt {
  private static final ObjectMapper JSON = new ObjectMapper();

  private Jwt() {}

  /** The claims, or empty when the text is not a JWT. */
  static Optional<JsonNode> claims(String token) {
    String[] parts = token.split("\\.");
    if (parts.length != 3) {
      return Optional.empty();
    }
    try {
      return Optional.of(JSON.readTree(Base64.getUrlDecoder().decode(parts[1])));
    } catch (Exception e) {
      return Optional.empty();
    }
  }

  static Optional<Instant> expiry(String token) {
    return claims(token)
        .map(c -> c.get("exp"))
        .filter(JsonNode::canConvertToLong)
        .map(n -> Instant.ofEpochSecond(n.asLong()));
  }

  /** The Slurm user name the token was minted for ({@code sun} claim). */
  public static Optional<String> user(String token) {
    return claims(token).map(c -> c.get("sun")).filter(JsonNode::isTextual).map(JsonNode::asText);
  }

  /** A short diagnosis of what is wrong with the token, if anything can be seen locally. */
  static Optional<String> problem(String token, Instant now) {
    if (claims(token).isEmpty()) {
      return Optional.of("the token is not a JWT (expected three base64url parts)");
    }
    return expiry(token)
        .filter(exp -> !exp.isAfter(now))
        .map(exp -> "the token expired at " + exp + " (mint a new one with `scontrol token`)");
  }
}

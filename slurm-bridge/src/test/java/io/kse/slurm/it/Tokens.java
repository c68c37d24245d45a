package io.kse.slurm.it;

import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.time.Instant;
import java.util.Base64;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/** JWTs shaped like Slurm's, signed with a random key slurmctld does not know. */
final class Tokens {
  private Tokens() {}

  static String forged(String user) throws Exception {
    Base64.Encoder b64 = Base64.getUrlEncoder().withoutPadding();
    String header =
        b64.encodeToString("{\"alg\":\"HS256\",\"typ\":\"JWT\"}".getBytes(StandardCharsets.UTF_8));
    long now = Instant.now().getEpochSecond();
    String payload =
        b64.encodeToString(
            ("{\"exp\":" + (now + 3600) + ",\"iat\":" + now + ",\"sun\":\"" + user + "\"}")
                .getBytes(StandardCharsets.UTF_8));
    byte[] key = new byte[32];
    new SecureRandom().nextBytes(key);
    Mac mac = Mac.getInstance("HmacSHA256");
    mac.init(new SecretKeySpec(key, "HmacSHA256"));
    String sig =
        b64.encodeToString(mac.doFinal((header + "." + payload).getBytes(StandardCharsets.UTF_8)));
    return header + "." + payload + "." + sig;
  }
}

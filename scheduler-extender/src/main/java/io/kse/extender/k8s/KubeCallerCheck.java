package io.kse.extender.k8s;

import io.fabric8.kubernetes.api.model.authentication.TokenReview;
import io.fabric8.kubernetes.api.model.authentication.TokenReviewBuilder;
import io.fabric8.kubernetes.api.model.authentication.UserInfo;
import io.fabric8.kubernetes.api.model.authorization.v1.SubjectAccessReview;
import io.fabric8.kubernetes.api.model.authorization.v1.SubjectAccessReviewBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link CallerCheck} as the API server answers it: a TokenReview says who the token is, a
 * SubjectAccessReview whether they may get pods in the namespace. Answers are kept briefly (by a
 * hash of the token, never the token), so a dashboard polling explain costs no API call per view.
 */
public final class KubeCallerCheck implements CallerCheck {
  private static final Logger LOG = LoggerFactory.getLogger(KubeCallerCheck.class);
  static final Duration REMEMBER = Duration.ofSeconds(10);
  static final int MAX_REMEMBERED = 10_000;

  private record Remembered(Verdict verdict, Instant until) {}

  private final KubernetesClient client;
  private final Clock clock;
  private final Map<String, Remembered> recent = new ConcurrentHashMap<>();

  public KubeCallerCheck(KubernetesClient client, Clock clock) {
    this.client = client;
    this.clock = clock;
  }

  @Override
  public Verdict mayReadPods(String bearerToken, String namespace) {
    if (bearerToken == null || bearerToken.isBlank()) {
      return Verdict.UNAUTHENTICATED;
    }
    String key = sha256(bearerToken) + "/" + namespace;
    Instant now = clock.instant();
    Remembered r = recent.get(key);
    if (r != null && now.isBefore(r.until())) {
      return r.verdict();
    }
    Verdict v = ask(bearerToken, namespace);
    if (recent.size() > MAX_REMEMBERED) {
      recent.clear();
    }
    recent.put(key, new Remembered(v, now.plus(REMEMBER)));
    return v;
  }

  private Verdict ask(String token, String namespace) {
    try {
      TokenReview review =
          client
              .authentication()
              .v1()
              .tokenReviews()
              .create(new TokenReviewBuilder().withNewSpec().withToken(token).endSpec().build());
      if (review.getStatus() == null
          || !Boolean.TRUE.equals(review.getStatus().getAuthenticated())) {
        return Verdict.UNAUTHENTICATED;
      }
      UserInfo user = review.getStatus().getUser();
      SubjectAccessReview access =
          client
              .authorization()
              .v1()
              .subjectAccessReview()
              .create(
                  new SubjectAccessReviewBuilder()
                      .withNewSpec()
                      .withUser(user.getUsername())
                      .withUid(user.getUid())
                      .withGroups(user.getGroups() == null ? List.of() : user.getGroups())
                      .withExtra(user.getExtra())
                      .withNewResourceAttributes()
                      .withNamespace(namespace)
                      .withVerb("get")
                      .withResource("pods")
                      .endResourceAttributes()
                      .endSpec()
                      .build());
      boolean allowed =
          access.getStatus() != null && Boolean.TRUE.equals(access.getStatus().getAllowed());
      return allowed ? Verdict.ALLOWED : Verdict.FORBIDDEN;
    } catch (KubernetesClientException e) {
      LOG.warn("caller_check_failed namespace={} error={}", namespace, e.getMessage());
      return Verdict.UNAUTHENTICATED; // cannot tell: refuse
    }
  }

  private static String sha256(String s) {
    try {
      return HexFormat.of()
          .formatHex(
              MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8)));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }
}

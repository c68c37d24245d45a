package io.kse.slurm.rest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kse.slurm.SlurmUnauthorizedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Instant;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TokenSourceTest {
  @Test
  void rereadsARotatedTokenFile(@TempDir Path dir) throws Exception {
    Path f = dir.resolve("jwt");
    Files.writeString(f, "first\n");
    TokenSource s = TokenSource.file(f);
    assertThat(s.token()).isEqualTo("first");
    Files.writeString(f, "SLURM_JWT=second-longer");
    Files.setLastModifiedTime(f, FileTime.from(Instant.now().plusSeconds(5)));
    assertThat(s.token()).isEqualTo("second-longer");
  }

  @Test
  void aMissingOrEmptyFileIsUnauthorizedNamingTheFile(@TempDir Path dir) throws Exception {
    assertThatThrownBy(() -> TokenSource.file(dir.resolve("nope")).token())
        .isInstanceOf(SlurmUnauthorizedException.class)
        .hasMessageContaining("nope");
    Path empty = Files.writeString(dir.resolve("empty"), " \n");
    assertThatThrownBy(() -> TokenSource.file(empty).token())
        .isInstanceOf(SlurmUnauthorizedException.class)
        .hasMessageContaining("is empty");
  }

  @Test
  void readsSlurmClaimsWithoutVerifying() {
    String t = SlurmErrorsTest.jwt(2_000_000_000L);
    assertThat(Jwt.user(t)).contains("kse");
    assertThat(Jwt.expiry(t)).contains(Instant.ofEpochSecond(2_000_000_000L));
    assertThat(Jwt.problem(t, Instant.ofEpochSecond(1))).isEmpty();
    assertThat(Jwt.problem(t, Instant.ofEpochSecond(2_000_000_001L)))
        .get()
        .asString()
        .contains("expired");
  }

  @Test
  void theExpiryFollowsARotatedFileAndIsEmptyWhenItCannotBeKnown(@TempDir Path dir)
      throws Exception {
    Path f = dir.resolve("jwt");
    Files.writeString(f, SlurmErrorsTest.jwt(2_000_000_000L));
    TokenSource s = TokenSource.file(f);
    assertThat(s.expiry()).contains(Instant.ofEpochSecond(2_000_000_000L));
    Files.writeString(f, "SLURM_JWT=" + SlurmErrorsTest.jwt(2_000_086_400L));
    Files.setLastModifiedTime(f, FileTime.from(Instant.now().plusSeconds(5)));
    assertThat(s.expiry()).contains(Instant.ofEpochSecond(2_000_086_400L));
    Files.writeString(f, "not-a-jwt");
    Files.setLastModifiedTime(f, FileTime.from(Instant.now().plusSeconds(10)));
    assertThat(s.expiry()).as("not a JWT").isEmpty();
    Files.delete(f);
    assertThat(s.expiry()).as("the file gone: unknown, not an exception").isEmpty();
  }
}

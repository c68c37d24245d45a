package io.kse.slurm.rest;

import io.kse.slurm.SlurmUnauthorizedException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Instant;
import java.util.Optional;

/** Where the slurmrestd JWT comes from. */
public interface TokenSource {

  /** The current token; throws {@link SlurmUnauthorizedException} when none can be read. */
  String token();

  /**
   * When the current token expires (its {@code exp} claim); empty when it has none, is not a JWT or
   * cannot be read. A file is looked at again, so a rotated token's expiry shows at once.
   */
  default Optional<Instant> expiry() {
    try {
      return Jwt.expiry(token());
    } catch (RuntimeException e) {
      return Optional.empty();
    }
  }

  static TokenSource of(String token) {
    String t = token.trim();
    return () -> t;
  }

  /**
   * A token file (e.g. a mounted Secret), re-read whenever its modification time or size changes,
   * so a rotated token is used without a restart.
   */
  static TokenSource file(Path path) {
    return new FileTokenSource(path);
  }

  final class FileTokenSource implements TokenSource {
    private final Path path;
    private FileTime seenTime;
    private long seenSize = -1;
    private String token;

    FileTokenSource(Path path) {
      this.path = path;
    }

    @Override
    public synchronized String token() {
      try {
        FileTime time = Files.getLastModifiedTime(path);
        long size = Files.size(path);
        if (token == null || !time.equals(seenTime) || size != seenSize) {
          String read = Files.readString(path, StandardCharsets.UTF_8).trim();
          if (read.startsWith("SLURM_JWT=")) { // the output of `scontrol token` works as is
            read = read.substring("SLURM_JWT=".length());
          }
          if (read.isEmpty()) {
            throw new SlurmUnauthorizedException("JWT file " + path + " is empty");
          }
          token = read;
          seenTime = time;
          seenSize = size;
        }
        return token;
      } catch (IOException e) {
        throw new SlurmUnauthorizedException("cannot read JWT file " + path + ": " + e, e);
      }
    }
  }
}

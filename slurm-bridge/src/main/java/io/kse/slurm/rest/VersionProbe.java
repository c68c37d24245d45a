package io.kse.slurm.rest;

import io.kse.slurm.ApiVersion;
import io.kse.slurm.SlurmException;
import io.kse.slurm.SlurmRejectedException;
import io.kse.slurm.SlurmUnauthorizedException;
import io.kse.slurm.SlurmUnavailableException;
import java.util.ArrayList;
import java.util.List;

/**
 * Finds the newest API version slurmrestd serves by pinging each, newest first. An unserved version
 * answers 404 without Slurm errors; a refused token or an unreachable server stops the search at
 * once, since no other version would fare better.
 */
public final class VersionProbe {
  private VersionProbe() {}

  public static ApiVersion discover(SlurmHttp http) {
    List<String> tried = new ArrayList<>();
    for (ApiVersion v : ApiVersion.newestFirst()) {
      try {
        new RestSlurmClient(http, v).ping();
        return v;
      } catch (SlurmUnauthorizedException | SlurmUnavailableException e) {
        throw e;
      } catch (SlurmException e) {
        tried.add(v.id() + ": " + e.getMessage());
      }
    }
    throw new SlurmRejectedException(
        "slurmrestd at " + http.base() + " serves none of the supported API versions: " + tried);
  }
}

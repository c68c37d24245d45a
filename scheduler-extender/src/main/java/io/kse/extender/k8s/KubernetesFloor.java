package io.kse.extender.k8s;

import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The oldest Kubernetes this project is tested on and installs for (docs/install.md): 1.36, where
 * the scheduling gate's and the share claims' MutatingAdmissionPolicies are GA and DRA's consumable
 * capacity is on by default. Older clusters are told at start, by name, what will not work.
 */
public final class KubernetesFloor {
  public static final int MAJOR = 1;
  public static final int MINOR = 36;
  private static final Pattern VERSION = Pattern.compile("^v?(\\d+)\\.(\\d+)");

  private KubernetesFloor() {}

  /**
   * Why the API server's {@code gitVersion} (e.g. {@code v1.35.4-gke.100}) is below the floor;
   * empty when it is not, or when the version cannot be read (nothing is claimed then).
   */
  public static Optional<String> below(String gitVersion) {
    Matcher m = VERSION.matcher(gitVersion == null ? "" : gitVersion.trim());
    if (!m.find()) {
      return Optional.empty();
    }
    int major = Integer.parseInt(m.group(1));
    int minor = Integer.parseInt(m.group(2));
    if (major > MAJOR || (major == MAJOR && minor >= MINOR)) {
      return Optional.empty();
    }
    return Optional.of(
        "Kubernetes "
            + gitVersion.trim()
            + " is older than "
            + MAJOR
            + "."
            + MINOR
            + ", the oldest this extender is tested on: the MutatingAdmissionPolicies of"
            + " manifests/base (scheduling gate, share claims) are not served there, so pods bind"
            + " later and cannot ask shares of a GPU by annotation; DRA shares need consumable"
            + " capacity (on by default from 1.36)");
  }
}

package io.kse.slurm;

import java.util.Optional;

/**
 * Which placeholder jobs are ours to act on. A job's comment says whom it claims to stand for, and
 * every Slurm user can read every comment ({@code squeue -o %k}) and submit a job with a copy: a
 * job is ours only if it carries our tag, names this Kubernetes cluster (or, in the older form, no
 * cluster), and was submitted by the Slurm user the extender submits as. A job that carries our tag
 * under another user is an impostor: never followed, cancelled, or taken for a pod's placement.
 *
 * @param cluster this Kubernetes cluster's identity; empty: not known yet (no tag is foreign)
 * @param slurmUser the Slurm user placeholders are submitted as; empty: not known (the comment
 *     alone decides, as before this check existed)
 */
public record PlaceholderOwner(Optional<String> cluster, Optional<String> slurmUser) {
  /** Before the extender knows who it is: any tag of ours counts. */
  public static final PlaceholderOwner ANYONE =
      new PlaceholderOwner(Optional.empty(), Optional.empty());

  /** The job's tag, if the job is ours to act on. */
  public Optional<PlaceholderTag> tagOf(SlurmJob job) {
    return job.placeholder().filter(t -> !foreign(t) && submittedByUs(job));
  }

  /** Whether the job claims to stand for a pod of ours but another Slurm user submitted it. */
  public boolean impostor(SlurmJob job) {
    return !submittedByUs(job) && job.placeholder().filter(t -> !foreign(t)).isPresent();
  }

  private boolean foreign(PlaceholderTag t) {
    return cluster.isPresent() && t.foreignTo(cluster.get());
  }

  private boolean submittedByUs(SlurmJob job) {
    return slurmUser.map(job.user()::equals).orElse(true);
  }
}

package io.kse.slurm;

/** Drains and resumes Slurm nodes. slurmrestd does it from v0.0.41; for 22.05 there is scontrol. */
public interface NodeAdmin {
  void drain(String node, String reason);

  void resume(String node);

  /** Through slurmrestd. */
  static NodeAdmin rest(SlurmClient client) {
    return new NodeAdmin() {
      @Override
      public void drain(String node, String reason) {
        client.drain(node, reason);
      }

      @Override
      public void resume(String node) {
        client.resume(node);
      }
    };
  }
}

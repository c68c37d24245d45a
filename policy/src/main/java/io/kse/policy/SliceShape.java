package io.kse.policy;

/**
 * A TPU slice topology string (e.g. {@code 2x2x4}): its chips, and the hosts it spans with {@code
 * chipsPerHost} chips on each host.
 */
public record SliceShape(String topology, int[] dims) {
  private static final int MAX_CHIPS = 1 << 16;

  /** The topology, or {@link IllegalArgumentException} saying what is wrong with it. */
  public static SliceShape parse(String topology) {
    String[] parts = topology.trim().split("x", -1);
    if (parts.length < 2 || parts.length > 3) {
      throw new IllegalArgumentException(
          "\"" + topology + "\" is not a slice topology: use AxB or AxBxC, e.g. 2x2x4");
    }
    int[] dims = new int[parts.length];
    long chips = 1;
    for (int i = 0; i < parts.length; i++) {
      try {
        dims[i] = Integer.parseInt(parts[i]);
      } catch (NumberFormatException e) {
        dims[i] = 0;
      }
      if (dims[i] < 1 || !parts[i].matches("[0-9]+")) {
        throw new IllegalArgumentException(
            "\"" + topology + "\" is not a slice topology: each dimension is a whole number ≥ 1");
      }
      chips *= dims[i];
      if (chips > MAX_CHIPS) {
        throw new IllegalArgumentException(
            "\"" + topology + "\" has more than " + MAX_CHIPS + " chips");
      }
    }
    return new SliceShape(topology.trim(), dims);
  }

  public int chips() {
    int c = 1;
    for (int d : dims) {
      c *= d;
    }
    return c;
  }

  /**
   * Hosts of {@code chipsPerHost} chips the slice spans (1 for a slice smaller than a host), or
   * {@link IllegalArgumentException} when its chips do not fill whole hosts.
   */
  public int hosts(int chipsPerHost) {
    int chips = chips();
    if (chips <= chipsPerHost) {
      return 1;
    }
    if (chips % chipsPerHost != 0) {
      throw new IllegalArgumentException(
          "topology "
              + topology
              + " has "
              + chips
              + " chips, which do not fill whole hosts of "
              + chipsPerHost);
    }
    return chips / chipsPerHost;
  }

  /** Chips each host of the slice gives it. */
  public int chipsOnEachHost(int chipsPerHost) {
    return Math.min(chips(), chipsPerHost);
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof SliceShape s && s.topology.equals(topology);
  }

  @Override
  public int hashCode() {
    return topology.hashCode();
  }

  @Override
  public String toString() {
    return topology;
  }
}

package io.kse.policy;

import java.util.List;

/** A policy that must not be used; lists every problem with its path in the file. */
public final class PolicyValidationException extends RuntimeException {
  private final List<String> problems;

  public PolicyValidationException(String source, List<String> problems) {
    super("invalid policy " + source + ":\n  - " + String.join("\n  - ", problems));
    this.problems = List.copyOf(problems);
  }

  /**
   * Each problem as {@code path: message}, e.g. {@code tiers[2].mayPreempt[0]: unknown tier
   * "trainng"}.
   */
  public List<String> problems() {
    return problems;
  }
}

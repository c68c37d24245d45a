package io.kse.policy;

/** One line of a decision record: which rule set what. */
public record Contribution(String rule, String effect) {
  @Override
  public String toString() {
    return rule + " => " + effect;
  }
}

package io.kse.extender;

/** What the service says of itself: its version, and a failure in one line. */
final class BuildInfo {
  private BuildInfo() {}

  /** The jar's Implementation-Version; {@code dev} when run from classes. */
  static String version() {
    String v = BuildInfo.class.getPackage().getImplementationVersion();
    return v == null ? "dev" : v;
  }

  /** The innermost cause's message: what an operator needs in one line. */
  static String rootCause(Throwable e) {
    Throwable t = e;
    while (t.getCause() != null && t.getCause() != t) {
      t = t.getCause();
    }
    return t.getMessage() == null ? t.toString() : t.getMessage();
  }
}

package io.kse.extender.tools;

import java.io.PrintWriter;
import picocli.CommandLine;

/** Runs one of the jar's picocli commands the same way: its output, exit code 2 on bad input. */
final class Commands {
  private Commands() {}

  static int run(Object command, PrintWriter out, PrintWriter err, String... args) {
    CommandLine cl = new CommandLine(command);
    cl.setOut(out);
    cl.setErr(err);
    cl.setExitCodeExceptionMapper(e -> 2);
    int code = cl.execute(args);
    out.flush();
    err.flush();
    return code;
  }
}

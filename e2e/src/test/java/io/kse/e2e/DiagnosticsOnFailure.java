package io.kse.e2e;

import io.fabric8.kubernetes.client.utils.Serialization;
import io.kse.slurm.SlurmJob;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Collectors;
import org.junit.jupiter.api.extension.AfterTestExecutionCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * When a scenario fails, writes what both worlds looked like next to the components' own logs:
 * {@code <log dir>/scenarios/<class>.<method>/} gets the namespace's pods and events, the nodes,
 * and every Slurm job. The component logs (extender, schedulers, apiserver, Slurm daemons) are
 * already in the log dir, which the failure message names.
 */
final class DiagnosticsOnFailure implements AfterTestExecutionCallback {
  // runs after the test method and before @AfterEach deletes the namespace
  @Override
  public void afterTestExecution(ExtensionContext context) {
    if (context.getExecutionException().isEmpty()
        // a skipped scenario (an assumption not met) has nothing to diagnose
        || context.getExecutionException().get() instanceof org.opentest4j.TestAbortedException
        || !(context.getRequiredTestInstance() instanceof Scenario s)
        || s.ns == null) {
      return;
    }
    Path out =
        s.stack
            .logDir()
            .resolve("scenarios")
            .resolve(
                context.getRequiredTestClass().getSimpleName() + "." + context.getDisplayName());
    try {
      Files.createDirectories(out);
      write(
          out.resolve("pods.yaml"),
          () -> Serialization.asYaml(s.kube.pods().inNamespace(s.ns).list()));
      write(
          out.resolve("events.txt"),
          () ->
              s.kube.v1().events().inNamespace(s.ns).list().getItems().stream()
                  .map(
                      e ->
                          e.getLastTimestamp()
                              + " "
                              + e.getInvolvedObject().getName()
                              + " "
                              + e.getReason()
                              + ": "
                              + e.getMessage())
                  .collect(Collectors.joining("\n")));
      write(out.resolve("nodes.yaml"), () -> Serialization.asYaml(s.kube.nodes().list()));
      write(
          out.resolve("slurm-jobs.txt"),
          () -> s.jobs().stream().map(SlurmJob::toString).collect(Collectors.joining("\n")));
      System.err.println(
          "[e2e] "
              + context.getDisplayName()
              + " failed; diagnostics in "
              + out
              + ", component logs in "
              + s.stack.logDir());
    } catch (IOException e) {
      System.err.println("[e2e] could not write diagnostics to " + out + ": " + e);
    }
  }

  private interface Dump {
    String get() throws Exception;
  }

  private static void write(Path file, Dump dump) throws IOException {
    String text;
    try {
      text = dump.get();
    } catch (Exception e) {
      text = "unavailable: " + e;
    }
    Files.writeString(file, text);
  }
}

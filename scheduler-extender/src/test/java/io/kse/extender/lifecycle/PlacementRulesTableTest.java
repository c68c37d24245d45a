package io.kse.extender.lifecycle;

import static org.assertj.core.api.Assertions.assertThat;

import io.kse.extender.k8s.PodRef;
import io.kse.extender.lifecycle.PlacementFacts.Member;
import io.kse.extender.lifecycle.PlacementFacts.PodStanding;
import io.kse.slurm.JobState;
import io.kse.slurm.SlurmJob;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The rules as a table: what is true now (a group's members, its job) → the steps, one row per
 * situation. Each row reads: members as {@code uid:standing@node#index*gpus}, the job as {@code
 * state[nodes]/gpusPerNode}, and the steps expected in a compact form.
 */
class PlacementRulesTableTest {
  final PlacementRules rules = new PlacementRules(n -> n);

  static Arguments row(
      String name, String job, int size, String problem, String members, String steps) {
    return Arguments.of(name, job, size, problem, members, steps);
  }

  static Stream<Arguments> table() {
    return Stream.of(
        row(
            "allocated: each member to its node",
            "RUNNING[n0,n1]/8",
            2,
            "",
            "u0:P@#0*8 u1:P@#1*8",
            "wake u0 n0; wake u1 n1"),
        row(
            "one bound, one pending",
            "RUNNING[n0,n1]/8",
            2,
            "",
            "u0:B@n0#0*8 u1:P@#1*8",
            "wake u1 n1"),
        row("all bound where the job is", "RUNNING[n0,n1]/8", 2, "", "u0:B@n0#0*8 u1:B@n1#1*8", ""),
        row(
            "bound off the job's nodes",
            "RUNNING[n0,n1]/8",
            2,
            "",
            "u0:B@n9#0*8 u1:B@n1#1*8",
            "evict u0"),
        row(
            "pending job: told why",
            "PENDING[]/8",
            2,
            "",
            "u0:P@#0*8 u1:P@#1*8",
            "wait u0 SlurmPending; wait u1 SlurmPending"),
        row("no job, group complete", "-", 2, "", "u0:P@#0*8 u1:P@#1*8", "submit"),
        row("no job, a member missing, not overdue", "-", 2, "", "u0:P@#0*8", ""),
        row(
            "job ended: the bound member goes, the pending one gets a new job",
            "COMPLETED[n0,n1]/8",
            2,
            "",
            "u0:B@n0#0*8 u1:P@#1*8",
            "evict u0; submit"),
        row("nobody needs the job", "RUNNING[n0,n1]/8", 2, "", "u0:A@#0*8 u1:A@#1*8", "cancel 7"),
        row(
            "size grew, nothing runs: replaced",
            "RUNNING[n0,n1]/8",
            3,
            "",
            "u0:P@#0*8 u1:P@#1*8 u2:P@#2*8",
            "replace 7 PlacementShapeChanged"),
        row(
            "size grew while one runs: the rest wait or go",
            "RUNNING[n0,n1]/8",
            3,
            "",
            "u0:B@n0#0*8 u1:P@#1*8 u2:P@#2*8",
            "wake u1 n1; wait u2 ShapeChanged"),
        row(
            "size shrank while pending: replaced",
            "PENDING[]/8",
            1,
            "",
            "u0:P@#0*8",
            "replace 7 PlacementShapeChanged"),
        row(
            "a member asks more GPUs, nothing runs",
            "RUNNING[n0,n1]/8",
            2,
            "",
            "u0:P@#0*8 u1:P@#1*16",
            "replace 7 PlacementShapeChanged"),
        row(
            "a member asks more GPUs while one runs",
            "RUNNING[n0,n1]/8",
            2,
            "",
            "u0:B@n0#0*8 u1:P@#1*16",
            "wait u1 ShapeChanged"),
        row(
            "made invalid while pending: cancelled",
            "PENDING[]/8",
            2,
            "sizes disagree",
            "u0:P@#0*8 u1:P@#1*8",
            "cancel 7; wait u0 GroupInvalid; wait u1 GroupInvalid"),
        row(
            "made invalid while one runs: kept",
            "RUNNING[n0,n1]/8",
            2,
            "sizes disagree",
            "u0:B@n0#0*8 u1:P@#1*8",
            "wait u1 GroupInvalid"),
        row(
            "a recreated member waits for the one leaving its node",
            "RUNNING[n0,n1]/8",
            2,
            "",
            "u0:B@n0#0*8 u1:T@n1#1*8 u9:P@#1*8",
            ""),
        row(
            "an unknown GPU count fits",
            "RUNNING[n0,n1]/0",
            2,
            "",
            "u0:P@#0*8 u1:P@#1*8",
            "wake u0 n0; wake u1 n1"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("table")
  void factsToSteps(
      String name, String job, int size, String problem, String members, String steps) {
    assertThat(render(rules.decide(facts(job, size, problem, members)))).isEqualTo(steps);
  }

  static PlacementFacts facts(String job, int size, String problem, String members) {
    List<Member> ms = new ArrayList<>();
    for (String m : members.split(" ")) {
      // uid:standing@node#index*gpus
      String uid = m.substring(0, m.indexOf(':'));
      char s = m.charAt(m.indexOf(':') + 1);
      String node = m.substring(m.indexOf('@') + 1, m.indexOf('#'));
      int index = Integer.parseInt(m.substring(m.indexOf('#') + 1, m.indexOf('*')));
      long gpus = Long.parseLong(m.substring(m.indexOf('*') + 1));
      PodStanding standing =
          switch (s) {
            case 'P' -> PodStanding.PENDING;
            case 'B' -> PodStanding.BOUND;
            case 'T' -> PodStanding.TERMINATING;
            case 'A' -> PodStanding.ABSENT;
            default -> throw new IllegalArgumentException(m);
          };
      ms.add(
          new Member(new PodRef("serving", uid, uid), standing, node, index, false, false, gpus));
    }
    Placement.Group group =
        new Placement.Group(
            "serving",
            "kse/g",
            "kse.io/group=g",
            false,
            Optional.empty(),
            problem.isEmpty() ? Optional.empty() : Optional.of(problem));
    return new PlacementFacts(
        ms,
        size,
        Optional.of(group),
        false,
        job.equals("-") ? Optional.empty() : Optional.of(job(job)),
        Optional.empty(),
        Optional.empty(),
        Optional.empty(),
        false,
        List.of(),
        java.util.Map.of(),
        java.util.OptionalLong.empty());
  }

  /** {@code STATE[n0,n1]/gpusPerNode}. */
  static SlurmJob job(String spec) {
    JobState state = JobState.valueOf(spec.substring(0, spec.indexOf('[')));
    String nodes = spec.substring(spec.indexOf('[') + 1, spec.indexOf(']'));
    int gpus = Integer.parseInt(spec.substring(spec.indexOf('/') + 1));
    List<String> on = nodes.isEmpty() ? List.of() : List.of(nodes.split(","));
    return new SlurmJob(
        7,
        "kse-serving-g",
        "",
        state,
        state == JobState.PENDING ? "Resources" : "None",
        "inference",
        "",
        on,
        state == JobState.PENDING ? 2 : on.size(),
        Instant.EPOCH,
        Optional.of(Instant.EPOCH),
        state.isFinal() ? Optional.of(Instant.EPOCH) : Optional.empty(),
        0,
        gpus == 0 ? "" : "gres:gpu:h100:" + gpus,
        "",
        1,
        Instant.EPOCH);
  }

  static String render(List<Step> steps) {
    return steps.stream()
        .map(
            s -> {
              if (s instanceof Step.Wake w) {
                return "wake " + w.member().uid() + " " + w.node();
              } else if (s instanceof Step.Waiting w) {
                return "wait " + w.member().uid() + " " + w.reason().reason();
              } else if (s instanceof Step.Submit) {
                return "submit";
              } else if (s instanceof Step.Cancel c) {
                return "cancel " + c.jobId();
              } else if (s instanceof Step.Replace r) {
                return "replace " + r.jobId() + " " + r.reason().reason();
              } else if (s instanceof Step.Evict e) {
                return "evict " + e.member().uid();
              } else if (s instanceof Step.HeldForTerminating h) {
                return "held " + h.member().uid();
              }
              return s.getClass().getSimpleName().toLowerCase();
            })
        .collect(Collectors.joining("; "));
  }
}

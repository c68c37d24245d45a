package io.kse.policy.cli.replay;

import com.fasterxml.jackson.databind.JsonNode;
import io.kse.policy.PodFacts;
import io.kse.policy.PodManifest;
import io.kse.policy.WellKnown;
import io.kse.policy.model.Policy;
import io.kse.policy.replay.Trace;
import io.kse.slurm.JobState;
import io.kse.slurm.PlaceholderTag;
import io.kse.slurm.SlurmJob;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * A trace from what a cluster kept ({@code kse-policy record}): slurmrestd job listings (several,
 * taken during the period, merge by job id, the later listing winning: slurmctld forgets a finished
 * job after MinJobAge) and, for the pods' labels and priority class, the API server's pod listing.
 * Our placeholders are the inference arrivals (arrival: the placeholder's submission; lifetime:
 * until it ended, or the period's end); every other job is other users' work (its runtime: from its
 * start to its end, or the period's end). Pure: tested on hand-made listings.
 */
public final class TraceRecorder {
  private TraceRecorder() {}

  /** The trace, and what it could not know, for the user to read. */
  public record Recorded(Trace trace, List<String> notes) {}

  /**
   * @param jobs the listings' jobs, in listing order
   * @param pods the API server's pods (items of {@code kubectl get pods -A -o json}), any age
   * @param policy the policy in force during the period: names the tier of a placeholder whose pod
   *     is gone (from its partition and QoS)
   */
  public static Recorded record(
      List<SlurmJob> jobs,
      List<JsonNode> pods,
      Optional<Policy> policy,
      Optional<Instant> from,
      Optional<Instant> to) {
    Map<Long, SlurmJob> byId = new LinkedHashMap<>();
    jobs.forEach(j -> byId.put(j.id(), j));
    Map<String, JsonNode> podByUid = new HashMap<>();
    for (JsonNode p : pods) {
      podByUid.put(p.path("metadata").path("uid").asText(""), p);
    }
    Instant start =
        from.orElseGet(
            () ->
                byId.values().stream()
                    .map(SlurmJob::submitTime)
                    .filter(t -> t.isAfter(Instant.EPOCH))
                    .min(Instant::compareTo)
                    .orElse(Instant.EPOCH));
    Instant end =
        to.orElseGet(
            () ->
                byId.values().stream()
                    .flatMap(
                        j ->
                            List.of(Optional.of(j.submitTime()), j.startTime(), j.endTime())
                                .stream())
                    .flatMap(Optional::stream)
                    .max(Instant::compareTo)
                    .orElse(start)
                    .plusSeconds(1));
    List<Trace.Inference> inference = new ArrayList<>();
    List<Trace.SlurmJob> other = new ArrayList<>();
    int podGone = 0;
    int neverStarted = 0;
    int outside = 0;
    Map<String, Integer> seen = new HashMap<>();
    for (SlurmJob j : byId.values()) {
      if (j.submitTime().isBefore(start) || !j.submitTime().isBefore(end)) {
        outside++;
        continue;
      }
      Duration at = Duration.between(start, j.submitTime());
      Instant stop = j.endTime().filter(e -> e.isBefore(end)).orElse(end);
      Optional<PlaceholderTag> tag = PlaceholderTag.fromComment(j.comment());
      if (tag.isPresent()) {
        PlaceholderTag t = tag.get();
        String name = t.group().orElse(t.name());
        String id = unique(t.namespace() + "/" + name, seen);
        JsonNode pod = podByUid.get(t.uid());
        Map<String, String> labels = Map.of();
        Map<String, String> annotations = Map.of();
        Optional<String> priorityClass = Optional.empty();
        if (pod != null) {
          PodFacts f = PodManifest.facts(pod);
          labels = f.labels();
          annotations = f.annotations();
          priorityClass = f.priorityClassName();
        } else {
          podGone++;
          Optional<String> tier =
              policy.flatMap(p -> p.tierOfSlurmJob(j.partition(), j.qos())).map(x -> x.name());
          if (tier.isPresent()) {
            annotations = Map.of(WellKnown.TIER, tier.get());
          }
        }
        inference.add(
            new Trace.Inference(
                at,
                id,
                t.namespace(),
                labels,
                annotations,
                priorityClass,
                j.gpusPerNode(),
                Math.max(1, t.size()),
                positive(Duration.between(j.submitTime(), stop))));
      } else {
        Duration runtime;
        if (j.startTime().isPresent() && j.startTime().get().isAfter(Instant.EPOCH)) {
          runtime = Duration.between(j.startTime().get(), stop);
        } else {
          neverStarted++;
          runtime = Duration.between(j.submitTime(), end);
        }
        other.add(
            new Trace.SlurmJob(
                at,
                unique(Long.toString(j.id()), seen),
                j.user().isEmpty() ? "unknown" : j.user(),
                "unknown",
                j.partition(),
                j.qos().isEmpty() ? Optional.empty() : Optional.of(j.qos()),
                Math.max(1, j.nodeCount()),
                j.gpusPerNode(),
                positive(runtime),
                j.state() != JobState.CANCELLED));
      }
    }
    List<String> notes = new ArrayList<>();
    if (podGone > 0) {
      notes.add(
          podGone
              + " placeholder(s) outlived their pod's listing: no labels or priority class;"
              + " their tier is the one Slurm recorded, as annotation "
              + WellKnown.TIER
              + " (a candidate policy keeps it only where its overrides allow the tier key)."
              + " List pods more often to keep their facts");
    }
    if (neverStarted > 0) {
      notes.add(
          neverStarted
              + " other job(s) never started in the period: their runtime is recorded as the rest"
              + " of the period (Slurm's listing has no runtime of its own for them)");
    }
    if (outside > 0) {
      notes.add(outside + " job(s) submitted outside the period were left out");
    }
    notes.add(
        "accounts are not in slurmrestd's job listing and are recorded as 'unknown'; jobs"
            + " cancelled by their users are recorded as not requeued");
    return new Recorded(
        new Trace(
            new Trace.Header(
                Trace.VERSION, start, Duration.between(start, end), "recorded", Optional.empty()),
            inference,
            other),
        notes);
  }

  /** A trace's ids are unique: a name reused (a pod recreated) gets {@code #2}, {@code #3}… */
  private static String unique(String id, Map<String, Integer> seen) {
    int n = seen.merge(id, 1, Integer::sum);
    return n == 1 ? id : id + "#" + n;
  }

  private static Duration positive(Duration d) {
    return d.compareTo(Duration.ofSeconds(1)) < 0 ? Duration.ofSeconds(1) : d;
  }
}

package io.kse.slurm.rest;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.kse.slurm.SlurmJob;
import io.kse.slurm.testing.Fixtures;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * A job listing read with only {@link SlurmJson#JOB_FIELDS} kept must give the very jobs the whole
 * answer gives, in every recorded version (issue 16: the listing is read pruned).
 */
class PrunedJobListingTest {

  @ParameterizedTest
  @CsvSource({
    "v0.0.38, jobs-running.json",
    "v0.0.38, job-running.json",
    "v0.0.38, job-held.json",
    "v0.0.41, jobs.json",
    "v0.0.41, job-running.json",
    "v0.0.42, jobs.json",
    "v0.0.43, jobs.json",
    "v0.0.44, jobs.json",
    "v0.0.45, jobs.json",
    "v0.0.45, job-running.json"
  })
  void aPrunedListingGivesTheSameJobsAsTheWholeOne(String version, String file) {
    byte[] body = Fixtures.text(version, file).getBytes(StandardCharsets.UTF_8);
    JsonNode whole = SlurmHttp.parse(body, null);
    JsonNode pruned = SlurmHttp.parsePruned(body, "jobs", SlurmJson.JOB_FIELDS);

    assertThat(jobs(pruned)).isNotEmpty().isEqualTo(jobs(whole));
    assertThat(pruned.path("jobs").get(0).size())
        .as("fields kept per job (the v0.0.4x fixtures hold only what is read)")
        .isLessThanOrEqualTo(SlurmJson.JOB_FIELDS.size())
        .isLessThanOrEqualTo(whole.path("jobs").get(0).size());
    for (String top : iterable(whole.fieldNames())) { // meta, errors, warnings, last_update
      if (!top.equals("jobs")) {
        assertThat(pruned.get(top)).as(top).isEqualTo(whole.get(top));
      }
    }
  }

  @ParameterizedTest
  @CsvSource({"v0.0.38, jobs-running.json", "v0.0.45, jobs.json"})
  void everyKeptFieldIsReadBySomeVersion(String version, String file) {
    // a field dropped from the list must change what some recorded listing gives: the list holds
    // no field the parser does not read (checked over both ends of the supported versions)
    byte[] body = Fixtures.text(version, file).getBytes(StandardCharsets.UTF_8);
    List<SlurmJob> all = jobs(SlurmHttp.parsePruned(body, "jobs", SlurmJson.JOB_FIELDS));
    Set<String> unused = new HashSet<>();
    for (String field : SlurmJson.JOB_FIELDS) {
      Set<String> fewer = new HashSet<>(SlurmJson.JOB_FIELDS);
      fewer.remove(field);
      if (jobs(SlurmHttp.parsePruned(body, "jobs", fewer)).equals(all)) {
        unused.add(field);
      }
    }
    assertThat(unused)
        .as("fields that change nothing in this recording")
        // time_limit: read by 22.05's recording (the v0.0.45 fixture predates reading it)
        .isSubsetOf(
            "preempt_time",
            "end_time",
            "restart_cnt",
            "gres_detail",
            "features",
            "qos",
            "time_limit");
  }

  private static List<SlurmJob> jobs(JsonNode listing) {
    List<SlurmJob> out = new ArrayList<>();
    listing.path("jobs").forEach(j -> out.add(SlurmJson.job(j)));
    return out;
  }

  private static <T> Iterable<T> iterable(java.util.Iterator<T> it) {
    return () -> it;
  }
}

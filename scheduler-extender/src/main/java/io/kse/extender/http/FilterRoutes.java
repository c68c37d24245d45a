package io.kse.extender.http;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import io.kse.extender.filter.FilterService;
import io.kse.extender.filter.FilterVerdict;
import io.kse.extender.log.Untrusted;
import io.kse.extender.wire.FilterRequest;
import io.kse.extender.wire.FilterResponse;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BooleanSupplier;
import java.util.function.IntSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * filter and prioritize: decided from memory by {@link FilterService}, so Slurm's allocation is the
 * only node that passes.
 */
final class FilterRoutes {
  private static final Logger LOG = LoggerFactory.getLogger(FilterRoutes.class);
  private static final ObjectMapper JSON = new ObjectMapper();

  static final String NOT_SYNCED =
      "kse: starting up, the Slurm job cache or the pod informer is not synced yet; retry";

  /** Deleted pods never say goodbye here; forgetting everything now and then bounds the map. */
  static final int MAX_REMEMBERED_VERDICTS = 50_000;

  private final FilterService filter;
  private final BooleanSupplier synced;
  private final IntSupplier maxNodeNames;

  /** Last reason logged per pod UID, so a retried filter call logs only when its answer changes. */
  private final Map<String, String> lastVerdict = new ConcurrentHashMap<>();

  FilterRoutes(FilterService filter, BooleanSupplier synced, IntSupplier maxNodeNames) {
    this.filter = filter;
    this.synced = synced;
    this.maxNodeNames = maxNodeNames;
  }

  VerbRunner.Answer filter(byte[] body) {
    FilterRequest req = FilterRequest.parse(body, maxNodeNames.getAsInt());
    if (!synced.getAsBoolean()) {
      // an answer from half a picture would park the pod as unschedulable: ask for a retry
      return new VerbRunner.Answer(FilterResponse.error(NOT_SYNCED), "not_synced");
    }
    FilterVerdict v = filter.filter(req);
    byte[] out =
        v.code().retry()
            ? FilterResponse.error(v.reason())
            : FilterResponse.write(req, v.passing(), v.reason(), false);
    // one INFO line per decision change, not per retried call
    if (lastVerdict.size() > MAX_REMEMBERED_VERDICTS) {
      lastVerdict.clear(); // at worst one extra log line per pod
    }
    if (!v.reason().equals(lastVerdict.put(req.pod().uid(), v.reason()))) {
      LOG.info(
          "filter pod={} uid={} verdict={} candidates={} passing={} reason=\"{}\"",
          Untrusted.text(req.pod().toString()),
          Untrusted.text(req.pod().uid()),
          v.code().tag(),
          req.nodeNames().size(), // 1 when kube-scheduler tried the nominated node alone
          v.passing(),
          Untrusted.text(v.reason()));
    }
    return new VerbRunner.Answer(out, v.code().tag());
  }

  VerbRunner.Answer prioritize(byte[] body) {
    FilterRequest req = FilterRequest.parse(body, maxNodeNames.getAsInt());
    FilterVerdict v = filter.filter(req);
    ArrayNode out = JSON.createArrayNode();
    for (String n : req.nodeNames()) {
      out.addObject().put("Host", n).put("Score", v.passing().contains(n) ? 10 : 0);
    }
    return new VerbRunner.Answer(Responses.utf8(out.toString()), v.code().tag());
  }
}

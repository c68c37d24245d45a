package io.kse.extender.k8s;

import static org.assertj.core.api.Assertions.assertThat;

import io.kse.policy.PreemptionLedger.Charge;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The saved charges' text: read back as written; a bad entry (an edited ConfigMap) is skipped. */
class ConfigMapLedgerStoreTest {
  static final Instant AT = Instant.parse("2026-11-26T12:00:00Z");

  @Test
  void chargesRoundTrip() {
    List<Charge> charges =
        List.of(new Charge("inference", 16, 2, AT, 41, 3), new Charge("serving", 8, 1, AT, 0, 0));
    assertThat(ConfigMapLedgerStore.parse(ConfigMapLedgerStore.render(charges), "ns/cm"))
        .isEqualTo(charges);
  }

  @Test
  void anEntryThatCannotBeReadIsSkippedAndTheRestKept() {
    String text =
        """
        [ {"tier": "inference", "gpus": 8, "nodes": 1, "at": "2026-11-26T12:00:00Z", "victimJob": 7},
          {"tier": "inference", "gpus": 8, "nodes": 1, "at": "yesterday", "victimJob": 8},
          {"gpus": 8, "at": "2026-11-26T12:00:00Z"},
          {"tier": "x\\ny", "gpus": -1, "at": "2026-11-26T12:00:00Z"} ]
        """;
    assertThat(ConfigMapLedgerStore.parse(text, "ns/cm"))
        .containsExactly(new Charge("inference", 8, 1, AT, 7));
    assertThat(ConfigMapLedgerStore.parse("{not json", "ns/cm")).isEmpty();
    assertThat(ConfigMapLedgerStore.parse("{\"a\": 1}", "ns/cm")).isEmpty();
  }
}

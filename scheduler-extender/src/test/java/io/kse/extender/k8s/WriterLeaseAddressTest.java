package io.kse.extender.k8s;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class WriterLeaseAddressTest {
  @Test
  void theWritersAddressIsWhatFollowsTheLastAt() {
    assertThat(WriterLease.addressIn("kse-scheduler-0@10.1.2.3:8889")).contains("10.1.2.3:8889");
    assertThat(WriterLease.addressIn("kse-scheduler-0@[fd00::7]:8889")).contains("[fd00::7]:8889");
    assertThat(WriterLease.addressIn("kse-scheduler-0")).as("advertises none").isEmpty();
    assertThat(WriterLease.addressIn("kse-scheduler-0@")).isEmpty();
    assertThat(WriterLease.addressIn(null)).as("no writer known").isEmpty();
  }
}

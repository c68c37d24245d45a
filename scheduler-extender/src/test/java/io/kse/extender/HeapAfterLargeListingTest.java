package io.kse.extender;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class HeapAfterLargeListingTest {
  private final AtomicInteger collections = new AtomicInteger();
  private final HeapAfterLargeListing heap =
      new HeapAfterLargeListing(collections::incrementAndGet);

  @Test
  void aListingOfALargeTableIsFollowedByOneCollection() {
    heap.accept(50_000);
    assertThat(collections).hasValue(1);
    heap.accept(HeapAfterLargeListing.LARGE_TABLE);
    assertThat(collections).as("each large listing, once").hasValue(2);
  }

  @Test
  void aSmallTableLeavesTheHeapToOrdinaryCollections() {
    heap.accept(0);
    heap.accept(HeapAfterLargeListing.LARGE_TABLE - 1);
    assertThat(collections).hasValue(0);
  }
}

package io.kse.slurm;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The gres_detail forms of Slurm shards, each as seen live (2026-11-28, 4 shards per GPU). */
class GpuShardsTest {
  @Test
  void countsPerGpuAsSlurm2411And2605WriteThem() {
    GpuShards s = GpuShards.parse("shard:2(2/4,0/4,0/4,0/4,0/4,0/4,0/4,0/4)").orElseThrow();
    assertThat(s.byGpu()).isEqualTo(Map.of(0, 2));
    assertThat(s.perGpu()).isEqualTo(4);
    assertThat(s.gpu()).contains(0);
    assertThat(GpuShards.parse("shard:3(0/4,3/4,0/4,0/4,0/4,0/4,0/4,0/4)").orElseThrow().gpu())
        .contains(1);
  }

  @Test
  void indexesAsSlurm2205WritesThem() {
    GpuShards s = GpuShards.parse("shard:2(IDX:0)").orElseThrow();
    assertThat(s.byGpu()).isEqualTo(Map.of(0, 2));
    assertThat(s.perGpu()).isZero();
  }

  @Test
  void shardsBesideWholeGpusInOneEntry() {
    assertThat(GpuShards.parse("gpu:h100:1(IDX:7),shard:1(0/4,1/4)").orElseThrow().byGpu())
        .isEqualTo(Map.of(1, 1));
  }

  @Test
  void whatCannotBePlacedIsNothingRatherThanAGuess() {
    assertThat(GpuShards.parse("gpu:h100:6(IDX:2-7)")).isEmpty();
    assertThat(GpuShards.parse("shard:4(IDX:0-1)")).as("22.05, two GPUs, counts unknown").isEmpty();
    assertThat(GpuShards.parse("shard:2(3/2)")).isEmpty();
    assertThat(GpuShards.parse("shard:5(2/4,2/4)")).as("counts that do not add up").isEmpty();
    assertThat(GpuShards.parse(null)).isEmpty();
    assertThat(GpuShards.parse("shard:2(IDX:N/A)")).isEmpty();
  }

  /** Seeded: any spread of shards over 8 GPUs written as 24.11/26.05 do reads back the same. */
  @ParameterizedTest
  @ValueSource(longs = {1, 5, 46})
  void anyWrittenSpreadReadsBack(long seed) {
    Random r = new Random(seed);
    for (int round = 0; round < 50; round++) {
      int per = 1 + r.nextInt(16);
      int[] mine = new int[8];
      int total = 0;
      StringBuilder sb = new StringBuilder();
      for (int g = 0; g < 8; g++) {
        mine[g] = r.nextInt(4) == 0 ? r.nextInt(per + 1) : 0;
        total += mine[g];
        sb.append(g == 0 ? "" : ",").append(mine[g]).append('/').append(per);
      }
      var parsed = GpuShards.parse("shard:" + total + "(" + sb + ")");
      if (total == 0) {
        assertThat(parsed).isEmpty();
        continue;
      }
      assertThat(parsed.orElseThrow().total()).isEqualTo(total);
      for (int g = 0; g < 8; g++) {
        assertThat(parsed.get().byGpu().getOrDefault(g, 0)).isEqualTo(mine[g]);
      }
    }
  }
}

package io.kse.policy.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PolicyCliTest {
  private final StringWriter out = new StringWriter();
  private final StringWriter err = new StringWriter();

  private int run(String... args) {
    return PolicyCli.run(new PrintWriter(out), new PrintWriter(err), args);
  }

  private static String ex(String name) {
    Path p = Path.of("../policy/examples", name);
    return (Files.exists(p) ? p : Path.of("policy/examples", name)).toString();
  }

  @Test
  void validateExitsZeroForGoodFilesAndOneWithEveryProblemForBadOnes(@TempDir Path dir)
      throws Exception {
    assertThat(run("validate", ex("minimal.yaml"), ex("lab.yaml"))).isZero();
    assertThat(out.toString()).contains("minimal.yaml: valid (2 tiers, default inference)");
    assertThat(out.toString())
        .contains(
            "  tier inference: DRA claims get the GPUs Slurm allocates, part of a node allowed;"
                + " device-plugin pods get whole nodes");
    Path bad =
        Files.writeString(
            dir.resolve("bad.yaml"),
            Files.readString(Path.of(ex("minimal.yaml")))
                .replace("mayPreempt: [training]", "mayPreempt: [trainng]"));
    assertThat(run("validate", ex("minimal.yaml"), bad.toString())).isEqualTo(PolicyCli.INVALID);
    assertThat(err.toString())
        .contains(
            "bad.yaml: tiers[0].mayPreempt[0]: unknown tier \"trainng\", did you mean \"training\"?");
  }

  @Test
  void explainPrintsTheRecordTheJobAndWhatItCouldPreempt() {
    int code =
        run(
            "explain",
            "--policy",
            ex("lab.yaml"),
            "--jobs",
            ex("jobs-busy.json"),
            "--now",
            "2026-11-22T06:10:00Z",
            ex("pods/llm-nvlink.yaml"));
    assertThat(code).isZero();
    assertThat(out.toString())
        .contains("tier inference")
        .contains(
            "placeholder job: partition=inference qos=inference account=serving nodes=2 cpusPerNode=13")
        .contains("constraint=[nvl-0|nvl-1|nvl-2|nvl-3|nvl-4|nvl-5|nvl-6|nvl-7]")
        .contains("PREEMPTIBLE  job 101 pretrain-a (tier training, 32 GPUs, 4 nodes)")
        .contains(
            "protected    job 102 finetune-b (tier training, 8 GPUs, 1 nodes): protected by minimum runtime");
  }

  @Test
  void explainTakesALeaderWorkerSetAsOneGroupJob() {
    Path lws = Path.of("manifests/examples/lws-nvlink.yaml");
    if (!Files.exists(lws)) {
      lws = Path.of("../manifests/examples/lws-nvlink.yaml");
    }
    assertThat(run("explain", "--policy", ex("lab.yaml"), lws.toString())).isZero();
    assertThat(out.toString())
        .contains(
            "group lws/llm-405b/0 (LeaderWorkerSet llm-405b group 0), 2 members: tier inference")
        .contains("member 1: serving/llm-405b-0-1")
        .contains("nodes=2 cpusPerNode=12")
        .contains("gres=gpu:h100:8")
        .contains("constraint=[nvl-0|nvl-1|nvl-2|nvl-3|nvl-4|nvl-5|nvl-6|nvl-7]");
  }

  @Test
  void explainTakesSeveralPodsAsOneGroup(@TempDir Path dir) throws Exception {
    Path a =
        Files.writeString(
            dir.resolve("a.yaml"),
            "kind: Pod\nmetadata: {name: a, namespace: serving, annotations: {kse.io/group: g}}\nspec: {priorityClassName: inference, containers: [{name: c, resources: {limits: {nvidia.com/gpu: 8}}}]}\n");
    Path b =
        Files.writeString(
            dir.resolve("b.yaml"),
            "kind: Pod\nmetadata: {name: b, namespace: serving, annotations: {kse.io/group: g}}\nspec: {priorityClassName: inference-critical, containers: [{name: c, resources: {limits: {nvidia.com/gpu: 8}}}]}\n");
    assertThat(run("explain", "--policy", ex("lab.yaml"), a.toString(), b.toString()))
        .isEqualTo(PolicyCli.INVALID);
    assertThat(out.toString())
        .contains("group kse/g")
        .contains("REJECTED: the members of group kse/g disagree on their tier");
  }

  @Test
  void explainSaysWhichGpuOwnershipModeApplies(@TempDir Path dir) throws Exception {
    Path plugin =
        Files.writeString(
            dir.resolve("plugin.yaml"),
            "kind: Pod\nmetadata: {name: p, namespace: serving}\nspec: {priorityClassName:"
                + " inference, containers: [{name: c, resources: {limits: {nvidia.com/gpu: 2}}}]}\n");
    assertThat(run("explain", "--policy", ex("lab.yaml"), plugin.toString())).isZero();
    assertThat(out.toString())
        .contains("gpu ownership => whole node: the device plugin, not Slurm, picks the pod's 2")
        .contains("gres=gpu:h100:2")
        .contains(" exclusive");
    out.getBuffer().setLength(0);
    Path dra =
        Files.writeString(
            dir.resolve("dra.yaml"),
            "kind: Pod\nmetadata: {name: d, namespace: serving}\nspec: {priorityClassName:"
                + " inference, resourceClaims: [{name: gpus, resourceClaimTemplateName: four}],"
                + " containers: [{name: c, resources: {claims: [{name: gpus}]}}]}\n");
    assertThat(run("explain", "--policy", ex("lab.yaml"), "--claim-gpus", "4", dra.toString()))
        .isZero();
    assertThat(out.toString())
        .contains("gpu ownership => DRA: the extender allocates the pod's ResourceClaims")
        .contains("gres=gpu:h100:4")
        .doesNotContain(" exclusive");
    out.getBuffer().setLength(0);
    assertThat(run("explain", "--policy", ex("lab.yaml"), dra.toString())).isZero();
    assertThat(out.toString()).contains("note: the pod has ResourceClaims; give --claim-gpus N");
  }

  @Test
  void explainExitsOneForARejectedPod(@TempDir Path dir) throws Exception {
    Path pod =
        Files.writeString(
            dir.resolve("pod.yaml"),
            "kind: Pod\nmetadata: {name: x, namespace: serving,"
                + " annotations: {kse.io/qos: gold}}\nspec: {containers: []}\n");
    assertThat(run("explain", "--policy", ex("lab.yaml"), pod.toString()))
        .isEqualTo(PolicyCli.INVALID);
    assertThat(out.toString())
        .contains("REJECTED: annotation kse.io/qos is not allowed in namespace serving");
  }

  @Test
  void usageErrorsAndUnreadableFilesExitTwo() {
    assertThat(run()).isEqualTo(PolicyCli.USAGE);
    assertThat(run("explain", "--policy", ex("lab.yaml"))).isEqualTo(PolicyCli.USAGE);
    assertThat(run("render-slurm", "/no/such/file")).isEqualTo(PolicyCli.USAGE);
    assertThat(err.toString()).contains("cannot read /no/such/file");
  }

  @Test
  void aPolicyThatIsNotUtf8IsInvalidWithAClearMessage(@TempDir Path dir) throws Exception {
    // was: exit 2 with "Input length = 1"
    Path f = dir.resolve("latin1.yaml");
    Files.write(f, new byte[] {'a', ':', ' ', (byte) 0xe9, '\n'});
    assertThat(run("validate", f.toString())).isEqualTo(PolicyCli.INVALID);
    assertThat(err.toString()).contains("latin1.yaml is not UTF-8 text");
  }

  @Test
  void renderSlurmPrintsTheConfig() {
    assertThat(run("render-slurm", "--nodes", "gpu-node-[0-7]", ex("minimal.yaml"))).isZero();
    assertThat(out.toString())
        .contains(
            "PartitionName=training Nodes=gpu-node-[0-7] PriorityTier=10 PreemptMode=REQUEUE");
  }

  @Test
  void explainShowsAShareOfAGpu(@TempDir Path dir) throws Exception {
    Path pod =
        Files.writeString(
            dir.resolve("pod.yaml"),
            """
            apiVersion: v1
            kind: Pod
            metadata: {name: small, namespace: serving, labels: {kse.io/gpu-share: "true"}}
            spec:
              resourceClaims: [{name: gpu, resourceClaimTemplateName: quarter-gpu}]
              containers: [{name: s, image: x}]
            """);
    assertThat(
            run(
                "explain",
                "--policy",
                ex("shared-gpus.yaml"),
                "--claim-shares",
                "1",
                pod.toString()))
        .isZero();
    assertThat(out.toString())
        .contains("tier small-models")
        .contains("shared: 1 of a GPU's 4 shards")
        .contains("gres=shard:1");
    out.getBuffer().setLength(0);
    assertThat(
            run(
                "explain",
                "--policy",
                ex("shared-gpus.yaml"),
                "--claim-mig",
                "1g.10gb=1",
                pod.toString()))
        .isZero();
    assertThat(out.toString())
        .contains("MIG: {1g.10gb=1} as Slurm GRES [gpu:h100_1g.10gb:1]")
        .contains("gres=gpu:h100_1g.10gb:1");
  }

  @Test
  void renderSlurmPrintsATpuLayoutOrSaysWhatIsWrongWithIt() {
    assertThat(run("render-slurm", "--tpu-slices", "tpu-v5p-slice:2x2x4:1", ex("tpu.yaml")))
        .isZero();
    assertThat(out.toString())
        .contains("NodeName=tpu-host-[0-3] Gres=tpu:4 Features=tpu-v5p-2x2x4")
        .contains("BlockName=slice-0 Nodes=tpu-host-[0-3]");
    assertThat(run("render-slurm", "--tpu-slices", "tpu-v5p-slice:9x9:1", ex("tpu.yaml")))
        .isEqualTo(PolicyCli.INVALID);
    assertThat(err.toString())
        .contains("error: --tpu-slices")
        .contains("no tpu-v5p-slice topology 9x9");
  }

  @Test
  void traceSynthWritesASeededTraceThatCheckReads(@TempDir Path dir) throws Exception {
    assertThat(run("trace", "synth", "--seed", "7", "--hours", "2")).isZero();
    String first = out.toString();
    Path trace = dir.resolve("t.jsonl");
    java.nio.file.Files.writeString(trace, first);
    out.getBuffer().setLength(0);
    assertThat(run("trace", "synth", "--seed", "7", "--hours", "2")).isZero();
    assertThat(out.toString()).as("the same seed, the same trace").isEqualTo(first);
    out.getBuffer().setLength(0);
    assertThat(run("trace", "check", trace.toString())).isZero();
    assertThat(out.toString()).contains("synthetic trace of PT2H").contains("inference arrivals");

    java.nio.file.Files.writeString(trace, first + "{\"kind\":\"pod\"}\n");
    assertThat(run("trace", "check", trace.toString())).isEqualTo(PolicyCli.INVALID);
    assertThat(err.toString()).contains("kind: expected header, inference or slurm, got \"pod\"");
    assertThat(run("trace", "synth", "--hours", "-1")).isEqualTo(PolicyCli.USAGE);
  }

  @Test
  void theReplayExamplesAreValid() {
    assertThat(run("validate", ex("replay/current.yaml"), ex("replay/candidate.yaml"))).isZero();
    assertThat(out.toString())
        .contains("replay/current.yaml: valid (3 tiers, default inference)")
        .contains("replay/candidate.yaml: valid (3 tiers, default inference)");
  }
}

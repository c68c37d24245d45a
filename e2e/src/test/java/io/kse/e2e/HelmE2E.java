package io.kse.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import io.kse.slurm.testing.LocalSlurmCluster;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Issue 32: the Helm chart (charts/kube-slurm-extender). Its defaults render manifests/base object
 * for object (and with monitoring on, manifests/overlays/monitoring), {@code helm lint} passes, and
 * a real helm (helm.sh/helm/v4, built by e2e/cluster/build) installs, upgrades and uninstalls it on
 * a control plane of its own (e2e/cluster/stack --kubernetes-only: the main stack already holds
 * manifests/base's cluster-wide objects).
 */
class HelmE2E {
  static final Path DIR = Path.of(System.getProperty("java.io.tmpdir"), "kse-helm-e2e");
  static final Path REPO = E2eStack.repo();
  static final String CHART = REPO.resolve("charts/kube-slurm-extender").toString();
  static final Duration CMD = Duration.ofSeconds(180);
  static Map<String, String> env;
  static String bin;

  @BeforeAll
  static void controlPlane() {
    stack("stop", "--purge");
    String out =
        LocalSlurmCluster.run(
            List.of(
                stackScript(),
                "start",
                "--dir",
                DIR.toString(),
                "--kubernetes-only",
                "--port-offset",
                "300",
                "--nodes",
                "3",
                "--cpu-nodes",
                "0"),
            Duration.ofMinutes(10),
            Map.of());
    env = new HashMap<>();
    out.lines()
        .filter(l -> l.contains("="))
        .forEach(l -> env.put(l.substring(0, l.indexOf('=')), l.substring(l.indexOf('=') + 1)));
    bin = env.get("KSE_E2E_BIN");
  }

  @AfterAll
  static void stop() {
    stack("stop", "--purge");
  }

  /** What the defaults are rendered with: the manifests' namespace and kube-scheduler's version. */
  static final List<String> AS_THE_MANIFESTS =
      List.of("-n", "kube-slurm-extender", "--kube-version", "1.36.3");

  @Test
  void theDefaultRenderingIsManifestsBaseObjectForObject() {
    var base =
        withoutNamespace(objects(kubectl("kustomize", REPO.resolve("manifests/base").toString())));
    assertThat(base).as("manifests/base's objects").hasSizeGreaterThanOrEqualTo(20);
    assertThat(objects(template())).isEqualTo(base);
  }

  @Test
  void withMonitoringItIsTheMonitoringOverlayObjectForObject() {
    var overlay =
        withoutNamespace(
            objects(
                kubectl("kustomize", REPO.resolve("manifests/overlays/monitoring").toString())));
    assertThat(overlay)
        .containsKeys(
            "PrometheusRule kube-slurm-extender/kube-slurm-extender",
            "ServiceMonitor kube-slurm-extender/kube-slurm-extender",
            "ConfigMap kube-slurm-extender/kse-grafana-dashboard");
    assertThat(objects(template("--set", "monitoring.enabled=true"))).isEqualTo(overlay);
  }

  @Test
  void valuesChangeWhatTheyName() {
    Map<String, Map<String, Object>> out =
        objects(
            helm(
                "template",
                "kse",
                CHART,
                "-n",
                "kse-elsewhere",
                "--kube-version",
                "1.37.2+vendor.1",
                "--set",
                "replicas=3",
                "--set",
                "slurm.url=https://slurmrestd.example:6820",
                "--set",
                "verbsTls.secret=kse-verbs-tls",
                "--set",
                "allocationHint.tokenSecret=kse-hint",
                "--set",
                "image.repository=registry.example/kse",
                "--set",
                "image.tag=0.1.0-abc1234",
                "--set",
                "image.pullPolicy=Always",
                "--set",
                "imagePullSecrets[0].name=regcred",
                "--set",
                "slurm.jwtSecretKey=token",
                "--set",
                "nodeSelector.role=control",
                "--set",
                "podLabels.team=ml",
                "--set",
                "monitoring.enabled=true",
                "--set",
                "monitoring.labels.release=kps"));
    String deployment = out.get("Deployment kse-elsewhere/kse-scheduler").toString();
    assertThat(deployment)
        .contains("replicas=3")
        .contains("value=https://slurmrestd.example:6820")
        .contains("KSE_HTTP_TLS_CERT_FILE")
        .contains("secretName=kse-verbs-tls")
        .contains("KSE_ALLOCATION_HINT_TOKEN_FILE")
        .contains("secretName=kse-hint")
        .contains("image=registry.example/kse:0.1.0-abc1234")
        .as("kube-scheduler follows the cluster's version, without the vendor's suffix")
        .contains("image=registry.k8s.io/kube-scheduler:v1.37.2,")
        .contains("imagePullPolicy=Always")
        .contains("imagePullSecrets=[{name=regcred}]")
        .contains("{key=token, path=jwt}")
        .contains("nodeSelector={role=control}")
        .contains("team=ml");
    assertThat(out.get("ConfigMap kse-elsewhere/kse-scheduler-config").toString())
        .contains("urlPrefix: \"https://127.0.0.1:8888\"")
        .contains("enableHTTPS: true")
        .contains("resourceNamespace: kse-elsewhere");
    // the RoleBinding kube-scheduler needs stays in kube-system; its subject follows the namespace
    assertThat(
            out.get(
                    "RoleBinding kube-system/kse-scheduler-extension-apiserver-authentication-reader")
                .toString())
        .contains("namespace=kse-elsewhere");
    assertThat(out.get("ServiceMonitor kse-elsewhere/kube-slurm-extender").toString())
        .contains("release=kps");
    assertThat(out.get("PrometheusRule kse-elsewhere/kube-slurm-extender").toString())
        .contains("release=kps");
    assertThat(out.keySet())
        .as("the release's namespace is the user's: never created (nor deleted) by the chart")
        .noneMatch(k -> k.startsWith("Namespace "));
  }

  @Test
  void switchesLeaveOutWhatTheyName() {
    Map<String, Map<String, Object>> out =
        objects(
            template(
                "--set",
                "replicas=1",
                "--set",
                "priorityClasses.create=false",
                "--set",
                "admissionPolicy.create=false",
                "--set",
                "networkPolicy.create=false",
                "--set",
                "existingPolicyConfigMap=my-policy"));
    assertThat(out.keySet())
        .as("one replica: no PDB to block node drains; the rest switched off")
        .noneMatch(
            k ->
                k.startsWith("PodDisruptionBudget ")
                    || k.startsWith("PriorityClass ")
                    || k.startsWith("NetworkPolicy ")
                    || k.startsWith("MutatingAdmissionPolicy")
                    || k.equals("ConfigMap kube-slurm-extender/kse-policy"));
    assertThat(out.get("Deployment kube-slurm-extender/kse-scheduler").toString())
        .contains("configMap={name=my-policy}");
  }

  @Test
  void aMistypedOrBadValueIsRefusedByTheSchemaNamingIt() {
    assertThat(helmFails("template", "kse", CHART, "--set", "replica=3"))
        .contains("additional properties 'replica' not allowed");
    assertThat(helmFails("template", "kse", CHART, "--set", "slurm.url=slurmrestd:6820"))
        .contains("/slurm/url");
    assertThat(helmFails("template", "kse", CHART, "--set", "replicas=0")).contains("/replicas");
  }

  @Test
  void lintPassesWithEveryOptionOn() {
    assertThat(helm("lint", CHART)).contains("0 chart(s) failed");
    assertThat(
            helm(
                "lint",
                CHART,
                "--set",
                "monitoring.enabled=true",
                "--set",
                "verbsTls.secret=kse-verbs-tls",
                "--set",
                "allocationHint.tokenSecret=kse-hint",
                "--set",
                "existingPolicyConfigMap=my-policy",
                "--set",
                "replicas=1"))
        .contains("0 chart(s) failed");
  }

  /**
   * Install into a namespace the user made (with the Slurm token's Secret, as docs/install.md
   * says), a custom policy; a plain upgrade keeps that policy; uninstall removes the release's
   * objects and leaves the namespace, the user's Secret and the preemption ledger.
   */
  @Test
  void installUpgradeKeepingThePolicyUninstallKeepingTheUsersObjects() throws Exception {
    nothingInstalled();
    kubectl("create", "namespace", "kube-slurm-extender");
    kubectl(
        "-n",
        "kube-slurm-extender",
        "create",
        "secret",
        "generic",
        "kse-slurm-jwt",
        "--from-literal=jwt=not-a-real-token");
    kubectl(
        "-n",
        "kube-slurm-extender",
        "create",
        "configmap",
        "kube-slurm-extender-preemptions",
        "--from-literal=ledger=[]");
    Path policy = Files.createTempFile("kse-policy", ".yaml");
    Files.writeString(
        policy,
        Files.readString(REPO.resolve("manifests/base/policy.yaml"))
            + "\n# a custom policy: this line must survive a plain helm upgrade\n");
    long t0 = System.nanoTime();
    helm(
        "install",
        "kse",
        CHART,
        "-n",
        "kube-slurm-extender",
        "--set-file",
        "policy=" + policy,
        "--wait",
        "--timeout",
        "150s");
    long installed = System.nanoTime();
    assertThat(readyReplicas()).isEqualTo("2");
    assertThat(kubectl("get", "clusterrole", "kse-extender", "-o", "name"))
        .contains("clusterrole.rbac.authorization.k8s.io/kse-extender");

    String upgradeNotes =
        helm(
            "upgrade",
            "kse",
            CHART,
            "-n",
            "kube-slurm-extender",
            "--set",
            "replicas=3",
            "--set",
            "monitoring.enabled=true",
            "--wait",
            "--timeout",
            "150s");
    assertThat(upgradeNotes).contains("the one in place, kept");
    assertThat(readyReplicas()).isEqualTo("3");
    assertThat(policyInPlace()).contains("this line must survive a plain helm upgrade");
    assertThat(kubectl("-n", "kube-slurm-extender", "get", "prometheusrule", "-o", "name"))
        .contains("prometheusrule.monitoring.coreos.com/kube-slurm-extender");
    assertThat(helm("history", "kse", "-n", "kube-slurm-extender", "-o", "json"))
        .contains("\"revision\":2");

    long upgraded = System.nanoTime();
    helm("uninstall", "kse", "-n", "kube-slurm-extender", "--wait", "--timeout", "150s");
    await("the release's objects gone")
        .atMost(Duration.ofSeconds(60))
        .until(
            () ->
                kubectl("get", "clusterrole,priorityclass,mutatingadmissionpolicy", "-o", "name")
                        .lines()
                        .noneMatch(l -> l.contains("kse-"))
                    && kubectl(
                            "-n",
                            "kube-slurm-extender",
                            "get",
                            "deployment,configmap",
                            "-o",
                            "name")
                        .lines()
                        .noneMatch(l -> l.contains("kse-")));
    assertThat(kubectl("-n", "kube-slurm-extender", "get", "secret,configmap", "-o", "name"))
        .as("what the user made stays: the namespace, the token's Secret, the preemption ledger")
        .contains("secret/kse-slurm-jwt")
        .contains("configmap/kube-slurm-extender-preemptions");
    kubectl("delete", "namespace", "kube-slurm-extender", "--wait", "--timeout=120s");
    System.out.printf(
        "[e2e] helm install (2 replicas ready) %d ms, upgrade (3 replicas + monitoring, policy kept)"
            + " %d ms, uninstall (all gone) %d ms%n",
        (installed - t0) / 1_000_000,
        (upgraded - installed) / 1_000_000,
        (System.nanoTime() - upgraded) / 1_000_000);
  }

  /**
   * Issue 44: docs/install.md's two install blocks, run as written (placeholders filled in: the
   * token file, the checkout's path, a registry and tag, the policy file) from a directory of their
   * own: each ends with the Deployment rolled out; then each install is taken away again.
   */
  @Test
  void theInstallDocsBlocksRunAsWritten() throws Exception {
    nothingInstalled();
    Path work = Files.createTempDirectory(DIR, "install-doc");
    Path token = Files.writeString(work.resolve("jwt"), "a-token-minted-by-scontrol");
    Files.copy(REPO.resolve("manifests/base/policy.yaml"), work.resolve("my-policy.yaml"));
    Map<String, String> fill =
        Map.of(
            "<token file>",
            token.toString(),
            "<relative path to the checkout>",
            work.resolve("my-install").relativize(REPO).toString(), // from the kustomization
            "<registry>",
            "registry.example/ml-platform",
            "<tag>",
            "0.1.0",
            "charts/kube-slurm-extender",
            CHART);

    String kustomize = runDocBlock("kustomize", fill, work);
    assertThat(kustomize).contains("successfully rolled out");
    assertThat(deployment("{.spec.template.spec.containers[1].image}"))
        .isEqualTo("registry.example/ml-platform/kse-scheduler-extender:0.1.0");
    // as docs/uninstall.md says: the namespace goes first, taking its objects with it
    kubectl(
        "delete",
        "-k",
        work.resolve("my-install").toString(),
        "--ignore-not-found",
        "--wait",
        "--timeout=120s");

    String helm = runDocBlock("helm", fill, work);
    assertThat(helm).contains("successfully rolled out");
    helm("uninstall", "kse", "-n", "kube-slurm-extender", "--wait", "--timeout", "150s");
    kubectl("delete", "namespace", "kube-slurm-extender", "--wait", "--timeout=120s");
  }

  /** What an install test leaves, even one that failed half-way, gone before the next. */
  private static void nothingInstalled() {
    try {
      helm("uninstall", "kse", "-n", "kube-slurm-extender", "--wait", "--timeout", "120s");
    } catch (IllegalStateException e) {
      // no release
    }
    kubectl(
        "delete",
        "-k",
        REPO.resolve("manifests/base").toString(),
        "--ignore-not-found",
        "--wait",
        "--timeout=120s");
    kubectl(
        "delete",
        "namespace",
        "kube-slurm-extender",
        "--ignore-not-found",
        "--wait",
        "--timeout=120s");
  }

  /** The sh block after {@code <!-- install-doc: NAME -->} in docs/install.md, run by bash. */
  private static String runDocBlock(String name, Map<String, String> fill, Path work)
      throws java.io.IOException {
    String doc = Files.readString(REPO.resolve("docs/install.md"));
    String marker = "<!-- install-doc: " + name + " -->\n```sh\n";
    int start = doc.indexOf(marker);
    assertThat(start)
        .as("docs/install.md has the block " + marker.trim())
        .isGreaterThanOrEqualTo(0);
    String block =
        doc.substring(start + marker.length(), doc.indexOf("\n```", start + marker.length()));
    for (var e : fill.entrySet()) {
      block = block.replace(e.getKey(), e.getValue());
    }
    assertThat(block).as("every placeholder filled").doesNotContainPattern("<[a-z ]+>");
    Map<String, String> env = new HashMap<>(toolEnv());
    env.put("PATH", bin + ":" + System.getenv("PATH"));
    return LocalSlurmCluster.run(
        List.of("bash", "-euo", "pipefail", "-c", "cd '" + work + "'\n" + block),
        Duration.ofMinutes(5),
        env);
  }

  private static String policyInPlace() {
    return kubectl(
        "-n",
        "kube-slurm-extender",
        "get",
        "configmap",
        "kse-policy",
        "-o",
        "jsonpath={.data.policy\\.yaml}");
  }

  private static String template(String... more) {
    List<String> args = new ArrayList<>(List.of("template", "kse", CHART));
    args.addAll(AS_THE_MANIFESTS);
    args.addAll(List.of(more));
    return helm(args.toArray(String[]::new));
  }

  /** kustomize's objects but the Namespace, which the chart leaves to the user (or Helm's flag). */
  private static Map<String, Map<String, Object>> withoutNamespace(
      Map<String, Map<String, Object>> objects) {
    Map<String, Map<String, Object>> out = new TreeMap<>(objects);
    assertThat(out.remove("Namespace -/kube-slurm-extender"))
        .as("manifests/base's Namespace")
        .isNotNull();
    return out;
  }

  private static String readyReplicas() {
    return deployment("{.status.readyReplicas}");
  }

  /** One field of the installed Deployment kse-scheduler (a kubectl JSONPath). */
  private static String deployment(String jsonPath) {
    return kubectl(
        "-n",
        "kube-slurm-extender",
        "get",
        "deployment",
        "kse-scheduler",
        "-o",
        "jsonpath=" + jsonPath);
  }

  /**
   * Objects by "Kind namespace/name", normalized where the two tools rightly differ: kustomize
   * suffixes generated ConfigMaps' names with a hash of their content (Helm rolls the pods by a
   * checksum annotation instead), and Helm adds its managed-by and instance labels.
   */
  static Map<String, Map<String, Object>> objects(String yaml) {
    String unhashed =
        yaml.replaceAll(
            "\\b(kse-policy|kse-scheduler-config|kse-grafana-dashboard)-[a-z0-9]{10}\\b", "$1");
    Map<String, Map<String, Object>> out = new TreeMap<>();
    try (var docs =
        new YAMLMapper().readerFor(Map.class).<Map<String, Object>>readValues(unhashed)) {
      while (docs.hasNext()) {
        Map<String, Object> o = docs.next();
        if (o == null || o.isEmpty()) {
          continue;
        }
        @SuppressWarnings("unchecked")
        Map<String, Object> meta = (Map<String, Object>) o.get("metadata");
        @SuppressWarnings("unchecked")
        Map<String, Object> labels = (Map<String, Object>) meta.get("labels");
        if (labels != null) {
          labels.remove("app.kubernetes.io/managed-by");
          labels.remove("app.kubernetes.io/instance");
        }
        if ("Deployment".equals(o.get("kind"))) {
          dropChecksums(o);
        }
        String key =
            o.get("kind") + " " + meta.getOrDefault("namespace", "-") + "/" + meta.get("name");
        assertThat(out.put(key, roundTrip(o))).as("two objects named " + key).isNull();
      }
    } catch (java.io.IOException e) {
      throw new IllegalStateException("cannot read the rendered objects", e);
    }
    return out;
  }

  @SuppressWarnings("unchecked")
  private static void dropChecksums(Map<String, Object> deployment) {
    Map<String, Object> template =
        (Map<String, Object>) ((Map<String, Object>) deployment.get("spec")).get("template");
    Map<String, Object> meta = (Map<String, Object>) template.get("metadata");
    Map<String, Object> annotations = (Map<String, Object>) meta.get("annotations");
    if (annotations != null) {
      annotations.keySet().removeIf(k -> k.startsWith("checksum/"));
      if (annotations.isEmpty()) {
        meta.remove("annotations");
      }
    }
  }

  /** Numbers as JSON has them (YAML's 2 and Helm's 2.0 are one number). */
  @SuppressWarnings("unchecked")
  private static Map<String, Object> roundTrip(Map<String, Object> o) {
    ObjectMapper json = new ObjectMapper();
    return json.convertValue(json.valueToTree(o), TreeMap.class);
  }

  static String helm(String... args) {
    List<String> cmd = new ArrayList<>(List.of(bin + "/helm"));
    cmd.addAll(List.of(args));
    return LocalSlurmCluster.run(cmd, CMD, toolEnv());
  }

  /** The error of a helm command that must fail. */
  static String helmFails(String... args) {
    try {
      helm(args);
    } catch (IllegalStateException e) {
      return e.getMessage();
    }
    throw new AssertionError("helm " + String.join(" ", args) + " succeeded; it must fail");
  }

  static String kubectl(String... args) {
    List<String> cmd = new ArrayList<>(List.of(bin + "/kubectl"));
    cmd.addAll(List.of(args));
    return LocalSlurmCluster.run(cmd, CMD, toolEnv());
  }

  /** The control plane's kubeconfig; helm's caches and config in its directory, not $HOME. */
  private static Map<String, String> toolEnv() {
    return Map.of(
        "KUBECONFIG", env.get("KUBECONFIG"),
        "HELM_CACHE_HOME", DIR.resolve("helm/cache").toString(),
        "HELM_CONFIG_HOME", DIR.resolve("helm/config").toString(),
        "HELM_DATA_HOME", DIR.resolve("helm/data").toString());
  }

  private static String stackScript() {
    return REPO.resolve("e2e/cluster/stack").toString();
  }

  private static void stack(String... args) {
    List<String> cmd = new ArrayList<>(List.of(stackScript()));
    cmd.addAll(List.of(args));
    cmd.addAll(List.of("--dir", DIR.toString()));
    try {
      LocalSlurmCluster.run(cmd, Duration.ofMinutes(2), Map.of());
    } catch (IllegalStateException e) {
      // nothing to stop
    }
  }

  static {
    try {
      Files.createDirectories(DIR);
    } catch (java.io.IOException e) {
      throw new IllegalStateException(e);
    }
  }
}

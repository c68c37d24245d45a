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

  @Test
  void theDefaultRenderingIsManifestsBaseObjectForObject() {
    var base = objects(kubectl("kustomize", REPO.resolve("manifests/base").toString()));
    assertThat(base).as("manifests/base's objects").hasSizeGreaterThanOrEqualTo(20);
    assertThat(objects(helm("template", "kse", CHART))).isEqualTo(base);
  }

  @Test
  void withMonitoringItIsTheMonitoringOverlayObjectForObject() {
    var overlay =
        objects(kubectl("kustomize", REPO.resolve("manifests/overlays/monitoring").toString()));
    assertThat(overlay)
        .containsKeys(
            "PrometheusRule kube-slurm-extender/kube-slurm-extender",
            "ServiceMonitor kube-slurm-extender/kube-slurm-extender",
            "ConfigMap kube-slurm-extender/kse-grafana-dashboard");
    assertThat(objects(helm("template", "kse", CHART, "--set", "monitoring.enabled=true")))
        .isEqualTo(overlay);
  }

  @Test
  void valuesChangeWhatTheyName() {
    Map<String, Map<String, Object>> out =
        objects(
            helm(
                "template",
                "kse",
                CHART,
                "--set",
                "replicas=3",
                "--set",
                "slurm.url=https://slurmrestd.example:6820",
                "--set",
                "verbsTls.secret=kse-verbs-tls",
                "--set",
                "allocationHint.tokenSecret=kse-hint",
                "--set",
                "namespace=kse-elsewhere"));
    String deployment = out.get("Deployment kse-elsewhere/kse-scheduler").toString();
    assertThat(deployment)
        .contains("replicas=3")
        .contains("value=https://slurmrestd.example:6820")
        .contains("KSE_HTTP_TLS_CERT_FILE")
        .contains("secretName=kse-verbs-tls")
        .contains("KSE_ALLOCATION_HINT_TOKEN_FILE")
        .contains("secretName=kse-hint");
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
    assertThat(out).containsKey("Namespace -/kse-elsewhere");
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
                "allocationHint.tokenSecret=kse-hint"))
        .contains("0 chart(s) failed");
  }

  @Test
  void installUpgradeUninstall() {
    long t0 = System.nanoTime();
    helm("install", "kse", CHART, "--wait", "--timeout", "150s");
    long installed = System.nanoTime();
    assertThat(readyReplicas()).isEqualTo("2");
    assertThat(kubectl("get", "clusterrole", "kse-extender", "-o", "name"))
        .contains("clusterrole.rbac.authorization.k8s.io/kse-extender");

    helm(
        "upgrade",
        "kse",
        CHART,
        "--set",
        "replicas=3",
        "--set",
        "monitoring.enabled=true",
        "--wait",
        "--timeout",
        "150s");
    assertThat(readyReplicas()).isEqualTo("3");
    assertThat(kubectl("-n", "kube-slurm-extender", "get", "prometheusrule", "-o", "name"))
        .contains("prometheusrule.monitoring.coreos.com/kube-slurm-extender");
    assertThat(helm("history", "kse", "-o", "json")).contains("\"revision\":2");

    long upgraded = System.nanoTime();
    helm("uninstall", "kse", "--wait", "--timeout", "150s");
    await("the release's objects gone")
        .atMost(Duration.ofSeconds(60))
        .until(
            () ->
                kubectl("get", "clusterrole,priorityclass,mutatingadmissionpolicy", "-o", "name")
                        .lines()
                        .noneMatch(l -> l.contains("kse-"))
                    && !kubectl("get", "namespaces", "-o", "name")
                        .contains("namespace/kube-slurm-extender"));
    System.out.printf(
        "[e2e] helm install (2 replicas ready) %d ms, upgrade (3 replicas + monitoring) %d ms,"
            + " uninstall (all gone) %d ms%n",
        (installed - t0) / 1_000_000,
        (upgraded - installed) / 1_000_000,
        (System.nanoTime() - upgraded) / 1_000_000);
  }

  private static String readyReplicas() {
    return kubectl(
        "-n",
        "kube-slurm-extender",
        "get",
        "deployment",
        "kse-scheduler",
        "-o",
        "jsonpath={.status.readyReplicas}");
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

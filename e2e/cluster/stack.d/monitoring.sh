# shellcheck shell=bash
# e2e/cluster/stack's part: the Prometheus Operator's CRDs and a real Prometheus with our alerts.
# Sourced by e2e/cluster/stack after its arguments, ports and helpers; not run on its own.

# the Prometheus Operator's ServiceMonitor and PrometheusRule CRDs, as the operator ships them
install_monitoring_crds() {
  kubectl get crd prometheusrules.monitoring.coreos.com >/dev/null 2>&1 && return 0
  local mod crd
  mod=$(cd "$dir" && go mod download -json "github.com/prometheus-operator/prometheus-operator@$PROMETHEUS_OPERATOR_VERSION" |
    sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
  [ -d "$mod/example/prometheus-operator-crd" ] ||
    fail "the Prometheus Operator $PROMETHEUS_OPERATOR_VERSION module has no CRDs (from the Go module proxy)"
  for crd in servicemonitors prometheusrules; do
    kubectl apply --server-side -f "$mod/example/prometheus-operator-crd/monitoring.coreos.com_$crd.yaml" \
      >>"$dir/log/monitoring-crds.log" 2>&1 || fail "applying the $crd CRD failed (see $dir/log/monitoring-crds.log)"
  done
  poll 30 kubectl get servicemonitors -A || fail "the ServiceMonitor CRD is not served"
}

# A rule file's time windows (for: and range selectors such as [2m]) divided by $1, so that the
# e2e waits seconds where an alert waits minutes: the expressions and their series are what the
# e2e proves; promtool (testing/monitoring/rules-test) tests the windows as written. 1 keeps them.
alert_windows_divided_by() {
  awk -v k="$1" '
    function secs(n, u) { return n * (u == "s" ? 1 : u == "m" ? 60 : u == "h" ? 3600 : 86400) }
    function scaled(d,   n, u, s) {
      n = d; sub(/[smhd]$/, "", n); u = substr(d, length(d))
      s = int(secs(n, u) / k); return (s < 1 ? 1 : s) "s"
    }
    BEGIN { if (k !~ /^[1-9][0-9]*$/) { print "alert_windows_divided_by: not a divisor: " k > "/dev/stderr"; exit 2 } }
    k == 1 { print; next }
    {
      out = ""
      while (match($0, /(for: *|\[)[0-9]+[smhd]/)) {
        head = substr($0, RSTART, RLENGTH); dur = head; sub(/^(for: *|\[)/, "", dur)
        out = out substr($0, 1, RSTART - 1) substr(head, 1, length(head) - length(dur)) scaled(dur)
        $0 = substr($0, RSTART + RLENGTH)
      }
      print out $0
    }'
}

# Prometheus (Debian's package, or on PATH) scraping the extender and the slurm-inference
# kube-scheduler every 2 s with the alerts of manifests/overlays/monitoring loaded, evaluated every
# 2 s, their windows divided by KSE_E2E_ALERT_TIME_DIVISOR (6: for: 1m is 10 s). Labels as the
# ServiceMonitor gives them: job kse-metrics, endpoint ops|scheduler. Off with KSE_E2E_PROMETHEUS=off.
start_prometheus() {
  [ "${KSE_E2E_PROMETHEUS:-on}" = on ] || return 0
  if ! command -v prometheus >/dev/null; then
    log "installing Debian's prometheus package"
    DEBIAN_FRONTEND=noninteractive apt-get update -q >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends prometheus >/dev/null
  fi
  mkdir -p "$dir/prometheus"
  "$REPO/testing/monitoring/rules-of" "$REPO/manifests/overlays/monitoring/prometheus-rule.yaml" |
    alert_windows_divided_by "${KSE_E2E_ALERT_TIME_DIVISOR:-6}" >"$dir/prometheus/kse.rules.yaml"
  cut -d, -f1 "$pki/tokens.csv" >"$dir/prometheus/token"
  chmod 600 "$dir/prometheus/token"
  cat >"$dir/prometheus/prometheus.yml" <<EOF
global: {scrape_interval: 2s, evaluation_interval: 2s}
rule_files: [$dir/prometheus/kse.rules.yaml]
scrape_configs:
  - job_name: kse-metrics
    static_configs:
      - targets: [127.0.0.1:$EXTENDER_OPS_PORT]
        labels: {endpoint: ops}
  - job_name: kse-metrics-scheduler
    scheme: https
    tls_config: {insecure_skip_verify: true}
    authorization: {credentials_file: $dir/prometheus/token}
    static_configs:
      - targets: [127.0.0.1:$KSE_SCHED_PORT]
        labels: {endpoint: scheduler}
    # one job name for both, as the ServiceMonitor's Service gives them
    relabel_configs:
      - {target_label: job, replacement: kse-metrics}
EOF
  spawn prometheus prometheus --config.file "$dir/prometheus/prometheus.yml" \
    --storage.tsdb.path "$dir/prometheus/data" --storage.tsdb.retention.time 1d \
    --web.listen-address "127.0.0.1:$PROMETHEUS_PORT" --web.enable-lifecycle
  poll 30 curl -sf "http://127.0.0.1:$PROMETHEUS_PORT/-/ready" ||
    fail "Prometheus did not become ready (see $dir/log/prometheus.log)"
}

# shellcheck shell=bash
# e2e/cluster/stack's part: Knative Serving's components, each in a network namespace of its own.
# Sourced by e2e/cluster/stack after its arguments, ports and helpers; not run on its own.

# Knative's components run as processes, like LWS, but each in a network namespace of its own: three
# of them serve on :8080, fixed in their code (the controller's and webhook's health probes, the
# autoscaler's stats server). Inside its namespace a component reaches the API server at the usual
# 127.0.0.1 address through socat and a Unix socket; the API server reaches the webhook through a
# veth pair, at the address an EndpointSlice of the Service `webhook` names (it routes to endpoints:
# --enable-aggregator-routing), verifying the certificate Knative's webhook makes for itself.
readonly KNATIVE_COMPONENTS="controller webhook autoscaler activator"
readonly KNATIVE_WEBHOOK_PORT=8443 KNATIVE_NET_BASE="10.$((213 + offset / 256)).$((offset % 256))"
knative_netns() { echo "kse$offset-kn-$1"; }
knative_ip() { echo "$KNATIVE_NET_BASE.$((4 * $1 + 2))"; }

# knative_net INDEX NAME: the namespace, its veth pair (a /30 each) and its socat to the API server
knative_net() {
  local i=$1 ns host_if=kkn$offset-$1
  ns=$(knative_netns "$2")
  ip netns list | grep -qw "^$ns" || ip netns add "$ns" || fail "cannot create network namespace $ns (Knative needs root)"
  ip link show "$host_if" >/dev/null 2>&1 || ip link add "$host_if" type veth peer name veth0 netns "$ns"
  ip addr replace "$KNATIVE_NET_BASE.$((4 * i + 1))/30" dev "$host_if"
  ip link set "$host_if" up
  ip -n "$ns" addr replace "$(knative_ip "$i")/30" dev veth0
  ip -n "$ns" link set veth0 up
  ip -n "$ns" link set lo up
  spawn "knative-$2-api" ip netns exec "$ns" socat "TCP-LISTEN:$API_PORT,bind=127.0.0.1,reuseaddr,fork" \
    "UNIX-CONNECT:$dir/knative/api.sock"
}

knative_start() {
  command -v socat >/dev/null || {
    log "installing socat (Debian's package)"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends socat >/dev/null ||
      fail "socat is required for Knative (apt-get install socat)"
  }
  [ -s "$BIN/knative-serving.yaml" ] || fail "Knative is not built in $BIN (run e2e/cluster/build)"
  mkdir -p "$dir/knative"
  # a stack restarted on its old etcd still has the webhook's registrations (failurePolicy Fail)
  # while no webhook runs: they would refuse the ConfigMaps below; the webhook registers itself again
  is_running knative-webhook || knative_unregister_webhooks
  kubectl apply --server-side --force-conflicts -f "$BIN/knative-serving.yaml" >"$dir/log/knative-apply.log" 2>&1 ||
    fail "applying Knative Serving's CRDs and ConfigMaps failed (see $dir/log/knative-apply.log)"
  kubectl wait --for condition=established --timeout 60s crd --all >>"$dir/log/knative-apply.log" 2>&1 ||
    fail "Knative's CRDs were not established (see $dir/log/knative-apply.log)"
  # the project's overlay, applied for real (it merges its flags into config-features)
  kubectl apply -f "$REPO/manifests/overlays/knative/config-features.yaml" >>"$dir/log/knative-apply.log" 2>&1 ||
    fail "applying manifests/overlays/knative/config-features.yaml failed (see $dir/log/knative-apply.log)"
  # this stack's settings: no metrics exporters (each would serve :9090), a queue-proxy image name
  # (only written into the pods; kwok runs none), no registry lookups for the scenarios' image names
  # (Knative resolves tags to digests; no registry is reachable here), and short autoscaler windows
  # so that a scale to zero takes seconds in tests — docs/knative.md says what to set in production
  kubectl -n knative-serving patch configmap config-observability --type merge \
    -p '{"data":{"metrics.backend-destination":"none","metrics.request-metrics-backend-destination":"none","profiling.enable":"false"}}' >/dev/null
  kubectl -n knative-serving patch configmap config-deployment --type merge \
    -p '{"data":{"queue-sidecar-image":"dev.local/knative-serving/queue:v0.42.2","registries-skipping-tag-resolving":"kind.local,ko.local,dev.local,registry.example"}}' >/dev/null
  kubectl -n knative-serving patch configmap config-autoscaler --type merge \
    -p '{"data":{"allow-zero-initial-scale":"true","stable-window":"6s","scale-to-zero-grace-period":"2s"}}' >/dev/null
  is_running knative-api-bridge || { rm -f "$dir/knative/api.sock"; spawn knative-api-bridge socat \
    "UNIX-LISTEN:$dir/knative/api.sock,fork,mode=600" "TCP:127.0.0.1:$API_PORT"; }
  local i=0 c ns
  for c in $KNATIVE_COMPONENTS; do
    knative_net "$i" "$c"
    ns=$(knative_netns "$c")
    # what Knative's own Deployments set (config/core/deployments), for a process
    spawn "knative-$c" ip netns exec "$ns" env SYSTEM_NAMESPACE=knative-serving POD_NAME="$c-0" \
      POD_IP="$(knative_ip "$i")" CONFIG_LOGGING_NAME=config-logging CONFIG_OBSERVABILITY_NAME=config-observability \
      METRICS_DOMAIN=knative.dev/internal/serving WEBHOOK_NAME=webhook WEBHOOK_PORT=$KNATIVE_WEBHOOK_PORT \
      KUBECONFIG="$admin_kubeconfig" "$BIN/knative-$c" --kubeconfig "$admin_kubeconfig"
    i=$((i + 1))
  done
  local webhook_ip activator_ip
  webhook_ip=$(knative_ip 1) activator_ip=$(knative_ip 3)
  kubectl apply -f - >>"$dir/log/knative-apply.log" 2>&1 <<EOF || fail "registering Knative's webhook Service failed (see $dir/log/knative-apply.log)"
apiVersion: v1
kind: Service
metadata: {name: webhook, namespace: knative-serving}
spec:
  ports: [{name: https-webhook, port: 443, targetPort: $KNATIVE_WEBHOOK_PORT}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: webhook-kse-e2e
  namespace: knative-serving
  labels: {kubernetes.io/service-name: webhook, endpointslice.kubernetes.io/managed-by: kse-e2e-stack}
addressType: IPv4
endpoints: [{addresses: ["$webhook_ip"], conditions: {ready: true}}]
ports: [{name: https-webhook, port: $KNATIVE_WEBHOOK_PORT, protocol: TCP}]
---
# the activator's Service, whose endpoints Knative copies into a revision's while the activator is in
# its path (scaled to zero, or target-burst-capacity -1): without them no revision becomes Ready
apiVersion: v1
kind: Service
metadata: {name: activator-service, namespace: knative-serving}
spec:
  ports: [{name: http, port: 80, targetPort: 8012}, {name: http2, port: 81, targetPort: 8013}]
---
apiVersion: v1
kind: Endpoints
metadata: {name: activator-service, namespace: knative-serving}
subsets:
  - addresses: [{ip: "$activator_ip"}]
    ports: [{name: http, port: 8012}, {name: http2, port: 8013}]
EOF
  # ready when the webhook answers through the API server: it has made its certificate, put it in
  # its configurations, and a dry-run Service is defaulted and validated by it
  poll 120 knative_webhook_answers || fail "Knative's webhook does not answer through the API server (see $dir/log/knative-webhook.log)"
  for c in $KNATIVE_COMPONENTS; do is_running "knative-$c" || fail "knative-$c exited (see $dir/log/knative-$c.log)"; done
  log "Knative Serving running (controller, webhook, autoscaler, activator)"
}

knative_webhook_answers() {
  kubectl get mutatingwebhookconfiguration webhook.serving.knative.dev -o jsonpath='{.webhooks[0].clientConfig.caBundle}' | grep -q . &&
    kubectl apply --dry-run=server -f - <<EOF
apiVersion: serving.knative.dev/v1
kind: Service
metadata: {name: kse-e2e-webhook-probe, namespace: default}
spec: {template: {spec: {containers: [{image: dev.local/probe:1}]}}}
EOF
}

knative_unregister_webhooks() {
  # stop runs without building: take the kubectl this stack was started with
  [ -n "${BIN:-}" ] || BIN=$(sed -n 's/^KSE_E2E_BIN=//p' "$dir/env" 2>/dev/null)
  [ -x "${BIN:-}/kubectl" ] || return 0
  kubectl delete --ignore-not-found mutatingwebhookconfiguration webhook.serving.knative.dev >/dev/null 2>&1 || true
  kubectl delete --ignore-not-found validatingwebhookconfiguration validation.webhook.serving.knative.dev \
    config.webhook.serving.knative.dev >/dev/null 2>&1 || true
}

knative_stop() {
  local c p ns name i=0
  # while the API server still runs: a stopped webhook must not keep refusing Knative's objects
  is_running knative-webhook && is_running kube-apiserver && knative_unregister_webhooks
  for c in $KNATIVE_COMPONENTS; do
    for name in "knative-$c" "knative-$c-api"; do
      p=$(pid_of "$name") || continue
      terminate 20 "$p"
      rm -f "$dir/run/$name.pid"
    done
  done
  p=$(pid_of knative-api-bridge) && { terminate 5 "$p"; rm -f "$dir/run/knative-api-bridge.pid"; }
  for c in $KNATIVE_COMPONENTS; do
    ns=$(knative_netns "$c")
    if ip netns list 2>/dev/null | grep -qw "^$ns"; then
      ip netns pids "$ns" 2>/dev/null | xargs -r kill -KILL 2>/dev/null || true
      ip netns del "$ns" 2>/dev/null || true
    fi
    ip link del "kkn$offset-$i" 2>/dev/null || true
    i=$((i + 1))
  done
  rm -f "$dir/knative/api.sock"
}

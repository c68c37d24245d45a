# shellcheck shell=bash
# e2e/cluster/stack's part: LeaderWorkerSet: CRD, controller and webhooks.
# Sourced by e2e/cluster/stack after its arguments, ports and helpers; not run on its own.

# LeaderWorkerSet: its CRD, its controller (admin credentials, outside a pod like the rest) and its
# webhooks, which the API server reaches on loopback by URL with a certificate made here (LWS's own
# certificate manager expects an in-cluster Service; it is turned off in its configuration)
start_lws() {
  kubectl apply --server-side -f "$BIN/lws-crds.yaml" >"$dir/log/lws-crds.log" 2>&1 ||
    fail "applying the LeaderWorkerSet CRD failed (see $dir/log/lws-crds.log)"
  if [ ! -s "$dir/lws/certs/tls.crt" ]; then
    mkdir -p "$dir/lws/certs"
    ( cd "$dir/lws/certs"
      openssl req -x509 -newkey rsa:2048 -nodes -days 30 -subj /CN=kse-e2e-lws-ca -keyout ca.key -out ca.crt 2>/dev/null
      openssl req -newkey rsa:2048 -nodes -subj /CN=127.0.0.1 -keyout tls.key -out tls.csr 2>/dev/null
      printf 'subjectAltName=IP:127.0.0.1\n' >san.ext
      openssl x509 -req -in tls.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 30 -extfile san.ext -out tls.crt 2>/dev/null )
  fi
  cat >"$dir/lws/config.yaml" <<EOF
apiVersion: config.lws.x-k8s.io/v1alpha1
kind: Configuration
leaderElection: {leaderElect: false}
internalCertManagement: {enable: false}
webhook: {port: $LWS_WEBHOOK_PORT, host: 127.0.0.1, certDir: $dir/lws/certs}
metrics: {bindAddress: "0"}
health: {healthProbeBindAddress: "127.0.0.1:$LWS_HEALTH_PORT"}
EOF
  spawn lws-controller "$BIN/lws-controller" --kubeconfig "$admin_kubeconfig" --config "$dir/lws/config.yaml"
  poll 60 curl -sf "http://127.0.0.1:$LWS_HEALTH_PORT/readyz" || fail "the LeaderWorkerSet controller is not ready (see $dir/log/lws-controller.log)"
  local ca url="https://127.0.0.1:$LWS_WEBHOOK_PORT"
  ca=$(base64 -w0 <"$dir/lws/certs/ca.crt")
  kubectl apply -f - >"$dir/log/lws-webhooks.log" 2>&1 <<EOF || fail "registering the LeaderWorkerSet webhooks failed (see $dir/log/lws-webhooks.log)"
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata: {name: lws-mutating}
webhooks:
  - name: mleaderworkerset.kb.io
    admissionReviewVersions: [v1]
    clientConfig: {url: "$url/mutate-leaderworkerset-x-k8s-io-v1-leaderworkerset", caBundle: "$ca"}
    failurePolicy: Fail
    sideEffects: None
    rules: [{apiGroups: [leaderworkerset.x-k8s.io], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [leaderworkersets]}]
  - name: mpod.kb.io
    admissionReviewVersions: [v1]
    clientConfig: {url: "$url/mutate--v1-pod", caBundle: "$ca"}
    failurePolicy: Fail
    sideEffects: None
    objectSelector: {matchExpressions: [{key: leaderworkerset.sigs.k8s.io/name, operator: Exists}]}
    rules: [{apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [pods]}]
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: lws-validating}
webhooks:
  - name: vleaderworkerset.kb.io
    admissionReviewVersions: [v1]
    clientConfig: {url: "$url/validate-leaderworkerset-x-k8s-io-v1-leaderworkerset", caBundle: "$ca"}
    failurePolicy: Fail
    sideEffects: None
    rules: [{apiGroups: [leaderworkerset.x-k8s.io], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [leaderworkersets]}]
  - name: vpod.kb.io
    admissionReviewVersions: [v1]
    clientConfig: {url: "$url/validate--v1-pod", caBundle: "$ca"}
    failurePolicy: Fail
    sideEffects: None
    objectSelector: {matchExpressions: [{key: leaderworkerset.sigs.k8s.io/name, operator: Exists}]}
    rules: [{apiGroups: [""], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [pods]}]
EOF
}

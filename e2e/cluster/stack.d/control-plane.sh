# shellcheck shell=bash
# e2e/cluster/stack's part: etcd, kube-apiserver, kube-controller-manager and the two kube-schedulers.
# Sourced by e2e/cluster/stack after its arguments, ports and helpers; not run on its own.

start_etcd() {
  spawn etcd "$BIN/etcd" --name kse-e2e --data-dir "$dir/etcd" \
    --listen-client-urls "http://127.0.0.1:$ETCD_PORT" --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" \
    --listen-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
    --initial-cluster "kse-e2e=http://127.0.0.1:$ETCD_PEER_PORT" \
    --unsafe-no-fsync --quota-backend-bytes 1073741824
  poll 30 curl -sf "http://127.0.0.1:$ETCD_PORT/health" || fail "etcd did not become healthy (see $dir/log/etcd.log)"
}

start_apiserver() {
  spawn kube-apiserver "$BIN/kube-apiserver" --etcd-servers "http://127.0.0.1:$ETCD_PORT" \
    --bind-address 127.0.0.1 --advertise-address 127.0.0.1 --secure-port "$API_PORT" \
    --cert-dir "$pki" --token-auth-file "$pki/tokens.csv" \
    --service-account-issuer https://kubernetes.default.svc \
    --service-account-key-file "$pki/sa.pub" --service-account-signing-key-file "$pki/sa.key" \
    --authorization-mode Node,RBAC --service-cluster-ip-range 10.96.0.0/16 \
    --enable-priority-and-fairness=false --endpoint-reconciler-type none \
    --feature-gates "$FEATURE_GATES" --runtime-config scheduling.k8s.io/v1beta1=true \
    --enable-aggregator-routing=true
  poll 90 kubectl get --raw /readyz || fail "kube-apiserver did not become ready (see $dir/log/kube-apiserver.log)"
}

start_controller_manager() {
  local lifecycle=()
  # Kubernetes-only nodes never heartbeat: the controller would mark them unreachable
  [ "$k8s_only_nodes" -gt 0 ] && lifecycle=(--controllers='*,-node-lifecycle-controller')
  spawn kube-controller-manager "$BIN/kube-controller-manager" --kubeconfig "$admin_kubeconfig" \
    --service-account-private-key-file "$pki/sa.key" --root-ca-file "$pki/apiserver.crt" \
    --leader-elect=false --secure-port 0 --use-service-account-credentials=false \
    --feature-gates "$FEATURE_GATES" "${lifecycle[@]}"
  # the serviceaccount controller creates each namespace's "default" account, which pods need
  poll 60 kubectl -n default get serviceaccount default || fail "kube-controller-manager is not working (see $dir/log/kube-controller-manager.log)"
}

start_schedulers() {
  spawn kube-scheduler "$BIN/kube-scheduler" --kubeconfig "$admin_kubeconfig" \
    --leader-elect=false --secure-port "$SCHED_PORT" --bind-address 127.0.0.1 \
    --feature-gates "$FEATURE_GATES"
  start_kse_scheduler
  poll 60 curl -skf "https://127.0.0.1:$SCHED_PORT/healthz" || fail "default kube-scheduler is not healthy (see $dir/log/kube-scheduler.log)"
}

# the second scheduler runs the KubeSchedulerConfiguration of manifests/ as is, plus where to find
# the API server (in a pod it would use its in-cluster credentials); with verbs-tls on, it calls
# the extender over HTTPS with a client certificate, as docs/security.md describes
start_kse_scheduler() {
  { if [ -e "$dir/tls.on" ]; then
      sed -e "s#\"http://127.0.0.1:8888\"#\"https://127.0.0.1:$EXTENDER_PORT\"\\n    enableHTTPS: true\\n    tlsConfig: {caFile: $dir/tls/ca.crt, certFile: $dir/tls/client.crt, keyFile: $dir/tls/client.key}#" \
        "$REPO/manifests/base/scheduler-config.yaml"
    else
      sed "s#http://127.0.0.1:8888#http://127.0.0.1:$EXTENDER_PORT#" "$REPO/manifests/base/scheduler-config.yaml"
    fi | if [ "${KSE_E2E_GANG_PLUGIN:-off}" = on ]; then
      # for the comparison in docs/groups.md only: kube-scheduler's own gang plugin left on
      sed '/^    plugins:$/,/^          - name: GangScheduling$/d'
    else
      cat
    fi
    printf 'clientConnection:\n  kubeconfig: %s\n' "$scheduler_kubeconfig"
  } >"$dir/kse-scheduler-config.yaml"
  # it checks who reads its /metrics with the API server, under its own account, as in its pod
  spawn kse-scheduler "$BIN/kube-scheduler" --config "$dir/kse-scheduler-config.yaml" \
    --authentication-kubeconfig "$scheduler_kubeconfig" --authorization-kubeconfig "$scheduler_kubeconfig" \
    --secure-port "$KSE_SCHED_PORT" --bind-address 127.0.0.1 --feature-gates "$FEATURE_GATES"
  poll 60 curl -skf "https://127.0.0.1:$KSE_SCHED_PORT/healthz" || fail "slurm-inference kube-scheduler is not healthy (see $dir/log/kse-scheduler.log)"
}

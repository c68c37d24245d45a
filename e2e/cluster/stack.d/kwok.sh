# shellcheck shell=bash
# e2e/cluster/stack's part: kwok: fake nodes and kubelets (the Slurm nodes by name, CPU-only and Kubernetes-only nodes).
# Sourced by e2e/cluster/stack after its arguments, ports and helpers; not run on its own.

# kwok needs lifecycle "stages"; take the ones kwok itself ships, from the module cache the build filled
write_kwok_config() {
  local stages
  stages="$(cd "$HERE/kwok" && GOFLAGS=-mod=mod go list -m -f '{{.Dir}}' sigs.k8s.io/kwok)/kustomize/stage"
  [ -d "$stages" ] || fail "kwok's stages are not in the Go module cache ($stages); run e2e/cluster/build"
  {
    cat <<'EOF'
apiVersion: config.kwok.x-k8s.io/v1alpha1
kind: KwokConfiguration
options:
  manageAllNodes: false
  manageNodesWithAnnotationSelector: kwok.x-k8s.io/node=fake
  nodeLeaseDurationSeconds: 40
  nodeLeaseParallelism: 4
  nodePlayStageParallelism: 4
  podPlayStageParallelism: 4
  cidr: 10.0.0.0/16
EOF
    for f in node/fast/node-initialize.yaml node/heartbeat-with-lease/node-heartbeat-with-lease.yaml \
      pod/fast/pod-ready.yaml pod/fast/pod-complete.yaml pod/fast/pod-delete.yaml; do
      echo "---"; cat "$stages/$f"
    done
  } >"$dir/kwok.yaml"
}

start_kwok() {
  [ -s "$dir/kwok.yaml" ] || write_kwok_config
  spawn kwok "$BIN/kwok" --kubeconfig "$admin_kubeconfig" -c "$dir/kwok.yaml"
}

# fake nodes: the Slurm nodes by name, with their GPUs and NVLink domain, and CPU-only nodes
create_nodes() {
  local i out=$dir/nodes.yaml
  : >"$out"
  for i in $(seq 0 $((nodes - 1))); do
    node_yaml "gpu-node-$i" 16 128000Mi 8 "nvl-$(( i / DOMAIN_SIZE ))" >>"$out"
  done
  for i in $(seq 1 "$cpu_nodes"); do node_yaml "cpu-node-$i" 8 32000Mi 0 "" >>"$out"; done
  # TPU hosts as GKE labels them: accelerator type, slice topology, and the node pool (one per
  # slice); the slices are laid out as testing/slurm/slurm-cluster --tpu-blocks lays out Slurm's
  local host=0 b j=0 tpu_hosts=0
  if [ -n "$tpu_blocks" ]; then
    local -a sizes; IFS=, read -ra sizes <<<"$tpu_blocks"
    for b in "${sizes[@]}"; do
      for ((i = 0; i < b; i++)); do
        node_yaml "tpu-host-$host" 16 128000Mi 0 "" "cloud.google.com/gke-tpu-accelerator: tpu-v5p-slice
    cloud.google.com/gke-tpu-topology: $( [ "$b" = 4 ] && echo 2x2x4 || echo 2x4x4)
    cloud.google.com/gke-nodepool: slice-$j" 'google.com/tpu: "4"' >>"$out"
        host=$((host + 1))
      done
      j=$((j + 1))
    done
    tpu_hosts=$host
  fi
  kubectl apply --server-side --force-conflicts -f "$out" >/dev/null
  local want=$((nodes + cpu_nodes + tpu_hosts))
  poll 60 nodes_ready "$want" || fail "kwok did not make the $want nodes Ready (see $dir/log/kwok.log)"
  [ "$k8s_only_nodes" -gt 0 ] && create_k8s_only_nodes
  return 0
}

# Nodes only Kubernetes has: Ready from their creation, never heartbeating (kwok renewing 5,000
# leases would load these 2 cores more than what is measured). Without the node lifecycle
# controller nobody lifts the not-ready taint admission puts on every new node: lifted here, once.
create_k8s_only_nodes() {
  local i out=$dir/k8s-only-nodes.yaml
  : >"$out"
  # named PREFIX0..PREFIX(L-1) when a prefix is given: as the scale rig's Slurm names its
  # external nodes (ext-gpu-K), so each is one node of both
  local first=1 last=$k8s_only_nodes name=gpu-k8s-node-
  [ -n "$k8s_only_prefix" ] && { first=0; last=$((k8s_only_nodes - 1)); name=$k8s_only_prefix; }
  for i in $(seq "$first" "$last"); do
    node_yaml "$name$i" 16 128000Mi 8 "" | sed '/kwok.x-k8s.io\/node: fake/d'
    echo "  conditions: [{type: Ready, status: \"True\", reason: KubeletReady, message: ready}]"
  done >>"$out"
  kubectl create -f "$out" >/dev/null
  kubectl taint nodes --all node.kubernetes.io/not-ready:NoSchedule- >/dev/null 2>&1 || true
  local left
  left=$(kubectl get nodes -o jsonpath='{range .items[*]}{.spec.taints[*].key}{"\n"}{end}' | grep -c not-ready || true)
  [ "$left" = 0 ] || fail "$left nodes kept the not-ready taint"
  log "$k8s_only_nodes Kubernetes-only GPU nodes created"
}

nodes_ready() {
  [ "$(kubectl get nodes --no-headers 2>/dev/null | awk '$2 ~ /^Ready/' | wc -l)" -ge "$1" ]
}

node_yaml() { # NAME CPUS MEMORY GPUS DOMAIN [MORE-LABEL-LINES [A-RESOURCE]]
  local name=$1 cpu=$2 mem=$3 gpus=$4 domain=$5 more=${6:-} resource=${7:-} gpu_line="" domain_line=""
  [ "$gpus" -gt 0 ] && gpu_line="nvidia.com/gpu: \"$gpus\""
  [ -n "$resource" ] && gpu_line=$resource
  # the NVLink domain as a node label, under our key and the one GPU Operator / NVIDIA's DRA
  # driver use on GB200 (a LeaderWorkerSet exclusive-topology or a PodGroup may name it)
  [ -n "$domain" ] && domain_line="kse.io/nvlink-domain: $domain
    nvidia.com/gpu.clique: $domain"
  cat <<EOF
---
apiVersion: v1
kind: Node
metadata:
  name: $name
  annotations:
    kwok.x-k8s.io/node: fake
  labels:
    kubernetes.io/hostname: $name
    kubernetes.io/os: linux
    kubernetes.io/arch: amd64
    type: kwok
    $domain_line
    $more
spec: {}
status:
  capacity: {cpu: "$cpu", memory: $mem, pods: "110", $gpu_line}
  allocatable: {cpu: "$cpu", memory: $mem, pods: "110", $gpu_line}
EOF
}

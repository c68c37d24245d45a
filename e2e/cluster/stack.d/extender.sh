# shellcheck shell=bash
# e2e/cluster/stack's part: our manifests and the extender: its policy, configuration, replicas, image and verbs over TLS.
# Sourced by e2e/cluster/stack after its arguments, ports and helpers; not run on its own.

# manifests/: validated whole by server-side dry-run, then everything but the Deployment applied
# for real (the processes the Deployment would run are started here, outside pods)
apply_manifests() {
  kubectl kustomize "$REPO/manifests/base" >"$dir/manifests.yaml"
  # a dry run cannot create the namespace its namespaced objects go to: that one is made first
  kubectl get namespace "$NAMESPACE" >/dev/null 2>&1 || kubectl create namespace "$NAMESPACE" >/dev/null
  kubectl apply --dry-run=server -f "$dir/manifests.yaml" >"$dir/log/manifests-dry-run.log" 2>&1 ||
    fail "manifests/base failed server-side dry-run (see $dir/log/manifests-dry-run.log)"
  awk 'BEGIN{RS="\n---\n"; ORS="\n---\n"} !/\nkind: Deployment\n/ && !/^kind: Deployment\n/' \
    "$dir/manifests.yaml" >"$dir/manifests-applied.yaml"
  kubectl apply -f "$dir/manifests-applied.yaml" >"$dir/log/manifests-apply.log" 2>&1 ||
    fail "applying manifests/base failed (see $dir/log/manifests-apply.log)"
  local account token
  for account in "$SERVICE_ACCOUNT" "$EXTENDER_ACCOUNT"; do
    poll 30 kubectl -n "$NAMESPACE" get serviceaccount "$account" ||
      fail "ServiceAccount $NAMESPACE/$account is missing after apply"
  done
  # the second scheduler and the extender each use their own ServiceAccount's token, as the two
  # containers of the Deployment do, so RBAC is real
  token=$(kubectl -n "$NAMESPACE" create token "$SERVICE_ACCOUNT" --duration 48h)
  write_kubeconfig "$scheduler_kubeconfig" "$token"
  token=$(kubectl -n "$NAMESPACE" create token "$EXTENDER_ACCOUNT" --duration 48h)
  write_kubeconfig "$extender_kubeconfig" "$token"
}

# a CA, the extender's server certificate (127.0.0.1) and kube-scheduler's client certificate
make_verbs_tls() {
  [ -s "$dir/tls/client.crt" ] && return 0
  mkdir -p "$dir/tls"
  ( cd "$dir/tls"
    openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -days 7 -subj /CN=kse-e2e-verbs-ca
    echo "subjectAltName=IP:127.0.0.1" >san.cnf
    for who in server client; do
      openssl req -newkey rsa:2048 -nodes -keyout "$who.key" -out "$who.csr" -subj "/CN=kse-$who"
      openssl x509 -req -in "$who.csr" -CA ca.crt -CAkey ca.key -CAcreateserial -out "$who.crt" -days 7 -extfile san.cnf
    done ) >"$dir/log/verbs-tls.log" 2>&1 || fail "openssl failed (see $dir/log/verbs-tls.log)"
}

verbs_tls() {
  case "${1:-}" in
    on) command -v openssl >/dev/null || fail "verbs-tls needs openssl"; make_verbs_tls; touch "$dir/tls.on" ;;
    off) rm -f "$dir/tls.on" ;;
    *) fail "verbs-tls on|off" ;;
  esac
  extender_stop
  local p
  if p=$(pid_of kse-scheduler); then terminate 30 "$p"; rm -f "$dir/run/kse-scheduler.pid"; fi
  write_extender_config
  start_kse_scheduler
  extender_start
  log "verbs over $([ -e "$dir/tls.on" ] && echo 'HTTPS with client certificates' || echo 'loopback HTTP')"
}

extender_jar() {
  # KSE_E2E_EXTENDER_JAR: another build's jar (benchmarks/run scale-before runs an old commit's)
  [ -n "${KSE_E2E_EXTENDER_JAR:-}" ] && { echo "$KSE_E2E_EXTENDER_JAR"; return; }
  local jar=$REPO/scheduler-extender/target/kse-scheduler-extender.jar
  if [ ! -s "$jar" ]; then
    log "building the extender's shaded jar"
    (cd "$REPO" && ./mvnw -B -q package -pl scheduler-extender -am -DskipTests -Dspotless.check.skip=true) >&2
  fi
  echo "$jar"
}

# testing/slurm's policy with the NVLink domains of this cluster's shape (DOMAIN_SIZE nodes each)
write_policy() {
  local domains
  domains=$(seq -s ', ' -f 'nvl-%g' 0 $(( (nodes + DOMAIN_SIZE - 1) / DOMAIN_SIZE - 1 )))
  sed -e "s/^  nvlinkDomainFeatures: .*/  nvlinkDomainFeatures: [$domains]\n  nvlinkDomainNodes: $DOMAIN_SIZE/" \
    "$REPO/testing/slurm/policy-partition.yaml" >"$dir/policy.yaml"
  grep -q "nvlinkDomainNodes: $DOMAIN_SIZE" "$dir/policy.yaml" || fail "could not derive $dir/policy.yaml"
  # TPU slices (issue 45): what testing/slurm/slurm-cluster --tpu-blocks configures
  if [ -n "$tpu_blocks" ]; then
    sed -i -e "s/^  gpusPerNode: .*/&\n  blocks: true\n  tpu:\n    gres: tpu\n    accelerators:\n      tpu-v5p-slice: {chipsPerHost: 4, feature: tpu-v5p, topologies: [2x2x4, 2x4x4]}/" \
      "$dir/policy.yaml"
    grep -q "tpu-v5p-slice:" "$dir/policy.yaml" || fail "could not add the TPU slices to $dir/policy.yaml"
  fi
  # shared GPUs (issue 46): Slurm's shards per GPU, and a tier whose pods may ask part of a GPU
  if [ "$gpu_shards" -gt 0 ]; then
    sed -i -e "s/^  gpusPerNode: .*/&\n  gpuShares: {gres: shard, perGpu: $gpu_shards, capacity: shares}/" \
      -e "s/^  - name: serving .*/  - name: shared\n    match:\n      labels: {kse-test\/tier: shared}\n    slurm:\n      partition: inference\n    mayPreempt: [training]\n    preemptible: true\n    graceTime: 30s\n    shareGpus: true\n&/" \
      "$dir/policy.yaml"
    grep -q "shareGpus: true" "$dir/policy.yaml" || fail "could not add the shared GPUs to $dir/policy.yaml"
  fi
  # MIG (issue 46): the whole GPUs left, the MIG profiles' Slurm types, and the tier "shared"
  if [ "$mig_gpus" -gt 0 ]; then
    sed -i -e "s/^  gpusPerNode: .*/  gpusPerNode: $((8 - mig_gpus))\n  migProfiles: {3g.40gb: h100_3g.40gb, 1g.10gb: h100_1g.10gb}/" \
      -e "s/^  - name: serving .*/  - name: shared\n    match:\n      labels: {kse-test\/tier: shared}\n    slurm:\n      partition: inference\n    mayPreempt: [training]\n    preemptible: true\n    graceTime: 30s\n    shareGpus: true\n&/" \
      "$dir/policy.yaml"
    grep -q "migProfiles:" "$dir/policy.yaml" || fail "could not add the MIG profiles to $dir/policy.yaml"
  fi
}

write_extender_config() {
  # shellcheck disable=SC1091
  source "$slurm_dir/env"
  write_policy
  cat >"$dir/extender.yaml" <<EOF
KSE_HTTP_HOST: 127.0.0.1
KSE_HTTP_PORT: $EXTENDER_PORT
KSE_OPS_HOST: 127.0.0.1
KSE_OPS_PORT: $EXTENDER_OPS_PORT
KSE_SCHEDULER_NAME: slurm-inference
KSE_POLICY_FILE: $dir/policy.yaml
KSE_SLURM_URL: $KSE_LAB_REST_URL
KSE_SLURM_JWT_FILE: $KSE_LAB_JWT_FILE
KSE_SLURM_USER: $KSE_LAB_JWT_USER
KSE_PLACEHOLDER_WORKDIR: $KSE_LAB_JOB_DIR
KSE_LEADER_ELECTION: true
KSE_LEASE_NAMESPACE: $NAMESPACE
KSE_PDB_OVERRIDE_MS: 20000
KSE_PLACEHOLDER_SHAPE: $shape
EOF
  # "unset": an extender older than the setting (it refuses settings it does not know)
  [ "${KSE_E2E_NODE_INTERVAL_MS:-}" = unset ] ||
    printf 'KSE_SLURM_NODE_INTERVAL_MS: %s\n' "${KSE_E2E_NODE_INTERVAL_MS:-5000}" >>"$dir/extender.yaml"
  # (above: the node table every 5 s, not 30: the scenarios of a node going down wait 20 s for its
  # taint) and the scale rig's safety net every 45 s instead of 5 min: a test sees it run;
  # KSE_E2E_NODE_INTERVAL_MS and KSE_E2E_RESYNC_INTERVAL_MS set production's (benchmarks/run scale)
  if [ "${KSE_LAB_EXTERNAL_NODES:-0}" -gt 0 ]; then
    printf 'KSE_SLURM_RESYNC_INTERVAL_MS: %s\n' "${KSE_E2E_RESYNC_INTERVAL_MS:-45000}" >>"$dir/extender.yaml"
  fi
  # drains by scontrol as root (munge): slurmrestd 22.05 cannot drain at all, and newer Slurm lets
  # only an operator do it over REST (the REST user here is not one: docs/runbook.md); with a
  # newer Slurm, that version's scontrol comes first on the extender's PATH (KSE_LAB_BIN). The
  # image carries neither scontrol nor munge (as deployed: docs/install.md), so from the image
  # cordons are not mirrored to Slurm.
  if [ -n "$image" ]; then
    printf 'KSE_DRAIN_VIA: "off"\n' >>"$dir/extender.yaml"
  else
    printf 'KSE_DRAIN_VIA: scontrol\nKSE_SCONTROL_CONF: %s\n' "$SLURM_CONF" >>"$dir/extender.yaml"
  fi
  if [ -e "$dir/tls.on" ]; then
    printf 'KSE_HTTP_TLS_CERT_FILE: %s\nKSE_HTTP_TLS_KEY_FILE: %s\nKSE_HTTP_TLS_CLIENT_CA_FILE: %s\n' \
      "$dir/tls/server.crt" "$dir/tls/server.key" "$dir/tls/ca.crt" >>"$dir/extender.yaml"
  fi
}

# The JVM flags of manifests/base/deployment.yaml (one source: testing/image checks the image's are
# the same) and its container's memory limit as -XX:MaxRAM: outside a container the JVM would size
# its heap from this machine's memory (an initial heap of 1/64 of 24 GiB alone is 384 MiB of RSS).
# The image's class-data archive is left out: the jar has none.
deployed_jvm() {
  local deployment=$REPO/manifests/base/deployment.yaml opts limit
  opts=$(deployment_java_options "$deployment")
  limit=$(sed -n 's/^ *limits: {memory: \([0-9]*\)Gi}$/\1/p' "$deployment")
  [ -n "$opts" ] && [ -n "$limit" ] || fail "no JAVA_TOOL_OPTIONS or memory limit in $deployment"
  printf '%s -XX:MaxRAM=%sg\n' "$(sed 's/-XX:SharedArchiveFile=[^ ]* //' <<<"$opts")" "$limit"
}

# extender_start [b]: the extender, or the second replica's (its own config, ports, log and
# POD_NAME, so it holds the writer Lease under its own identity)
extender_start() {
  local name=extender${1:+-$1} ops=$EXTENDER_OPS_PORT
  [ -n "${1:-}" ] && ops=$EXTENDER_B_OPS_PORT
  is_running "$name" && return 0
  [ -s "$dir/extender.yaml" ] || write_extender_config
  if [ -n "$image" ]; then
    [ -z "${1:-}" ] || fail "a second replica runs from the jar only"
    extender_start_image; return
  fi
  local jar
  jar=$(extender_jar)
  # KSE_E2E_EXTENDER_ENV (KEY=VALUE …) lets a scenario override settings for one run
  # KSE_E2E_READY_WAIT_S: how long it may take to become ready (the scale rig: its start-up listing)
  # shellcheck disable=SC2086
  # the extender refuses unknown KSE_* settings: pass none of the caller's, only its config file
  local unset=() v
  for v in $(compgen -e | grep '^KSE_'); do unset+=(-u "$v"); done
  # the JVM flags the Deployment gives it, with its memory limit as the JVM sees it in a container
  # (deployed_jvm), so heap, limits and RSS are measured as deployed;
  # POD_NAME as the downward API gives it: a restarted extender takes its own writer Lease back
  local lab_bin
  lab_bin=$(sed -n 's/^KSE_LAB_BIN=//p' "$slurm_dir/env")
  # DEBUG: the few debug lines (each job change the preemption tracker sees, each end hint read)
  # are what a scenario's failure is diagnosed from (KSE_E2E_LOG_LEVEL to change it)
  # POD_IP as the downward API gives it: the replicas reach each other's ops ports (hints a standby
  # gets are passed on to the writer)
  spawn "$name" env "${unset[@]}" KUBECONFIG="$extender_kubeconfig" POD_NAME="kse-$name-e2e" POD_IP=127.0.0.1 \
    KSE_LOG_LEVEL="${KSE_E2E_LOG_LEVEL:-DEBUG}" \
    PATH="${lab_bin:+$lab_bin:}$PATH" ${KSE_E2E_EXTENDER_ENV:-} \
    java $(deployed_jvm) -jar "$jar" serve --config "$dir/$name.yaml"
  poll "${KSE_E2E_READY_WAIT_S:-90}" curl -sf "http://127.0.0.1:$ops/readyz" || fail "the $name did not become ready (see $dir/log/$name.log)"
}

# The second pod of the Deployment: a kube-scheduler standing by on the kse-scheduler Lease that
# calls its own extender (replica b), which competes for the writer Lease. Same settings as the
# first pair but their ports.
replica_start() {
  is_running extender || fail "no extender running in $dir (start the stack first)"
  sed -e "s/^KSE_HTTP_PORT: .*/KSE_HTTP_PORT: $EXTENDER_B_PORT/" \
    -e "s/^KSE_OPS_PORT: .*/KSE_OPS_PORT: $EXTENDER_B_OPS_PORT/" "$dir/extender.yaml" >"$dir/extender-b.yaml"
  sed "s#127.0.0.1:$EXTENDER_PORT#127.0.0.1:$EXTENDER_B_PORT#" "$dir/kse-scheduler-config.yaml" \
    >"$dir/kse-scheduler-b-config.yaml"
  spawn kse-scheduler-b "$BIN/kube-scheduler" --config "$dir/kse-scheduler-b-config.yaml" \
    --authentication-kubeconfig "$scheduler_kubeconfig" --authorization-kubeconfig "$scheduler_kubeconfig" \
    --secure-port "$KSE_SCHED_B_PORT" --bind-address 127.0.0.1 --feature-gates "$FEATURE_GATES"
  poll 60 curl -skf "https://127.0.0.1:$KSE_SCHED_B_PORT/healthz" || fail "the second kube-scheduler is not healthy (see $dir/log/kse-scheduler-b.log)"
  extender_start b
  # Slurm's hints reach every replica (docs/install.md): the writer may be either
  echo "127.0.0.1 $EXTENDER_B_OPS_PORT" >"$slurm_dir/etc/kse-allocation-hint.d/e2e-$offset-b"
  log "second replica running: kse-scheduler-b (standing by), extender-b (ops :$EXTENDER_B_OPS_PORT)"
}

replica_stop() {
  rm -f "$slurm_dir/etc/kse-allocation-hint.d/e2e-$offset-b"
  extender_stop b
  local p
  if p=$(pid_of kse-scheduler-b); then terminate 30 "$p"; rm -f "$dir/run/kse-scheduler-b.pid"; fi
  return 0
}

# The extender from its image, as a container runtime would run it but without one (none runs in
# this sandbox: docs/install.md): the image's exported file system mounted read-only, a fresh /tmp,
# /proc and a minimal /dev, the image's entrypoint, environment and user (65532), host network; the
# stack's config, kubeconfig and Slurm token bind-mounted read-only at their paths, like volumes.
# Its heap: the Deployment's (MaxRAMPercentage 75 of a 1 GiB limit; no cgroup limit here).
extender_start_image() {
  local tool=$REPO/testing/image/kse-image want entry envs p
  echo "$image" >"$dir/extender-image"
  podman image exists "$image" || fail "no image $image (build it: $tool build)"
  want=$(podman image inspect --format '{{.Id}}' "$image")
  if [ "$(cat "$image_root.id" 2>/dev/null)" != "$want" ]; then
    log "exporting $image into $image_root"
    "$tool" rootfs "$image_root" "$image"
    echo "$want" >"$image_root.id"
  fi
  "$tool" umount "$image_root"
  # mount points for the stack's files (a runtime creates these for its volumes)
  for p in "$dir" "$slurm_dir/etc"; do mkdir -p "$image_root$p"; done
  "$tool" mount "$image_root"
  # again inside the fresh /tmp, for paths under /tmp
  for p in "$dir" "$slurm_dir/etc"; do mkdir -p "$image_root$p" 2>/dev/null || true; done
  for p in "$dir" "$slurm_dir/etc"; do
    grep -q " $image_root$p " /proc/mounts && continue
    mount --bind "$p" "$image_root$p" && mount -o remount,bind,ro "$image_root$p" ||
      fail "could not mount $p into the extender's image root"
  done
  # uid 65532 reads them as a pod reads its Secret volumes (mode 0644): the files it is given
  local f
  chmod o+x "$dir" "$slurm_dir" "$slurm_dir/etc"
  for f in "$dir/extender.yaml" "$dir/policy.yaml" "$extender_kubeconfig" \
    "$(sed -n 's/^KSE_SLURM_JWT_FILE: //p' "$dir/extender.yaml")"; do
    chmod o+r "$f"
  done
  [ -d "$dir/tls" ] && chmod -R o+rX "$dir/tls"
  entry=$(podman image inspect --format '{{range .Config.Entrypoint}}{{.}} {{end}}' "$image")
  envs=$(podman image inspect --format '{{range .Config.Env}}{{.}}{{"\n"}}{{end}}' "$image")
  local java_opts path
  java_opts=$(sed -n 's/^JAVA_TOOL_OPTIONS=//p' <<<"$envs")
  path=$(sed -n 's/^PATH=//p' <<<"$envs")
  # shellcheck disable=SC2086
  spawn extender env -i PATH="/usr/sbin:/usr/bin:/sbin:/bin" chroot --userspec="$(podman image inspect --format '{{.Config.User}}' "$image")" \
    "$image_root" /usr/bin/env -i PATH="${path:-/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin}" HOME=/tmp \
    JAVA_TOOL_OPTIONS="$java_opts -XX:MaxRAM=1g" KUBECONFIG="$extender_kubeconfig" POD_NAME=kse-extender-e2e POD_IP=127.0.0.1 \
    ${KSE_E2E_EXTENDER_ENV:-} $entry serve --config "$dir/extender.yaml"
  poll "${KSE_E2E_READY_WAIT_S:-90}" curl -sf "http://127.0.0.1:$EXTENDER_OPS_PORT/readyz" || fail "the extender (image $image) did not become ready (see $dir/log/extender.log)"
  log "extender running from image $image (read-only root, uid 65532)"
}

# extender_stop [b]
extender_stop() {
  local p name=extender${1:+-$1}
  if p=$(pid_of "$name"); then
    terminate 30 "$p"
    rm -f "$dir/run/$name.pid"
  fi
  [ -z "${1:-}" ] && [ -d "$image_root" ] && "$REPO/testing/image/kse-image" umount "$image_root"
  return 0
}

# extender_kill [b]: SIGKILL, no shutdown hook, no Lease release
extender_kill() {
  local p name=extender${1:+-$1}
  if p=$(pid_of "$name"); then
    alive "$p" && kill -KILL "$p"
    poll 10 bash -c "! kill -0 $p 2>/dev/null" || true
    rm -f "$dir/run/$name.pid"
  fi
  [ -z "${1:-}" ] && [ -d "$image_root" ] && "$REPO/testing/image/kse-image" umount "$image_root"
  return 0
}

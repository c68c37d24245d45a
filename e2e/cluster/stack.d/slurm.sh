# shellcheck shell=bash
# e2e/cluster/stack's part: the local Slurm cluster (testing/slurm/slurm-cluster), or another stack's.
# Sourced by e2e/cluster/stack after its arguments, ports and helpers; not run on its own.

# the stack's own Slurm, started unless it runs; or, with --slurm-from, another stack's, checked
start_slurm() {
  if [ -n "$slurm_from" ]; then
    "$REPO/testing/slurm/slurm-cluster" status --dir "$slurm_dir" >/dev/null 2>&1 ||
      fail "--slurm-from $slurm_dir: no Slurm cluster runs there"
    echo "$slurm_from" >"$dir/slurm-from"
    return 0
  fi
  rm -f "$dir/slurm-from"
  "$REPO/testing/slurm/slurm-cluster" status --dir "$slurm_dir" >/dev/null 2>&1 || slurm_started=1
  local scale=()
  [ "$external" -gt 0 ] && scale=(--external-nodes "$external" --max-jobs 60000)
  [ -n "$tpu_blocks" ] && scale+=(--tpu-blocks "$tpu_blocks")
  [ "$gpu_shards" -gt 0 ] && scale+=(--gpu-shards "$gpu_shards")
  [ "$mig_gpus" -gt 0 ] && scale+=(--mig-gpus "$mig_gpus")
  "$REPO/testing/slurm/slurm-cluster" start --dir "$slurm_dir" --nodes "$nodes" --slurm "$slurm" \
    --base-port "$SLURM_BASE_PORT" --rest-port "$SLURM_REST_PORT" "${scale[@]}" >/dev/null
}

# Slurm's allocation hint (PrologSlurmctld, manifests/slurm/kse-allocation-hint) reaches this
# stack's extender on its ops port; a Slurm shared by two stacks hints both
register_allocation_hints() {
  mkdir -p "$slurm_dir/etc/kse-allocation-hint.d"
  echo "127.0.0.1 $EXTENDER_OPS_PORT" >"$slurm_dir/etc/kse-allocation-hint.d/e2e-$offset"
}

# the stack's own Slurm (a shared one is its owner's to stop) and the hints it sent here
stop_slurm() {
  rm -f "$slurm_dir/etc/kse-allocation-hint.d/e2e-$offset" "$slurm_dir/etc/kse-allocation-hint.d/e2e-$offset-b"
  [ -d "$slurm_dir" ] && [ -z "$slurm_from" ] || return 0
  local args=(--dir "$slurm_dir"); [ "$purge" = 1 ] && args+=(--purge)
  "$REPO/testing/slurm/slurm-cluster" stop "${args[@]}" >/dev/null
}

# shellcheck shell=bash
# testing/lib/procs.sh — process helpers shared by the local test stacks (sourced, not run).
# Every daemon is tracked by a PID file so `stop` removes exactly what `start` created.
alive() { kill -0 "$1" 2>/dev/null && ! grep -q '^State:.*Z' "/proc/$1/status" 2>/dev/null; }
pid_in() { [ -s "$1" ] && cat "$1"; }
port_busy() { ss -Hltn "sport = :$1" | grep -q .; }
# poll SECONDS CMD…: retry CMD every 0.1 s; 0 when it succeeds, 1 once SECONDS of wall time passed
poll() {
  local deadline=$(( SECONDS + $1 )); shift
  while :; do
    "$@" >/dev/null 2>&1 && return 0
    [ "$SECONDS" -ge "$deadline" ] && return 1
    sleep 0.1
  done
}
# terminate GRACE PID…: SIGTERM, wait up to GRACE seconds, then SIGKILL
terminate() {
  local grace=$1; shift
  local p live=()
  for p in "$@"; do alive "$p" && live+=("$p"); done
  [ ${#live[@]} -eq 0 ] && return 0
  kill -TERM "${live[@]}" 2>/dev/null || true
  local deadline=$(( $(date +%s) + grace ))
  while [ "$(date +%s)" -le "$deadline" ]; do
    local left=0
    for p in "${live[@]}"; do alive "$p" && left=1; done
    [ $left = 0 ] && return 0
    sleep 0.1
  done
  for p in "${live[@]}"; do alive "$p" && kill -KILL "$p" 2>/dev/null; done
  return 0
}

# shellcheck shell=bash
# e2e/cluster/stack's part: credentials: the cluster's CA, service-account key, tokens and kubeconfigs.
# Sourced by e2e/cluster/stack after its arguments, ports and helpers; not run on its own.

make_pki() {
  [ -s "$pki/tokens.csv" ] && return 0
  mkdir -p "$pki"
  openssl genrsa -out "$pki/sa.key" 2048 2>/dev/null
  openssl rsa -in "$pki/sa.key" -pubout -out "$pki/sa.pub" 2>/dev/null
  local token
  token=$(head -c 24 /dev/urandom | base64 | tr -dc 'A-Za-z0-9')
  echo "$token,kse-e2e-admin,kse-e2e-admin,\"system:masters\"" >"$pki/tokens.csv"
  chmod 600 "$pki"/*
  write_kubeconfig "$admin_kubeconfig" "$token"
}

write_kubeconfig() {
  cat >"$1" <<EOF
apiVersion: v1
kind: Config
clusters: [{name: kse-e2e, cluster: {server: "$api", insecure-skip-tls-verify: true}}]
users: [{name: user, user: {token: "$2"}}]
contexts: [{name: kse-e2e, context: {cluster: kse-e2e, user: user}}]
current-context: kse-e2e
EOF
  chmod 600 "$1"
}

#!/usr/bin/env bash
# A throwaway, real Kubernetes API server (plus etcd) on loopback for the fast test layer.
#   scripts/kube-apiserver.sh build   -> builds .build/kube/kube-apiserver (scripts/kube-cluster.sh build)
#   scripts/kube-apiserver.sh start   -> prints the kubeconfig path (admin: user cgu-admin, group system:masters)
#   scripts/kube-apiserver.sh stop    -> stops both processes and removes the state folder
#   scripts/kube-apiserver.sh status  -> exit 0 when the server answers /readyz
# Only the API server runs: no controller-manager, scheduler or kubelet, so nothing
# reconciles (pods stay Pending, deleted namespaces stay Terminating, no default
# ServiceAccount is created, ResourceQuota status is not computed); the tests play those
# parts. scripts/kube-cluster.sh runs the whole cluster, with real pods.
# The Kubernetes release is pinned in tools/kube/go.mod (the same binary as the cluster's);
# etcd comes from Debian's etcd-server package (installed when missing and running as root).
# Ports and folder carry this checkout's id (as the cluster's), so checkouts never collide.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BIN="${CGU_KUBE_APISERVER_BIN:-$ROOT/.build/kube/kube-apiserver}"
ID="${CGU_KUBE_ID:-$(printf '%s' "$ROOT" | sha256sum | cut -c1-6)}"
N=$((16#$(printf '%s' "$ID" | sha256sum | cut -c1-6)))
PORT_BASE="${CGU_KUBE_PORT_BASE:-$((20000 + (N % 100) * 100))}"
DIR="${CGU_KUBE_DIR:-/tmp/cgu-lab-kube-$ID}"
API_PORT="${CGU_KUBE_API_PORT:-$((PORT_BASE + 10))}"
ETCD_PORT="${CGU_KUBE_ETCD_PORT:-$((PORT_BASE + 11))}"
ETCD_PEER_PORT="${CGU_KUBE_ETCD_PEER_PORT:-$((PORT_BASE + 12))}"
START_TIMEOUT="${CGU_KUBE_START_TIMEOUT:-90}"
KUBECONFIG_PATH="$DIR/kubeconfig"
HOST=127.0.0.1

log() { echo "kube-apiserver.sh: $*" >&2; }
die() { log "$*"; exit 1; }

build() {
  if [ -n "${CGU_KUBE_APISERVER_BIN:-}" ]; then
    [ -x "$BIN" ] || die "CGU_KUBE_APISERVER_BIN=$BIN is not an executable"
    return 0
  fi
  "$ROOT/scripts/kube-cluster.sh" build kube-apiserver
}

etcd_bin() {
  local etcd
  etcd="$(command -v etcd 2>/dev/null || true)"
  if [ -z "$etcd" ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    log "installing etcd-server with apt-get"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q etcd-server >&2 ||
      { apt-get update -q >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q etcd-server >&2; }
    etcd="$(command -v etcd 2>/dev/null || true)"
  fi
  [ -n "$etcd" ] || die "etcd is not installed (apt-get install etcd-server)"
  echo "$etcd"
}

# pid from $1 if that process is alive and runs the expected program ($2, and our folder).
alive() {
  local pid
  [ -f "$1" ] || return 1
  pid="$(cat "$1")"
  [ -n "$pid" ] && [ -r "/proc/$pid/cmdline" ] || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q -- "$2" || return 1
  echo "$pid"
}

# after `cmd &`: until the child has exec'd (before, its command line is this shell's).
execd() {
  local _
  for _ in $(seq 1 100); do
    tr '\0' ' ' <"/proc/$1/cmdline" 2>/dev/null | grep -qF -- "$DIR" && return 0
    kill -0 "$1" 2>/dev/null || return 0
    sleep 0.02
  done
}

ready() {
  [ -f "$DIR/token" ] || return 1
  curl -fsS --max-time 3 --cacert "$DIR/pki/ca.crt" -H "Authorization: Bearer $(cat "$DIR/token")" \
    "https://$HOST:$API_PORT/readyz" >/dev/null 2>&1
}

port_free() {
  ! (exec 3<>"/dev/tcp/$HOST/$1") 2>/dev/null
}

pki() {
  local p="$DIR/pki"
  mkdir -p "$p"
  openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj "/CN=cgu-lab-test-ca" \
    -keyout "$p/ca.key" -out "$p/ca.crt" 2>/dev/null
  openssl req -newkey rsa:2048 -nodes -subj "/CN=kube-apiserver" \
    -keyout "$p/apiserver.key" -out "$p/apiserver.csr" 2>/dev/null
  printf '%s\n' "subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local,IP:10.0.0.1" \
    "extendedKeyUsage=serverAuth" "keyUsage=critical,digitalSignature,keyEncipherment" >"$p/apiserver.ext"
  openssl x509 -req -in "$p/apiserver.csr" -CA "$p/ca.crt" -CAkey "$p/ca.key" -CAcreateserial \
    -days 3650 -extfile "$p/apiserver.ext" -out "$p/apiserver.crt" 2>/dev/null
  # Service-account token signing key pair.
  openssl genrsa -out "$p/sa.key" 2048 2>/dev/null
  openssl rsa -in "$p/sa.key" -pubout -out "$p/sa.pub" 2>/dev/null
  openssl rand -hex 24 >"$DIR/token"
  # token,user,uid,"groups"
  printf '%s,cgu-admin,cgu-admin,"system:masters"\n' "$(cat "$DIR/token")" >"$p/tokens.csv"
  chmod 600 "$p"/*.key "$p/tokens.csv" "$DIR/token"
}

kubeconfig() {
  cat >"$KUBECONFIG_PATH.tmp" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: cgu-lab-test
  cluster:
    server: https://$HOST:$API_PORT
    certificate-authority-data: $(base64 -w0 <"$DIR/pki/ca.crt")
users:
- name: cgu-admin
  user:
    token: $(cat "$DIR/token")
contexts:
- name: cgu-lab-test
  context:
    cluster: cgu-lab-test
    user: cgu-admin
    namespace: default
current-context: cgu-lab-test
EOF
  chmod 600 "$KUBECONFIG_PATH.tmp"
  mv -f "$KUBECONFIG_PATH.tmp" "$KUBECONFIG_PATH"
}

start() {
  if alive "$DIR/kube-apiserver.pid" kube-apiserver >/dev/null && ready && [ -f "$KUBECONFIG_PATH" ]; then
    echo "$KUBECONFIG_PATH"
    return 0
  fi
  stop   # clear any half-started state
  build
  local etcd port
  etcd="$(etcd_bin)"
  for port in "$API_PORT" "$ETCD_PORT" "$ETCD_PEER_PORT"; do
    port_free "$port" || die "port $HOST:$port is in use (set CGU_KUBE_API_PORT / CGU_KUBE_ETCD_PORT / CGU_KUBE_ETCD_PEER_PORT)"
  done
  mkdir -p "$DIR"
  chmod 700 "$DIR"
  pki

  [ "$(uname -m)" = aarch64 ] && export ETCD_UNSUPPORTED_ARCH=arm64
  setsid "$etcd" --name cgu-lab --data-dir "$DIR/etcd" \
    --listen-client-urls "http://$HOST:$ETCD_PORT" --advertise-client-urls "http://$HOST:$ETCD_PORT" \
    --listen-peer-urls "http://$HOST:$ETCD_PEER_PORT" --initial-advertise-peer-urls "http://$HOST:$ETCD_PEER_PORT" \
    --initial-cluster "cgu-lab=http://$HOST:$ETCD_PEER_PORT" --initial-cluster-state new \
    --unsafe-no-fsync --logger zap --log-level warn \
    </dev/null >"$DIR/etcd.log" 2>&1 &
  echo $! >"$DIR/etcd.pid"
  execd $!
  local _
  for _ in $(seq 1 100); do
    curl -fsS --max-time 1 "http://$HOST:$ETCD_PORT/health" >/dev/null 2>&1 && break
    alive "$DIR/etcd.pid" etcd >/dev/null || { tail -n 20 "$DIR/etcd.log" >&2; die "etcd exited"; }
    sleep 0.1
  done

  local p="$DIR/pki"
  setsid "$BIN" \
    --bind-address="$HOST" --advertise-address="$HOST" --secure-port="$API_PORT" \
    --etcd-servers="http://$HOST:$ETCD_PORT" \
    --tls-cert-file="$p/apiserver.crt" --tls-private-key-file="$p/apiserver.key" \
    --client-ca-file="$p/ca.crt" \
    --token-auth-file="$p/tokens.csv" \
    --authorization-mode=Node,RBAC \
    --service-account-issuer="https://kubernetes.default.svc.cluster.local" \
    --service-account-key-file="$p/sa.pub" --service-account-signing-key-file="$p/sa.key" \
    --service-cluster-ip-range=10.0.0.0/24 \
    --allow-privileged=true \
    --endpoint-reconciler-type=none \
    --profiling=false \
    ${CGU_KUBE_APISERVER_ARGS:-} \
    </dev/null >"$DIR/kube-apiserver.log" 2>&1 &
  echo $! >"$DIR/kube-apiserver.pid"
  execd $!

  local deadline=$((SECONDS + START_TIMEOUT))
  until ready; do
    if ! alive "$DIR/kube-apiserver.pid" kube-apiserver >/dev/null; then
      tail -n 30 "$DIR/kube-apiserver.log" >&2
      stop
      die "kube-apiserver exited (log above)"
    fi
    if [ "$SECONDS" -ge "$deadline" ]; then
      tail -n 30 "$DIR/kube-apiserver.log" >&2
      stop
      die "kube-apiserver was not ready after ${START_TIMEOUT}s"
    fi
    sleep 0.2
  done
  kubeconfig
  echo "$KUBECONFIG_PATH"
}

stop_one() {
  local pid _
  pid="$(alive "$DIR/$1.pid" "$1")" || return 0
  kill -TERM "$pid" 2>/dev/null || return 0
  for _ in $(seq 1 100); do
    kill -0 "$pid" 2>/dev/null || return 0
    sleep 0.1
  done
  kill -KILL "$pid" 2>/dev/null || true
}

stop() {
  stop_one kube-apiserver
  stop_one etcd
  case "$DIR" in
    /tmp/?*) rm -rf "$DIR" ;;
    *) [ -d "$DIR" ] && rm -rf "$DIR/etcd" "$DIR/pki" "$DIR"/*.pid "$DIR"/*.log "$DIR/token" "$KUBECONFIG_PATH" || true ;;
  esac
}

case "${1:-}" in
  build) build ;;
  start) start ;;
  stop) stop ;;
  status) ready && alive "$DIR/kube-apiserver.pid" kube-apiserver >/dev/null && echo "$KUBECONFIG_PATH" ;;
  *) echo "usage: $0 build|start|stop|status" >&2; exit 2 ;;
esac

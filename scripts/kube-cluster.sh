#!/usr/bin/env bash
# A real one-node Kubernetes on this machine, for the test suite (and a developer's try):
#   scripts/kube-cluster.sh build [NAME...]  build the binaries (all, or e.g. kube-apiserver)
#   scripts/kube-cluster.sh build-aside NAME build one under a lock of its own (Kueue's long
#                                            build, which no start waits for: see KUEUE)
#   scripts/kube-cluster.sh start            start it; prints the admin kubeconfig path
#   scripts/kube-cluster.sh stop             stop everything, remove its network, restore the host
#   scripts/kube-cluster.sh clean            stop, then delete its state (images included)
#   scripts/kube-cluster.sh status           exit 0 when it runs; prints the kubeconfig path
#   scripts/kube-cluster.sh env              KEY=VALUE lines the tests read (addresses, names)
#   scripts/kube-cluster.sh import X.tar...  load docker-archives into its containerd
#   scripts/kube-cluster.sh kubectl ARGS...  kubectl as the cluster's administrator
#   scripts/kube-cluster.sh fleet N          N simulated GPU nodes (KWOK) beside the real one
#                                            (CGU_KUBE_FLEET=N does it at start)
#   scripts/kube-cluster.sh can-run          exit 0 when this host can run it (else says why)
#   scripts/kube-cluster.sh diagnose         the disk, the node's conditions and taints, pods
#                                            not running and the latest warnings (what a
#                                            failed test prints)
#
# What runs: etcd (Debian's etcd-server) and kube-apiserver, kube-controller-manager,
# kube-scheduler on the host; containerd + runc (Debian), the kubelet and kube-proxy
# (iptables mode) inside a network namespace of their own, joined to the host by a veth
# pair; pods on a bridge in that namespace (Debian's CNI plugins); CoreDNS as a pod behind
# the kube-dns Service; a StorageClass whose volumes are directories (a small provisioner
# loop); GPUs advertised as extended resources on the node's status (nvidia.com/gpu,
# nvidia.com/gpu.shared, nvidia.com/mig-1g.10gb), so GPU pods schedule, or wait Pending
# when none is free, exactly as in a real cluster. The binaries come from the
# k8s.io/kubernetes release pinned in tools/kube/go.mod (CoreDNS: tools/kube/coredns).
# Beside the control plane on the host: Kubeflow's training operator (PyTorchJobs) and
# Kueue (their queues), each built from its module in tools/<name> (kueue_up says how);
# in the node's network namespace, kube-router's firewall alone enforces NetworkPolicies
# (netpol_up), so a policy the backend writes is proven by its effect, not only accepted.
#
# Several instances share a host (CI beside a developer's own): every host-wide name
# carries an installation id (CGU_KUBE_ID, default: a hash of this checkout's path) and
# ports, addresses, network namespace, veths, cgroups, containerd socket are derived from
# it. Only the host's routing table (two routes via the veth) and a few kernel settings
# the kubelet changes (vm.overcommit_memory, kernel.panic...) are touched: the routes go
# with the veth, the settings are saved before the first instance starts and restored
# when the last one stops. The host's iptables and ip_forward are left alone: pods,
# Services and their NAT rules live inside the namespace.
#
# Binaries are cached in .build/kube (keyed on the Go module's files) and in
# ${XDG_CACHE_HOME:-~/.cache}/cgu-lab/kube/<key> outside the clone, so a fresh clone in
# CI links nothing when its cache is restored. Needs root (network namespaces, cgroups,
# mounts), Go to build once, and Debian packages it installs when missing.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SRC="$ROOT/tools/kube"
BUILD="$ROOT/.build/kube"
CACHE="${CGU_KUBE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/cgu-lab/kube}"
COMPONENTS=(kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy cri-clean pause)
ADDONS=(coredns)
# Operators built from their upstream module (a `tool` line in tools/<name>/go.mod, nothing
# of theirs copied here); each one's CRDs and RBAC come from that module's own manifests,
# saved beside the binary as <name>.manifests.tar when it is built.
OPERATORS=(training-operator kwok kueue kube-router)
# Kueue: its cold build from source is long (about 43 min alone at nice 19 on 2 cores under
# load), so it never holds up a start. `auto` (the default) starts it where its binary is
# built (here or in the cache outside the clone) and otherwise starts the cluster without it,
# saying so: `make test` builds it in the background after the other binaries and images,
# under a lock of its own (`build-aside kueue`), so that the first run on a machine goes on
# without it (the queue tests skip, saying why) and the runs after it have it. `1` builds it
# first whatever it takes, `0` leaves it off.
KUEUE="${CGU_KUBE_KUEUE:-auto}"

ID="${CGU_KUBE_ID:-$(printf '%s' "$ROOT" | sha256sum | cut -c1-6)}"
[[ "$ID" =~ ^[a-z0-9]{1,8}$ ]] || { echo "kube-cluster.sh: CGU_KUBE_ID must be 1-8 of a-z0-9" >&2; exit 2; }
N=$((16#$(printf '%s' "$ID" | sha256sum | cut -c1-6)))
PORT_BASE="${CGU_KUBE_PORT_BASE:-$((20000 + (N % 100) * 100))}"
NET="${CGU_KUBE_NET:-10.$((100 + N % 100))}"   # this instance's 10.x.0.0/16
API_PORT=$PORT_BASE
ETCD_PORT=$((PORT_BASE + 1))
ETCD_PEER_PORT=$((PORT_BASE + 2))
KCM_PORT=$((PORT_BASE + 3))
SCHED_PORT=$((PORT_BASE + 4))
KUBELET_PORT=$((PORT_BASE + 5))
KUBELET_HEALTHZ=$((PORT_BASE + 6))
PROXY_HEALTHZ=$((PORT_BASE + 7))
PROXY_METRICS=$((PORT_BASE + 8))
OPERATOR_METRICS=$((PORT_BASE + 20))  # the training operator's metrics, probes, webhook server (+10..+12: kube-apiserver.sh)
OPERATOR_PROBES=$((PORT_BASE + 21))
OPERATOR_WEBHOOKS=$((PORT_BASE + 22))
KWOK_PORT=$((PORT_BASE + 23))          # kwok's own server (metrics, healthz)
KUEUE_METRICS=$((PORT_BASE + 24))      # Kueue's metrics, probes and webhook server
KUEUE_PROBES=$((PORT_BASE + 25))
KUEUE_WEBHOOKS=$((PORT_BASE + 26))
ROUTER_HEALTH=$((PORT_BASE + 27))      # kube-router's health port, in the node's network namespace
FLEET="${CGU_KUBE_FLEET:-0}"           # simulated GPU nodes `start` makes (scripts/kube-cluster.sh fleet N)
HOST_IP="$NET.255.1"    # the host's end of the veth: the API server listens here
NODE_IP="$NET.255.2"    # the namespace's end: the node's address
POD_CIDR="$NET.0.0/24"
POD_GATEWAY="$NET.0.1"
# Services: one per notebook (its companion), so a school's worth: a /24 (254 addresses) ran
# out in fleet_burst's burst of 300 beside 142 running ("failed to allocate a serviceIP").
SVC_CIDR="$NET.128.0/18"
KWOK_CIDR="$NET.192.0/18" # the simulated pods' addresses (kwok), routed nowhere: no program answers
API_SVC_IP="$NET.128.1"
DNS_IP="$NET.128.10"
NAME="cgu-kube-$ID"
NODE="$NAME"
NETNS="$NAME"
VETH_HOST="ck${ID}h"
VETH_NS="ck${ID}n"
BRIDGE="ck${ID}b"
CGROUP_ROOT="/$NAME"
STATE="${CGU_KUBE_STATE:-$ROOT/.build/kube-cluster}"
RUN="/run/$NAME"
SOCK="$RUN/containerd.sock"
IMAGES="${CGU_KUBE_IMAGES:-$ROOT/.build/kube-images}"   # archives `make images` writes
ADDON_IMAGES="$BUILD/images"                             # pause and CoreDNS, made here
PAUSE_IMAGE="localhost/cgu-kube/pause:1"
COREDNS_IMAGE="localhost/cgu-kube/coredns:1"
STORAGE_CLASS="cgu-kube-local"
# Extended resources the node advertises (GPU notebooks schedule against them).
GPUS="${CGU_KUBE_GPUS-nvidia.com/gpu=2,nvidia.com/gpu.shared=4,nvidia.com/mig-1g.10gb=2}"
GPU_PRODUCT="${CGU_KUBE_GPU_PRODUCT:-NVIDIA-RTX-A5000}"
START_TIMEOUT="${CGU_KUBE_START_TIMEOUT:-180}"
# Host-wide kernel settings the kubelet changes (it runs with protectKernelDefaults: false).
HOST_SYSCTLS="vm.overcommit_memory vm.panic_on_oom kernel.panic kernel.panic_on_oops kernel.keys.root_maxkeys kernel.keys.root_maxbytes"
SYSCTL_SAVED=/run/cgu-kube.sysctl.saved
SYSCTL_HOLDERS=/run/cgu-kube.sysctl.holders
LOCK=/run/cgu-kube.lock
KUBECONFIG_PATH="$STATE/admin.kubeconfig"

log() { echo "kube-cluster.sh: $*" >&2; }
die() { log "$*"; exit 1; }
elapsed() { echo "$(($(date +%s) - T0))s"; }
T0=$(date +%s)

# -- build -------------------------------------------------------------------------------

go_bin() {
  command -v go 2>/dev/null || { [ -x /usr/local/go/bin/go ] && echo /usr/local/go/bin/go; } ||
    die "Go is not installed (needed once to build the Kubernetes binaries)"
}

# The cache key of a module: its files (go.mod, go.sum, the mains), not the Go version,
# so that cached binaries serve a host without Go.
module_key() {
  (cd "$1" && find . -path ./coredns -prune -o -type f \( -name '*.go' -o -name go.mod -o -name go.sum \) -print |
    LC_ALL=C sort | xargs sha256sum) | sha256sum | cut -c1-16
}

module_of() {
  case "$1" in
    coredns) echo "$SRC/coredns" ;;
    training-operator | kwok | kueue | kube-router) echo "$ROOT/tools/$1" ;;
    *) echo "$SRC" ;;
  esac
}

is_operator() { [[ " ${OPERATORS[*]} " == *" $1 "* ]]; }

# The upstream manifests an operator needs at start, from its module in Go's module cache,
# as one tar beside the binary (so a cached binary brings them along, without Go).
# training-operator: the PyTorchJob CRD (used when ../shared/upstream-crds has none) and
# the ClusterRole its manager needs.
operator_manifests() {  # operator_manifests NAME GO OUTDIR
  local name="$1" go="$2" out="$3" mod dir
  case "$name" in
    training-operator)
      mod="github.com/kubeflow/training-operator"
      dir="$(cd "$(module_of "$name")" && "$go" list -m -f '{{.Dir}}' "$mod")"
      tar -C "$dir/manifests/base" -cf "$out/$name.manifests.tar" crds/kubeflow.org_pytorchjobs.yaml rbac/role.yaml
      ;;
    kueue)  # its CRDs, its manager's ClusterRole, its webhooks
      mod="sigs.k8s.io/kueue"
      dir="$(cd "$(module_of "$name")" && "$go" list -m -f '{{.Dir}}' "$mod")"
      tar -C "$dir/config/components" -cf "$out/$name.manifests.tar" crd/bases rbac/role.yaml webhook/manifests.yaml
      ;;
    kube-router)  # its DaemonSet's manifest, for the ClusterRole in it
      mod="github.com/cloudnativelabs/kube-router/v2"
      dir="$(cd "$(module_of "$name")" && "$go" list -m -f '{{.Dir}}' "$mod")"
      tar -C "$dir/daemonset" -cf "$out/$name.manifests.tar" generic-kuberouter.yaml
      ;;
    *) tar -cf "$out/$name.manifests.tar" -T /dev/null ;;  # kwok: its default stages are built in
  esac
}

ldflags() {
  local version minor pkg flags="-s -w"
  version="$(awk '$1 == "k8s.io/kubernetes" { print $2; exit }' "$SRC/go.mod")"
  minor="${version#v1.}"
  minor="${minor%%.*}"
  for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    flags+=" -X $pkg.gitVersion=$version -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor -X $pkg.gitTreeState=clean"
  done
  echo "$flags"
}

# from_cache NAME KEY: the binary (and an operator's manifests) copied from the cache outside
# the clone into .build/kube; fails where the cache has none of that key.
from_cache() {
  local name="$1" key="$2"
  [ -x "$CACHE/$key/$name" ] || return 1
  ! is_operator "$name" || [ -f "$CACHE/$key/$name.manifests.tar" ] || return 1
  if is_operator "$name"; then cp -f "$CACHE/$key/$name.manifests.tar" "$BUILD/$name.manifests.tar"; fi
  cp -f "$CACHE/$key/$name" "$BUILD/$name.tmp" && mv -f "$BUILD/$name.tmp" "$BUILD/$name"
  echo "$key" >"$BUILD/.$name.key"
  log "$name from the cache ($CACHE/$key)"
}

# built NAME: whether NAME's binary of the current sources is in .build/kube, or can be
# copied there from the cache; builds nothing.
built() {
  local name="$1" key
  key="$(module_key "$(module_of "$name")")"
  mkdir -p "$BUILD"
  { [ -x "$BUILD/$name" ] && [ "$(cat "$BUILD/.$name.key" 2>/dev/null)" = "$key" ]; } || from_cache "$name" "$key"
}

# build_aside NAME: build NAME under a lock of its own, not the one every start and test run
# waits on (Kueue's long build, started in the background by `make test`); returns at once,
# saying so, where that build already runs.
build_aside() {
  mkdir -p "$BUILD"
  exec 8>"$BUILD/.$1.lock"
  flock -n 8 || { log "$1 is already being built in this checkout"; return 0; }
  build "$1"
}

# build [NAME...]: each binary from .build/kube when its stamp matches, else from the
# cache outside the clone, else `go build` (all missing ones of a module in one run).
build() {
  local names=("$@") name key dir missing=() todo
  if [ ${#names[@]} -eq 0 ]; then
    names=("${COMPONENTS[@]}" "${ADDONS[@]}" training-operator kwok kube-router)
  fi
  mkdir -p "$BUILD"
  for name in "${names[@]}"; do
    dir="$(module_of "$name")"
    [ -d "$dir/cmd/$name" ] || [ "$name" = coredns ] || is_operator "$name" || die "unknown binary '$name'"
    key="$(module_key "$dir")"
    if [ -x "$BUILD/$name" ] && [ "$(cat "$BUILD/.$name.key" 2>/dev/null)" = "$key" ]; then
      continue
    fi
    from_cache "$name" "$key" || missing+=("$name")
  done
  [ ${#missing[@]} -gt 0 ] || return 0
  local go t
  go="$(go_bin)"
  for dir in "$SRC" "$SRC/coredns" "$ROOT/tools/training-operator" "$ROOT/tools/kwok" "$ROOT/tools/kueue" "$ROOT/tools/kube-router"; do
    todo=()
    for name in "${missing[@]}"; do [ "$(module_of "$name")" = "$dir" ] && todo+=("$name"); done
    [ ${#todo[@]} -gt 0 ] || continue
    key="$(module_key "$dir")"
    t=$(date +%s)
    log "building ${todo[*]} (a first build takes 10-25 min on 2 cores and ~4 GB of Go caches)"
    local out="$BUILD/.tmp-$key" pkgs=()
    rm -rf "$out"
    mkdir -p "$out"
    if [ "$dir" = "$SRC/coredns" ]; then
      (cd "$dir" && CGO_ENABLED=0 nice -n 19 "$go" build -trimpath -ldflags="-s -w" -o "$out/coredns" .)
    elif is_operator "${todo[0]}"; then
      (cd "$dir" && CGO_ENABLED=0 nice -n 19 "$go" build -trimpath -ldflags="-s -w" -o "$out/${todo[0]}" \
        "$(awk '$1 == "tool" { print $2; exit }' go.mod)")
      operator_manifests "${todo[0]}" "$go" "$out"
    else
      for name in "${todo[@]}"; do pkgs+=("./cmd/$name"); done
      (cd "$dir" && CGO_ENABLED=0 nice -n 19 "$go" build -trimpath -ldflags="$(ldflags)" -o "$out/" "${pkgs[@]}")
    fi
    for name in "${todo[@]}"; do
      if is_operator "$name"; then
        mv -f "$out/$name.manifests.tar" "$BUILD/$name.manifests.tar"
        store "$key" "$name.manifests.tar"
      fi
      mv -f "$out/$name" "$BUILD/$name"
      echo "$key" >"$BUILD/.$name.key"
      store "$key" "$name"
    done
    rm -rf "$out"
    log "built ${todo[*]} in $(($(date +%s) - t))s"
  done
}

# One build at a time per checkout: `make test` starts one in the background (scripts/kube-test.sh
# prepare) and every later build waits for it, then finds its binaries.
locked() {
  mkdir -p "$BUILD"
  exec 9>"$BUILD/.lock"
  flock -n 9 || { log "waiting for the build already running in this checkout"; flock 9; }
  "$@"
}

# Keep a binary outside the clone; drop cache entries of other keys of the same module.
store() {
  local key="$1" name="$2" old
  mkdir -p "$CACHE/$key" 2>/dev/null || return 0
  cp -f "$BUILD/$name" "$CACHE/$key/.$name.tmp" && mv -f "$CACHE/$key/.$name.tmp" "$CACHE/$key/$name" || true
  for old in "$CACHE"/*/"$name"; do
    [ -e "$old" ] && [ "$old" != "$CACHE/$key/$name" ] && rm -f "$old"
  done
  find "$CACHE" -mindepth 1 -maxdepth 1 -type d -empty -delete 2>/dev/null || true
}

# -- host prerequisites ----------------------------------------------------------------------

can_run() {
  [ "$(uname -s)" = Linux ] || { echo "not Linux"; return 1; }
  [ "$(id -u)" = 0 ] || { echo "not root (network namespaces, cgroups and mounts need root)"; return 1; }
  [ -d /sys/fs/cgroup ] || { echo "no cgroup file system at /sys/fs/cgroup"; return 1; }
  command -v ip >/dev/null && command -v nsenter >/dev/null || { echo "ip (iproute2) or nsenter (util-linux) is missing"; return 1; }
  if ! command -v containerd >/dev/null && ! command -v apt-get >/dev/null; then
    echo "containerd is missing and there is no apt-get to install it"; return 1
  fi
  return 0
}

packages() {
  local want=() pair cmd pkg
  for pair in containerd:containerd runc:runc etcd:etcd-server iptables:iptables \
    conntrack:conntrack ipset:ipset openssl:openssl curl:curl /usr/lib/cni/bridge:containernetworking-plugins; do
    cmd="${pair%%:*}" pkg="${pair#*:}"
    if [[ "$cmd" == /* ]]; then [ -e "$cmd" ] || want+=("$pkg"); else command -v "$cmd" >/dev/null || want+=("$pkg"); fi
  done
  [ ${#want[@]} -gt 0 ] || return 0
  command -v apt-get >/dev/null || die "missing: ${want[*]} (install them)"
  log "installing ${want[*]} with apt-get"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${want[@]}" >&2 ||
    { apt-get update -q >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${want[@]}" >&2; }
}

cni_dir() {
  local d
  for d in /usr/lib/cni /opt/cni/bin /usr/libexec/cni; do [ -x "$d/bridge" ] && { echo "$d"; return; }; done
  die "the CNI plugins are missing (apt-get install containernetworking-plugins)"
}

port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# -- processes -----------------------------------------------------------------------------

# pid of component $1 if it runs and is ours (its command line names our state folder).
# A process in the middle of an exec (the training operator's env -> unshare -> sh ->
# exec chain) shows an empty command line for a moment: asked again, not taken for dead
# (a clean-clone rehearsal once stopped a starting cluster that way).
alive() {
  local pid line _
  [ -f "$STATE/run/$1.pid" ] || return 1
  pid="$(cat "$STATE/run/$1.pid")"
  [ -n "$pid" ] || return 1
  for _ in 1 2 3 4 5 6 7 8 9 10; do
    [ -r "/proc/$pid/cmdline" ] || return 1
    line="$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null || true)"
    [ -z "$line" ] || break
    sleep 0.1
  done
  case "$line" in *"$STATE"*) echo "$pid" ;; *) return 1 ;; esac
}

# daemon NAME [--netns] COMMAND...: run in the background, log in $STATE/logs.
daemon() {
  local name="$1" pid _
  shift
  local prefix=()
  if [ "$1" = --netns ]; then prefix=(nsenter "--net=/run/netns/$NETNS"); shift; fi
  setsid "${prefix[@]}" "$@" </dev/null >>"$STATE/logs/$name.log" 2>&1 &
  pid=$!
  echo "$pid" >"$STATE/run/$name.pid"
  # until it has exec'd (its command line is then its own)
  for _ in $(seq 1 50); do
    tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF -- "$STATE" && return 0
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.05
  done
  alive "$name" >/dev/null || { tail -n 30 "$STATE/logs/$name.log" >&2; die "$name did not start"; }
}

# wait_for NAME SECONDS COMMAND...: until COMMAND succeeds while NAME runs.
wait_for() {
  local name="$1" seconds="$2" deadline
  shift 2
  deadline=$(($(date +%s) + seconds))
  until "$@" >/dev/null 2>&1; do
    alive "$name" >/dev/null || { tail -n 40 "$STATE/logs/$name.log" >&2; die "$name exited (log above: $STATE/logs/$name.log)"; }
    [ "$(date +%s)" -lt "$deadline" ] || { tail -n 40 "$STATE/logs/$name.log" >&2; die "$name not ready after ${seconds}s"; }
    sleep 0.2
  done
}

# stop NAME...: SIGTERM to each (its process group), then up to 10 s for all, then SIGKILL.
stop_these() {
  local name pid pids=() _
  for name in "$@"; do
    if pid="$(alive "$name")"; then
      kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
      pids+=("$pid")
    fi
    rm -f "$STATE/run/$name.pid"
  done
  [ ${#pids[@]} -gt 0 ] || return 0
  for _ in $(seq 1 100); do
    for pid in "${pids[@]}"; do kill -0 "$pid" 2>/dev/null && break; pid=""; done
    [ -n "$pid" ] || return 0
    sleep 0.1
  done
  for pid in "${pids[@]}"; do kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null || true; done
}

kc() { kubectl --kubeconfig "$KUBECONFIG_PATH" "$@"; }

# established WHAT CRD...: wait until the API server serves each CRD (Established), up to
# CGU_KUBE_CRD_WAIT seconds (120). One that is not says what the API server made of it, its
# conditions and the API server's last words, in the start's output rather than only in logs.
established() {
  local what="$1" crd deadline=$(($(date +%s) + ${CGU_KUBE_CRD_WAIT:-120}))
  shift
  for crd in "$@"; do
    until kc get crd "$crd" -o jsonpath='{.status.conditions[?(@.type=="Established")].status}' 2>/dev/null | grep -q True; do
      if [ "$(date +%s)" -ge "$deadline" ]; then
        log "$crd: $(kc get crd "$crd" -o jsonpath='{range .status.conditions[*]}{.type}={.status} ({.reason}: {.message}); {end}' 2>&1)"
        tail -n 20 "$STATE/logs/kube-apiserver.log" >&2 || true
        die "$what: the CRD $crd was not Established after ${CGU_KUBE_CRD_WAIT:-120}s"
      fi
      sleep 0.5
    done
  done
}

# -- certificates, tokens, configuration -----------------------------------------------------------

pki() {
  local p="$STATE/pki"
  rm -rf "$p"
  mkdir -p "$p"
  openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj "/CN=$NAME-ca" \
    -keyout "$p/ca.key" -out "$p/ca.crt" 2>/dev/null
  cert() {  # cert FILE SUBJECT EXTENSIONS
    openssl req -newkey rsa:2048 -nodes -subj "$2" -keyout "$p/$1.key" -out "$p/$1.csr" 2>/dev/null
    printf '%b\n' "$3" >"$p/$1.ext"
    openssl x509 -req -in "$p/$1.csr" -CA "$p/ca.crt" -CAkey "$p/ca.key" -CAcreateserial \
      -days 3650 -extfile "$p/$1.ext" -out "$p/$1.crt" 2>/dev/null
  }
  local usage="keyUsage=critical,digitalSignature,keyEncipherment"
  cert apiserver "/CN=kube-apiserver" "subjectAltName=IP:$HOST_IP,IP:127.0.0.1,IP:$API_SVC_IP,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local\nextendedKeyUsage=serverAuth\n$usage"
  cert kubelet "/CN=$NODE" "subjectAltName=IP:$NODE_IP,DNS:$NODE\nextendedKeyUsage=serverAuth\n$usage"
  cert apiserver-kubelet-client "/CN=kube-apiserver-kubelet-client/O=system:masters" "extendedKeyUsage=clientAuth\n$usage"
  openssl genrsa -out "$p/sa.key" 2048 2>/dev/null
  openssl rsa -in "$p/sa.key" -pubout -out "$p/sa.pub" 2>/dev/null
  # Static bearer tokens (--token-auth-file: token,user,uid,"groups"): the built-in RBAC
  # roles, the Node authorizer and NodeRestriction then apply unchanged.
  : >"$p/tokens.csv"
  token() {
    local t
    t="$(openssl rand -hex 24)"
    echo "$t" >"$p/$1.token"
    echo "$t,$2" >>"$p/tokens.csv"
  }
  token admin 'cgu-admin,cgu-admin,"system:masters"'
  token kcm 'system:kube-controller-manager,system:kube-controller-manager'
  token scheduler 'system:kube-scheduler,system:kube-scheduler'
  token kubelet "system:node:$NODE,system:node:$NODE,\"system:nodes\""
  token proxy 'system:kube-proxy,system:kube-proxy'
  # the training operator: only the upstream ClusterRole (bound at start) applies to it
  token training-operator 'cgu-training-operator,cgu-training-operator'
  token kwok 'cgu-kwok,cgu-kwok'
  token kueue 'cgu-kueue,cgu-kueue'
  token kube-router 'cgu-kube-router,cgu-kube-router'
  rm -f "$p"/*.csr "$p"/*.ext "$p"/*.srl
  chmod 600 "$p"/*.key "$p"/*.token "$p/tokens.csv"
}

kubeconfig() {  # kubeconfig NAME -> $STATE/NAME.kubeconfig holding that token
  umask 077
  cat >"$STATE/$1.kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: $NAME
  cluster:
    server: https://$HOST_IP:$API_PORT
    certificate-authority-data: $(base64 -w0 <"$STATE/pki/ca.crt")
users:
- name: $1
  user:
    token: $(cat "$STATE/pki/$1.token")
contexts:
- name: $NAME
  context: {cluster: $NAME, user: $1, namespace: default}
current-context: $NAME
EOF
  umask 022
}

configs() {
  local cni restrict=false capeff
  cni="$(cni_dir)"
  mkdir -p "$STATE/cni/net.d" "$STATE/cni/ipam" "$STATE/kubelet" "$STATE/containerd" "$STATE/pv"
  cat >"$STATE/cni/net.d/10-$NAME.conflist" <<EOF
{
  "cniVersion": "1.0.0",
  "name": "$NAME",
  "plugins": [
    {"type": "bridge", "bridge": "$BRIDGE", "isGateway": true, "ipMasq": true, "hairpinMode": true,
     "ipam": {"type": "host-local", "dataDir": "$STATE/cni/ipam",
              "ranges": [[{"subnet": "$POD_CIDR", "gateway": "$POD_GATEWAY"}]],
              "routes": [{"dst": "0.0.0.0/0"}]}},
    {"type": "portmap", "capabilities": {"portMappings": true}},
    {"type": "loopback"}
  ]
}
EOF
  # Without CAP_SYS_RESOURCE (some VMs' root), runc cannot give sandboxes their negative
  # oom_score_adj ("can't get final child's PID from pipe: EOF"): keep adjustments >= ours.
  capeff="$(awk '/^CapEff/ { print $2 }' /proc/self/status)"
  (( (16#$capeff >> 24) & 1 )) || restrict=true
  cat >"$STATE/containerd/config.toml" <<EOF
version = 2
root = "$STATE/containerd/root"
state = "$RUN/containerd"
[grpc]
  address = "$SOCK"
[ttrpc]
  address = "$SOCK.ttrpc"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$PAUSE_IMAGE"
  restrict_oom_score_adj = $restrict
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "$cni"
    conf_dir = "$STATE/cni/net.d"
EOF
  echo "nameserver $DNS_IP" >"$STATE/kubelet/resolv.conf"
  cat >"$STATE/kubelet/config.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: $NODE_IP
port: $KUBELET_PORT
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: $KUBELET_HEALTHZ
tlsCertFile: $STATE/pki/kubelet.crt
tlsPrivateKeyFile: $STATE/pki/kubelet.key
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: $STATE/pki/ca.crt}
authorization: {mode: Webhook}
containerRuntimeEndpoint: unix://$SOCK
cgroupDriver: cgroupfs
cgroupRoot: $CGROUP_ROOT
cgroupsPerQOS: true
failCgroupV1: false
failSwapOn: false
clusterDomain: cluster.local
clusterDNS: [$DNS_IP]
resolvConf: $STATE/kubelet/resolv.conf
serializeImagePulls: false
maxPods: 50
podCIDR: $POD_CIDR
evictionHard: {memory.available: "100Mi", nodefs.available: "512Mi", imagefs.available: "512Mi", nodefs.inodesFree: "1%"}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
rotateCertificates: false
serverTLSBootstrap: false
registerNode: true
nodeStatusUpdateFrequency: 4s
EOF
  cat >"$STATE/kube-proxy.yaml" <<EOF
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection: {kubeconfig: $STATE/proxy.kubeconfig}
mode: iptables
hostnameOverride: $NODE
clusterCIDR: $POD_CIDR
bindAddress: $NODE_IP
healthzBindAddress: 127.0.0.1:$PROXY_HEALTHZ
metricsBindAddress: 127.0.0.1:$PROXY_METRICS
# masquerade Service traffic: pod -> Service -> pod on the same bridge works without br_netfilter
iptables: {masqueradeAll: true, localhostNodePorts: false, syncPeriod: 30s, minSyncPeriod: 1s}
# leave the kernel's conntrack settings alone
conntrack: {maxPerCore: 0, min: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s}
EOF
  local who
  for who in admin kcm scheduler kubelet proxy training-operator kwok kueue kube-router; do kubeconfig "$who"; done
}

# -- the network namespace -----------------------------------------------------------------------

network_up() {
  local other
  # a 10.x network nobody else routes (another instance with the same x would collide)
  other="$(ip -4 route show | grep -E "^$NET\." | grep -v " dev $VETH_HOST " || true)"
  [ -z "$other" ] || die "the host already routes $NET.0.0/16 ($other); set CGU_KUBE_NET=10.<x> or CGU_KUBE_ID"
  ip netns add "$NETNS" 2>/dev/null || true
  if ! ip link show "$VETH_HOST" >/dev/null 2>&1; then
    ip link add "$VETH_HOST" type veth peer name "$VETH_NS" netns "$NETNS"
  fi
  ip addr replace "$HOST_IP/30" dev "$VETH_HOST"
  ip link set "$VETH_HOST" up
  ip -n "$NETNS" addr replace "$NODE_IP/30" dev "$VETH_NS"
  ip -n "$NETNS" link set "$VETH_NS" up
  ip -n "$NETNS" link set lo up
  ip -n "$NETNS" route replace default via "$HOST_IP"
  # the host reaches pods and Services through the namespace
  ip route replace "$POD_CIDR" via "$NODE_IP" dev "$VETH_HOST"
  ip route replace "$SVC_CIDR" via "$NODE_IP" dev "$VETH_HOST"
  # forwarding inside the namespace only (its own setting, not the host's)
  nsenter --net="/run/netns/$NETNS" sysctl -qw net.ipv4.ip_forward=1
}

network_down() {
  ip link del "$VETH_HOST" 2>/dev/null || true   # its routes go with it
  ip route del unreachable "$KWOK_CIDR" 2>/dev/null || true   # on no device: kwok_up's
  if [ -e "/run/netns/$NETNS" ]; then
    ip netns del "$NETNS" 2>/dev/null || { umount -l "/run/netns/$NETNS" 2>/dev/null; rm -f "/run/netns/$NETNS"; }
  fi
}

# -- the host's kernel settings ---------------------------------------------------------------------

sysctls_save() {
  (
    flock 9
    if [ ! -s "$SYSCTL_SAVED" ]; then
      local key
      for key in $HOST_SYSCTLS; do
        [ -e "/proc/sys/${key//.//}" ] && echo "$key=$(sysctl -n "$key")"
      done >"$SYSCTL_SAVED"
    fi
    { grep -vx "$ID $STATE" "$SYSCTL_HOLDERS" 2>/dev/null || true; echo "$ID $STATE"; } >"$SYSCTL_HOLDERS.tmp"
    mv -f "$SYSCTL_HOLDERS.tmp" "$SYSCTL_HOLDERS"
  ) 9>"$LOCK"
}

# Restore them when no instance's kubelet runs any more.
sysctls_restore() {
  (
    flock 9
    [ -f "$SYSCTL_HOLDERS" ] || exit 0
    local id dir pid keep=""
    while read -r id dir; do
      [ "$id" = "$ID" ] && continue
      pid="$(cat "$dir/run/kubelet.pid" 2>/dev/null || true)"
      if [ -n "$pid" ] && tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF -- "$dir"; then
        keep+="$id $dir"$'\n'
      fi
    done <"$SYSCTL_HOLDERS"
    if [ -n "$keep" ]; then
      printf '%s' "$keep" >"$SYSCTL_HOLDERS"
      exit 0
    fi
    if [ -f "$SYSCTL_SAVED" ]; then
      local kv
      while IFS= read -r kv; do [ -n "$kv" ] && sysctl -qw "$kv" || true; done <"$SYSCTL_SAVED"
      log "restored the host's kernel settings ($(tr '\n' ' ' <"$SYSCTL_SAVED"))"
    fi
    rm -f "$SYSCTL_SAVED" "$SYSCTL_HOLDERS"
  ) 9>"$LOCK"
}

# -- cgroups ---------------------------------------------------------------------------------------

cgroups_up() {
  local hierarchy
  for hierarchy in /sys/fs/cgroup/*/; do
    case "$hierarchy" in */unified/) continue ;; esac
    [ -f "$hierarchy/cgroup.procs" ] || continue
    mkdir -p "$hierarchy$CGROUP_ROOT"
    if [ -f "$hierarchy/cpuset.cpus" ]; then
      cat "$hierarchy/cpuset.cpus" >"$hierarchy$CGROUP_ROOT/cpuset.cpus"
      cat "$hierarchy/cpuset.mems" >"$hierarchy$CGROUP_ROOT/cpuset.mems"
    fi
  done
  # cgroup v2 (unified only): one tree
  if [ -f /sys/fs/cgroup/cgroup.controllers ]; then
    mkdir -p "/sys/fs/cgroup$CGROUP_ROOT"
  fi
}

cgroups_down() {
  local dir
  for dir in /sys/fs/cgroup/*"$CGROUP_ROOT" /sys/fs/cgroup"$CGROUP_ROOT"; do
    [ -d "$dir" ] || continue
    # processes still inside (a container whose shim was killed) go first
    find "$dir" -name cgroup.procs -exec cat {} + 2>/dev/null | while read -r pid; do kill -KILL "$pid" 2>/dev/null || true; done
    find "$dir" -depth -type d -exec rmdir {} + 2>/dev/null || true
  done
}

# -- images -------------------------------------------------------------------------------------

addon_images() {
  mkdir -p "$ADDON_IMAGES"
  local name image tag root
  for name in pause coredns; do
    case "$name" in pause) image="$PAUSE_IMAGE" ;; coredns) image="$COREDNS_IMAGE" ;; esac
    tag="$(cat "$BUILD/.$name.key")"
    [ -f "$ADDON_IMAGES/$name.tar" ] && [ "$(cat "$ADDON_IMAGES/.$name.key" 2>/dev/null)" = "$tag" ] && continue
    root="$(mktemp -d)"
    mkdir -p "$root/etc"
    cp "$BUILD/$name" "$root/$name"
    printf 'nobody:x:65534:65534:nobody:/:/sbin/nologin\n' >"$root/etc/passwd"
    printf 'nogroup:x:65534:\n' >"$root/etc/group"
    python3 "$ROOT/scripts/kube_image.py" "$root" "$image" "$ADDON_IMAGES/$name.tar" \
      --entrypoint "[\"/$name\"]" --user 65534:65534 >/dev/null
    rm -rf "$root"
    echo "$tag" >"$ADDON_IMAGES/.$name.key"
  done
}

# import ARCHIVE...: load into containerd unless this very file was loaded already. The
# record is trusted only while containerd holds at least as many images as it lists: the
# kubelet's clean-up under disk pressure removes images, and a restart that trusted the
# record then ran without them (CoreDNS: "pause image not found"); then all are imported again.
import_images() {
  local archive stamp seen="$STATE/containerd/imported" held
  touch "$seen"
  held="$({ ctr --address "$SOCK" -n k8s.io images ls -q 2>/dev/null || true; } | wc -l)"
  if [ "$held" -lt "$(wc -l <"$seen")" ]; then
    log "containerd lost images it had imported ($held held); importing them again"
    : >"$seen"
  fi
  for archive in "$@"; do
    [ -f "$archive" ] || continue
    stamp="$(stat -c '%n %s %Y' "$archive")"
    grep -qxF "$stamp" "$seen" && continue
    case "$archive" in
      *.zst) zstd -dc "$archive" | ctr --address "$SOCK" -n k8s.io images import --no-unpack=false - >/dev/null ;;
      *) ctr --address "$SOCK" -n k8s.io images import "$archive" >/dev/null ;;
    esac
    { grep -v "^$(printf '%s' "$archive" | sed 's/[][\.*^$/]/\\&/g') " "$seen" || true; echo "$stamp"; } >"$seen.tmp"
    mv -f "$seen.tmp" "$seen"
    log "imported $(basename "$archive")"
  done
}

# -- cluster add-ons: storage, DNS, GPUs ---------------------------------------------------------

# A StorageClass whose volumes are directories under $STATE/pv, owned by the notebook
# user (1000:100): kube-controller-manager's own hostPath provisioner makes them root's.
# Claims come in bursts (three per notebook, a class starting at once): the Pending ones
# read together (until the watch is quiet for a moment, or PROVISION_BATCH of them) become
# one `kubectl create` of their volumes, and up to PROVISION_JOBS such batches run at once,
# so the burst waits neither on one claim at a time nor on a kubectl start per claim.
PROVISION_BATCH="${CGU_KUBE_PROVISION_BATCH:-40}"
PROVISION_JOBS="${CGU_KUBE_PROVISION_JOBS:-4}"

# pv_doc NAMESPACE CLAIM SIZE: the claim's directory, made, and its volume's document.
pv_doc() {
  local ns="$1" name="$2" size="$3" pv dir
  pv="$NAME-$(printf '%s/%s' "$ns" "$name" | sha256sum | cut -c1-12)"
  dir="$STATE/pv/$ns/$name"
  mkdir -p "$dir" && chown 1000:100 "$dir" && chmod 2775 "$dir" || return 0
  cat <<EOF
---
apiVersion: v1
kind: PersistentVolume
metadata:
  name: $pv
  labels: {cgu-kube/provisioned: "$ID"}
  annotations: {cgu-kube/path: "$dir"}
spec:
  capacity: {storage: $size}
  accessModes: [ReadWriteOnce]
  persistentVolumeReclaimPolicy: Retain
  storageClassName: $STORAGE_CLASS
  claimRef: {namespace: $ns, name: $name}
  hostPath: {path: $dir, type: Directory}
EOF
}

# provision_batch "ns name size"...: one create for the batch; a volume that exists
# already (a claim seen twice while Pending) is refused alone and the others are made.
provision_batch() {
  local line ns name size
  for line in "$@"; do
    read -r ns name size <<<"$line"
    pv_doc "$ns" "$name" "$size"
  done | kubectl create -f - >/dev/null 2>&1 || true
}

provisioner() {
  export KUBECONFIG="$KUBECONFIG_PATH"
  local ns name phase class size batch pv dir
  while true; do
    kubectl get pvc -A --watch -o jsonpath='{.metadata.namespace} {.metadata.name} {.status.phase} {.spec.storageClassName} {.spec.resources.requests.storage}{"\n"}' 2>/dev/null |
      {
        batch=()
        while true; do
          if read -r -t 0.2 ns name phase class size; then
            [ "$phase" = Pending ] && [ "$class" = "$STORAGE_CLASS" ] || continue
            batch+=("$ns $name $size")
            [ "${#batch[@]}" -ge "$PROVISION_BATCH" ] || continue
          elif [ $? -le 128 ]; then
            break # the watch ended (the API server restarted...): start it again
          fi
          [ "${#batch[@]}" -gt 0 ] || continue
          while [ "$(jobs -rp | wc -l)" -ge "$PROVISION_JOBS" ]; do wait -n || true; done
          provision_batch "${batch[@]}" &
          batch=()
        done
        [ "${#batch[@]}" -eq 0 ] || provision_batch "${batch[@]}"
        wait
      }
    sleep 1
  done &
  while true; do
    kubectl get pv -l "cgu-kube/provisioned=$ID" --watch -o jsonpath='{.metadata.name} {.status.phase} {.metadata.annotations.cgu-kube/path}{"\n"}' 2>/dev/null |
      while read -r pv phase dir; do
        [ "$phase" = Released ] || continue
        kubectl delete pv "$pv" --wait=false >/dev/null 2>&1 || true
        case "$dir" in "$STATE/pv/"?*) rm -rf "$dir" ;; esac
      done
    sleep 1
  done
}

addons() {
  kc apply -f - >/dev/null <<EOF
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: $STORAGE_CLASS
  annotations: {storageclass.kubernetes.io/is-default-class: "true"}
provisioner: cgu-lab.test/directory
reclaimPolicy: Delete
volumeBindingMode: Immediate
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: coredns, namespace: kube-system}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: "system:coredns"}
rules:
  - apiGroups: [""]
    resources: [endpoints, services, pods, namespaces]
    verbs: [list, watch]
  - apiGroups: [discovery.k8s.io]
    resources: [endpointslices]
    verbs: [list, watch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: "system:coredns"}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: "system:coredns"}
subjects: [{kind: ServiceAccount, name: coredns, namespace: kube-system}]
---
apiVersion: v1
kind: ConfigMap
metadata: {name: coredns, namespace: kube-system}
data:
  Corefile: |
    .:1053 {
        errors
        health :8080
        ready :8181
        kubernetes cluster.local in-addr.arpa ip6.arpa {
            pods insecure
            fallthrough in-addr.arpa ip6.arpa
        }
        cache 30
        loadbalance
    }
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: coredns
  namespace: kube-system
  labels: {k8s-app: kube-dns}
spec:
  replicas: 1
  selector: {matchLabels: {k8s-app: kube-dns}}
  template:
    metadata: {labels: {k8s-app: kube-dns}}
    spec:
      serviceAccountName: coredns
      dnsPolicy: Default
      priorityClassName: system-cluster-critical
      securityContext: {runAsNonRoot: true, runAsUser: 65534, runAsGroup: 65534, seccompProfile: {type: RuntimeDefault}}
      containers:
        - name: coredns
          image: $COREDNS_IMAGE
          imagePullPolicy: Never
          args: [-conf, /etc/coredns/Corefile]
          ports:
            - {name: dns, containerPort: 1053, protocol: UDP}
            - {name: dns-tcp, containerPort: 1053, protocol: TCP}
          readinessProbe: {httpGet: {path: /ready, port: 8181}, periodSeconds: 2}
          livenessProbe: {httpGet: {path: /health, port: 8080}, periodSeconds: 10}
          resources: {requests: {cpu: 20m, memory: 32Mi}, limits: {memory: 128Mi}}
          securityContext: {allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: {drop: [ALL]}}
          volumeMounts: [{name: config, mountPath: /etc/coredns, readOnly: true}]
      volumes:
        - name: config
          configMap: {name: coredns}
---
apiVersion: v1
kind: Service
metadata:
  name: kube-dns
  namespace: kube-system
  labels: {k8s-app: kube-dns}
spec:
  clusterIP: $DNS_IP
  selector: {k8s-app: kube-dns}
  ports:
    - {name: dns, port: 53, targetPort: 1053, protocol: UDP}
    - {name: dns-tcp, port: 53, targetPort: 1053, protocol: TCP}
EOF
}

# The node's GPUs: extended resources on its status (what a device plugin would report).
gpus() {
  [ -n "$GPUS" ] || return 0
  local pair json="" labels
  for pair in ${GPUS//,/ }; do json+="\"${pair%%=*}\": \"${pair#*=}\","; done
  json="{${json%,}}"
  kc patch node "$NODE" --subresource=status --type=merge \
    -p "{\"status\": {\"capacity\": $json, \"allocatable\": $json}}" >/dev/null
  labels=("nvidia.com/gpu.product=$GPU_PRODUCT" "nvidia.com/gpu.present=true")
  kc label node "$NODE" --overwrite "${labels[@]}" >/dev/null
}

# Kubeflow's training operator (v1.8.1, tools/training-operator), PyTorchJobs only, on the
# host like the control plane. Its CRD: the one in ../shared/upstream-crds when that folder
# exists (the version the backend's objects are validated against), else its own module's.
# Its webhooks stay unregistered (no ValidatingWebhookConfiguration: the CRD's schema
# validates), but it waits for its certificate rotator before it starts its controllers:
# the rotator fills a Secret (in the namespace MY_POD_NAMESPACE names) and waits for the
# certificate to appear in a fixed /tmp/k8s-webhook-server/serving-certs, where a pod
# would have the Secret mounted. On the host, run.sh plays that volume (it copies the
# Secret there every 2 s) in a private tmpfs on that folder, in a mount namespace of its
# own, which also keeps instances on one host apart. Workers get no init container (upstream's waits for the master's
# name with an alpine image, and there is no registry): ranks retry their rendezvous anyway.
training_operator() {
  local m="$STATE/training-operator" shared="$ROOT/../shared/upstream-crds/kubeflow.org_pytorchjobs.v1.9.0.yaml.gz"
  rm -rf "$m"
  mkdir -p "$m"
  tar -C "$m" -xf "$BUILD/training-operator.manifests.tar"
  echo '[]' >"$m/init-containers.yaml"
  cat >"$m/run.sh" <<'EOF'
#!/bin/sh
# run.sh KUBECONFIG COMMAND...: see training_operator in scripts/kube-cluster.sh
set -e
kubeconfig="$1"
shift
# Only the certificate's folder is private: the rest of /tmp stays (a checkout, and so
# this cluster's binaries and kubeconfigs, may live below /tmp).
mkdir -p /tmp/k8s-webhook-server
mount -t tmpfs -o size=16m,mode=0700 tmpfs /tmp/k8s-webhook-server
dir=/tmp/k8s-webhook-server/serving-certs
mkdir -p "$dir"
copy() {
  found="$(kubectl --kubeconfig="$kubeconfig" -n kubeflow get secret training-operator-webhook-cert \
    -o 'jsonpath={.data.tls\.crt} {.data.tls\.key}' 2>/dev/null)" || return 0
  set -- $found
  [ $# = 2 ] || return 0
  echo "$1" | base64 -d >"$dir/.tls.crt" && mv -f "$dir/.tls.crt" "$dir/tls.crt"
  echo "$2" | base64 -d >"$dir/.tls.key" && mv -f "$dir/.tls.key" "$dir/tls.key"
}
(while :; do copy; sleep 2; done) &
exec "$@"
EOF
  if [ -f "$shared" ]; then zcat "$shared" >"$m/pytorchjobs.yaml"; else cp "$m/crds/kubeflow.org_pytorchjobs.yaml" "$m/pytorchjobs.yaml"; fi
  kc apply --server-side -f "$m/pytorchjobs.yaml" >/dev/null
  established "the training operator" pytorchjobs.kubeflow.org
  kc apply -f "$m/rbac/role.yaml" >/dev/null
  kc apply -f - >/dev/null <<EOF
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: cgu-training-operator}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: training-operator}
subjects: [{kind: User, apiGroup: rbac.authorization.k8s.io, name: cgu-training-operator}]
---
apiVersion: v1
kind: Namespace
metadata: {name: kubeflow}
---
apiVersion: v1
kind: Secret
metadata: {name: training-operator-webhook-cert, namespace: kubeflow}
EOF
  daemon training-operator env MY_POD_NAMESPACE=kubeflow \
    unshare --mount --propagation private sh "$m/run.sh" "$STATE/training-operator.kubeconfig" \
    "$BUILD/training-operator" --kubeconfig="$STATE/training-operator.kubeconfig" \
    --enable-scheme=pytorchjob --metrics-bind-address="127.0.0.1:$OPERATOR_METRICS" \
    --health-probe-bind-address="127.0.0.1:$OPERATOR_PROBES" --webhook-server-port="$OPERATOR_WEBHOOKS" \
    --pytorch-init-container-template-file="$m/init-containers.yaml" \
    --controller-threads=2 --zap-log-level=info
  wait_for training-operator 90 curl -fsS --max-time 1 "http://127.0.0.1:$OPERATOR_PROBES/readyz"
  log "training operator ready (PyTorchJob) [$(elapsed)]"
}

# NetworkPolicies enforced on the node: kube-router with its firewall only (no routing,
# no service proxy, no CNI of its own: the bridge plugin and kube-proxy stay), in the
# node's network namespace, where the pods' bridged and routed traffic passes its
# iptables chains. It runs as its own user, bound to the ClusterRole of its upstream
# DaemonSet manifest. Its ACCEPT for traffic from the node itself (the kubelet's probes)
# covers the namespace's own addresses only: the host's, where a test's controller runs,
# must be admitted by the policy (KubeSettings.controller_cidrs), as a school's would be.
netpol_up() {
  local r="$STATE/kube-router"
  rm -rf "$r"
  mkdir -p "$r"
  tar -C "$r" -xf "$BUILD/kube-router.manifests.tar"
  kc create --dry-run=client -o json -f "$r/generic-kuberouter.yaml" | python3 -c '
import json, sys
# kubectl prints one JSON document per object of the manifest, one after another
decoder, text, at, found = json.JSONDecoder(), sys.stdin.read(), 0, []
while text[at:].strip():
    item, at = decoder.raw_decode(text, len(text) - len(text[at:].lstrip()))
    found.append(item)
(role,) = [o for o in found if o["kind"] == "ClusterRole"]
role["metadata"] = {"name": "cgu-kube-router"}
print(json.dumps(role))' >"$r/role.json"
  kc apply -f "$r/role.json" >/dev/null
  kc apply -f - >/dev/null <<BIND
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: cgu-kube-router}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: cgu-kube-router}
subjects: [{kind: User, apiGroup: rbac.authorization.k8s.io, name: cgu-kube-router}]
BIND
  daemon kube-router --netns "$BUILD/kube-router" --kubeconfig="$STATE/kube-router.kubeconfig" \
    --hostname-override="$NODE" --run-firewall=true --run-router=false --run-service-proxy=false \
    --enable-cni=false --service-cluster-ip-range="$SVC_CIDR" --health-port="$ROUTER_HEALTH" \
    --metrics-port=0 --iptables-sync-period=1m --v=1
  wait_for kube-router 60 nsenter --net="/run/netns/$NETNS" curl -fsS --max-time 1 "http://127.0.0.1:$ROUTER_HEALTH/healthz"
  log "kube-router ready (NetworkPolicies enforced) [$(elapsed)]"
}

# Kueue (v0.17, tools/kueue) queues PyTorchJobs, on the host like the training operator,
# with its own Configuration: the kubeflow.org/pytorchjob integration only; waitForPodsReady
# (a job's pods must all run before the next job is admitted, and a job whose pods do not
# all start in time is evicted and requeued: all-or-nothing for multi-node jobs); no
# leader election; its probes, metrics and webhooks on this instance's ports. Its CRDs,
# ClusterRole and webhooks come from its module's manifests. Certificates: its own
# management is off and the webhook server's certificate, for 127.0.0.1, is signed by
# the cluster's CA here, so that the API server reaches Kueue's webhooks by URL (no
# Service, no pod); only those for Kueue's own kinds and PyTorchJobs are registered
# (the others serve integrations that are not enabled). Its visibility API server (an
# aggregated API on a fixed port, which the test API server is not set up to aggregate)
# is off: the controller reads a job's place from Workloads; so is MultiKueue (one cluster
# here; it watches Secrets in kueue-system, which a Role outside its ClusterRole grants,
# and Kueue stops when that watch cannot sync). Kueue reads its metrics
# server's certificate from a fixed /etc/kueue/metrics/certs, where a pod would mount
# it: run.sh lays an overlay on /etc, in a mount namespace of its own, that adds that
# folder and nothing else (the host's /etc is untouched, and instances stay apart).
kueue_up() {
  local k="$STATE/kueue" p="$STATE/pki"
  rm -rf "$k"
  mkdir -p "$k/certs"
  tar -C "$k" -xf "$BUILD/kueue.manifests.tar"
  openssl req -newkey rsa:2048 -nodes -subj "/CN=cgu-kueue-webhook" -keyout "$k/certs/tls.key" -out "$k/webhook.csr" 2>/dev/null
  printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\nkeyUsage=critical,digitalSignature,keyEncipherment\n' >"$k/webhook.ext"
  openssl x509 -req -in "$k/webhook.csr" -CA "$p/ca.crt" -CAkey "$p/ca.key" -CAcreateserial -CAserial "$k/ca.srl" \
    -days 3650 -extfile "$k/webhook.ext" -out "$k/certs/tls.crt" 2>/dev/null
  rm -f "$k/webhook.csr" "$k/webhook.ext" "$k/ca.srl"
  chmod 600 "$k/certs/tls.key"
  cat >"$k/config.yaml" <<CONFIG
apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
namespace: kueue-system
health: {healthProbeBindAddress: "127.0.0.1:$KUEUE_PROBES"}
metrics: {bindAddress: "127.0.0.1:$KUEUE_METRICS"}
webhook: {host: 127.0.0.1, port: $KUEUE_WEBHOOKS, certDir: "$k/certs"}
leaderElection: {leaderElect: false}
internalCertManagement: {enable: false}
manageJobsWithoutQueueName: false
featureGates: {VisibilityOnDemand: false, MultiKueue: false}
waitForPodsReady:
  timeout: 5m
  blockAdmission: true
  requeuingStrategy: {timestamp: Eviction, backoffBaseSeconds: 10, backoffMaxSeconds: 300}
integrations:
  frameworks: [kubeflow.org/pytorchjob]
CONFIG
  cat >"$k/run.sh" <<'RUN'
#!/bin/sh
# run.sh DIR COMMAND...: see kueue_up in scripts/kube-cluster.sh (in its own mount namespace)
set -e
dir="$1"
shift
mkdir -p "$dir/etc"
mount -t tmpfs -o size=16m,mode=0755 tmpfs "$dir/etc"
mkdir -p "$dir/etc/upper/kueue/metrics/certs" "$dir/etc/work"
cp "$dir/certs/tls.crt" "$dir/certs/tls.key" "$dir/etc/upper/kueue/metrics/certs/"
mount -t overlay overlay -o "lowerdir=/etc,upperdir=$dir/etc/upper,workdir=$dir/etc/work" /etc
exec "$@"
RUN
  kc apply --server-side -f "$k/crd/bases" >/dev/null
  local role
  established Kueue {clusterqueues,localqueues,resourceflavors,workloads}.kueue.x-k8s.io
  kc apply -f "$k/rbac/role.yaml" >/dev/null
  role="$(kc create --dry-run=client -o jsonpath='{.metadata.name}' -f "$k/rbac/role.yaml")"
  kc apply -f - >/dev/null <<BIND
apiVersion: v1
kind: Namespace
metadata: {name: kueue-system}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: cgu-kueue}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: $role}
subjects: [{kind: User, apiGroup: rbac.authorization.k8s.io, name: cgu-kueue}]
BIND
  # its webhooks, called by URL on this host, for Kueue's kinds and PyTorchJobs
  kc create --dry-run=client -o json -f "$k/webhook/manifests.yaml" |
    python3 "$ROOT/scripts/kube_webhooks.py" "https://127.0.0.1:$KUEUE_WEBHOOKS" "$p/ca.crt" cgu-kueue- \
      kueue.x-k8s.io kubeflow.org/pytorchjobs >"$k/webhooks.json"
  daemon kueue env KUBECONFIG="$STATE/kueue.kubeconfig" \
    unshare --mount --propagation private sh "$k/run.sh" "$k" \
    "$BUILD/kueue" --config="$k/config.yaml" --zap-log-level=info
  wait_for kueue 120 curl -fsS --max-time 1 "http://127.0.0.1:$KUEUE_PROBES/readyz"
  kc apply -f "$k/webhooks.json" >/dev/null
  touch "$RUN/kueue.ready"
  log "Kueue ready (PyTorchJob queues) [$(elapsed)]"
}

# -- the fleet: simulated GPU nodes (KWOK) --------------------------------------------------------

# The school's machines, one shape per slot of 20 (a fleet of N cycles through them):
# labels as NVIDIA's GPU Feature Discovery writes them, resources as its device plugin
# advertises them. Fields: product memory(MiB) count arch mig-strategy replicas resources.
# Time-slicing as the device plugin does it by default (renameByDefault: false): the
# slices stay nvidia.com/gpu and GFD appends -SHARED to the product.
FLEET_SHAPES=(
  "NVIDIA-RTX-A5000 24564 4 amd64 none 0 nvidia.com/gpu=4"
  "NVIDIA-RTX-A5000 24564 4 amd64 none 0 nvidia.com/gpu=4"
  "NVIDIA-RTX-A5000 24564 4 amd64 none 0 nvidia.com/gpu=4"
  "NVIDIA-RTX-A5000 24564 4 amd64 none 0 nvidia.com/gpu=4"
  "NVIDIA-RTX-A5000 24564 4 amd64 none 0 nvidia.com/gpu=4"
  "Tesla-V100-SXM2-32GB 32768 8 amd64 none 0 nvidia.com/gpu=8"
  "Tesla-V100-SXM2-32GB 32768 8 amd64 none 0 nvidia.com/gpu=8"
  "Tesla-V100-SXM2-32GB 32768 8 amd64 none 0 nvidia.com/gpu=8"
  "Quadro-P4000 8192 1 amd64 none 0 nvidia.com/gpu=1"
  "Quadro-P4000 8192 1 amd64 none 0 nvidia.com/gpu=1"
  "Quadro-P4000 8192 1 amd64 none 0 nvidia.com/gpu=1"
  "Quadro-P4000 8192 1 amd64 none 0 nvidia.com/gpu=1"
  "Quadro-P4000 8192 1 amd64 none 0 nvidia.com/gpu=1"
  "Quadro-P4000 8192 1 amd64 none 0 nvidia.com/gpu=1"
  "NVIDIA-A100-SXM4-80GB 81920 4 amd64 mixed 0 nvidia.com/gpu=2,nvidia.com/mig-1g.10gb=7,nvidia.com/mig-3g.40gb=2"
  "NVIDIA-H100-80GB-HBM3 81559 8 amd64 mixed 0 nvidia.com/gpu=4,nvidia.com/mig-1g.10gb=14,nvidia.com/mig-2g.20gb=6"
  "NVIDIA-RTX-A5000-SHARED 24564 4 amd64 none 4 nvidia.com/gpu=16"
  "NVIDIA-RTX-A5000-SHARED 24564 4 amd64 none 4 nvidia.com/gpu=16"
  "NVIDIA-Jetson-AGX-Orin 32768 1 arm64 none 0 nvidia.com/gpu=1"
  "NVIDIA-Jetson-AGX-Orin 32768 1 arm64 none 0 nvidia.com/gpu=1"
)

# kwok on the host, managing only nodes annotated kwok.x-k8s.io/node=fake (the real node
# stays the kubelet's): it keeps their leases and status, and plays their pods' lives
# (Running when bound, gone when deleted). Pod IPs come from a range no real pod uses.
kwok_up() {
  alive kwok >/dev/null && return 0
  kc apply -f - >/dev/null <<EOF
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: cgu-kwok}
rules:
  - apiGroups: [""]
    resources: [nodes, pods]
    verbs: [get, list, watch, update, patch, delete]
  - apiGroups: [""]
    resources: [nodes/status, pods/status]
    verbs: [update, patch]
  - apiGroups: [""]
    resources: [events]
    verbs: [create, patch, update]
  - apiGroups: [coordination.k8s.io]
    resources: [leases]
    verbs: [get, list, watch, create, update, patch, delete]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: cgu-kwok}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: cgu-kwok}
subjects: [{kind: User, apiGroup: rbac.authorization.k8s.io, name: cgu-kwok}]
EOF
  daemon kwok "$BUILD/kwok" --kubeconfig="$STATE/kwok.kubeconfig" \
    --manage-all-nodes=false --manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake \
    --cidr="$NET.192.1/18" --node-ip="$NODE_IP" --server-address="127.0.0.1:$KWOK_PORT" \
    --node-lease-duration-seconds=40
  # A simulated pod's address must fail at once, not follow the host's default route off
  # the machine (the controller reads its notebooks' pods: culler, monitor, starts).
  ip route replace unreachable "$KWOK_CIDR"
  wait_for kwok 60 curl -fsS --max-time 1 "http://127.0.0.1:$KWOK_PORT/healthz"
}

# fleet N: N simulated nodes named <cluster>-gpu-<i> (more are removed, with their pods).
# They carry the taint GPU nodes commonly carry (nvidia.com/gpu=present:NoSchedule), which
# only GPU pods tolerate (cgu-lab's do): CoreDNS and CPU notebooks never land on a node
# that does not exist. GPU pods may: tests that need a GPU pod to really run make the
# fleet go first (`fleet 0`), as tests/test_kube_fleet.py does when it is done.
fleet() {
  local n="$1" i shape product memory count arch mig replicas resources json pair labels
  [[ "$n" =~ ^[0-9]+$ ]] || die "fleet N: N is a number of nodes"
  running || die "the cluster is not running"
  build kwok
  [ "$n" = 0 ] || kwok_up
  local doc="$STATE/fleet.yaml"
  : >"$doc"
  for ((i = 0; i < n; i++)); do
    shape="${FLEET_SHAPES[$((i % ${#FLEET_SHAPES[@]}))]}"
    read -r product memory count arch mig replicas resources <<<"$shape"
    json="\"cpu\": \"32\", \"memory\": \"256Gi\", \"pods\": \"110\", \"ephemeral-storage\": \"1Ti\""
    for pair in ${resources//,/ }; do json+=", \"${pair%%=*}\": \"${pair#*=}\""; done
    labels="\"kubernetes.io/hostname\": \"$NAME-gpu-$i\", \"kubernetes.io/os\": \"linux\", \"kubernetes.io/arch\": \"$arch\", \"type\": \"kwok\", \"cgu-kube/fleet\": \"$ID\""
    labels+=", \"nvidia.com/gpu.present\": \"true\", \"nvidia.com/gpu.product\": \"$product\", \"nvidia.com/gpu.memory\": \"$memory\", \"nvidia.com/gpu.count\": \"$count\", \"nvidia.com/mig.strategy\": \"$mig\""
    [ "$replicas" = 0 ] || labels+=", \"nvidia.com/gpu.replicas\": \"$replicas\", \"nvidia.com/gpu.sharing-strategy\": \"time-slicing\""
    cat >>"$doc" <<EOF
{"apiVersion": "v1", "kind": "Node",
 "metadata": {"name": "$NAME-gpu-$i", "labels": {$labels},
              "annotations": {"kwok.x-k8s.io/node": "fake", "node.alpha.kubernetes.io/ttl": "0"}},
 "spec": {"taints": [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}]},
 "status": {"capacity": {$json}, "allocatable": {$json}}}
EOF
  done
  [ "$n" = 0 ] || kc apply -f "$doc" >/dev/null
  # nodes beyond N go
  local extra
  extra="$(kc get nodes -l "cgu-kube/fleet=$ID" -o name | awk -F"$NAME-gpu-" -v n="$n" '$2 + 0 >= n')"
  [ -z "$extra" ] || kc delete --wait=false $extra >/dev/null
  if [ "$n" -gt 0 ]; then
    local deadline=$(($(date +%s) + 120))
    until [ "$(kc get nodes -l "cgu-kube/fleet=$ID" -o jsonpath='{range .items[*]}{.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}' | grep -c True)" -ge "$n" ]; do
      [ "$(date +%s)" -lt "$deadline" ] || die "the fleet's nodes were not Ready after 120s"
      sleep 1
    done
  fi
  log "fleet: $n simulated GPU nodes Ready [$(elapsed)]"
}

# -- start, stop ---------------------------------------------------------------------------------------

node_ready() {
  kc get node "$NODE" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null | grep -q True
}

running() {
  alive kube-apiserver >/dev/null && alive kubelet >/dev/null && alive containerd >/dev/null &&
    [ -f "$KUBECONFIG_PATH" ] && kc get --raw /readyz >/dev/null 2>&1
}

start() {
  local why
  why="$(can_run)" || die "this host cannot run the test cluster: $why"
  if running; then
    echo "$KUBECONFIG_PATH"
    return 0
  fi
  stop_all keep
  build "${COMPONENTS[@]}" "${ADDONS[@]}" training-operator kube-router  # kwok: with the fleet
  case "$KUEUE" in
    1) (exec 8>"$BUILD/.kueue.lock" && flock 8 && build kueue) ;;
    auto)
      if built kueue; then
        KUEUE=1
      else
        log "starting without Kueue: it is not built yet (make test builds it in the background:" \
          ".build/kube-kueue.log; or scripts/kube-cluster.sh build kueue); the queue tests skip"
      fi
      ;;
  esac
  packages
  # a start that fails leaves nothing behind (the host restored, as after stop)
  trap 'rc=$?; if [ $rc -ne 0 ]; then log "start failed; cleaning up (logs in $STATE/logs)"; stop_all keep; fi' EXIT
  local port
  for port in "$API_PORT" "$ETCD_PORT" "$ETCD_PEER_PORT" "$KCM_PORT" "$SCHED_PORT" \
    "$OPERATOR_METRICS" "$OPERATOR_PROBES" "$OPERATOR_WEBHOOKS" "$KWOK_PORT" \
    "$KUEUE_METRICS" "$KUEUE_PROBES" "$KUEUE_WEBHOOKS"; do
    port_free "$port" || die "port 127.0.0.1:$port is in use (another program? set CGU_KUBE_PORT_BASE or CGU_KUBE_ID)"
  done
  mkdir -p "$STATE/run" "$STATE/logs" "$RUN"
  chmod 700 "$STATE"
  : >"$STATE/logs/start.log"
  pki
  configs
  addon_images
  network_up
  cgroups_up
  log "network $NET.0.0/16 (API $HOST_IP:$API_PORT, node $NODE_IP, pods $POD_CIDR, services $SVC_CIDR) [$(elapsed)]"

  daemon containerd --netns containerd --config "$STATE/containerd/config.toml"
  wait_for containerd 30 ctr --address "$SOCK" version
  import_images "$ADDON_IMAGES"/*.tar
  # the large archives load while the control plane starts (not the notebook flavours,
  # notebook-pytorch..., several GB each: `scripts/kube-cluster.sh import` loads one)
  local archives=() archive
  for archive in "$IMAGES"/*.tar "$IMAGES"/*.tar.zst; do
    case "$(basename "$archive")" in notebook-*) ;; *) archives+=("$archive") ;; esac
  done
  (import_images "${archives[@]}" >"$STATE/logs/import.log" 2>&1; echo $? >"$STATE/run/import.rc") &
  local importing=$!
  log "containerd ready [$(elapsed)]"

  [ "$(uname -m)" = aarch64 ] && export ETCD_UNSUPPORTED_ARCH=arm64
  rm -rf "$STATE/etcd"
  daemon etcd etcd --name "$NAME" --data-dir "$STATE/etcd" \
    --listen-client-urls "http://127.0.0.1:$ETCD_PORT" --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" \
    --listen-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
    --initial-cluster "$NAME=http://127.0.0.1:$ETCD_PEER_PORT" --initial-cluster-state new \
    --unsafe-no-fsync --logger zap --log-level warn
  wait_for etcd 30 curl -fsS --max-time 1 "http://127.0.0.1:$ETCD_PORT/health"

  local p="$STATE/pki"
  daemon kube-apiserver "$BUILD/kube-apiserver" \
    --bind-address="$HOST_IP" --advertise-address="$HOST_IP" --secure-port="$API_PORT" \
    --etcd-servers="http://127.0.0.1:$ETCD_PORT" \
    --tls-cert-file="$p/apiserver.crt" --tls-private-key-file="$p/apiserver.key" \
    --client-ca-file="$p/ca.crt" --token-auth-file="$p/tokens.csv" \
    --kubelet-client-certificate="$p/apiserver-kubelet-client.crt" \
    --kubelet-client-key="$p/apiserver-kubelet-client.key" \
    --kubelet-certificate-authority="$p/ca.crt" \
    --kubelet-preferred-address-types=InternalIP \
    --authorization-mode=Node,RBAC --enable-admission-plugins=NodeRestriction \
    --service-account-issuer=https://kubernetes.default.svc.cluster.local \
    --service-account-key-file="$p/sa.pub" --service-account-signing-key-file="$p/sa.key" \
    --service-cluster-ip-range="$SVC_CIDR" --allow-privileged=true --profiling=false \
    ${CGU_KUBE_APISERVER_ARGS:-}
  wait_for kube-apiserver 120 kc get --raw /readyz
  log "kube-apiserver ready [$(elapsed)]"

  # A node is marked Unknown after 40 s without a heartbeat, Kubernetes' long-standing
  # default: kwok renews a whole fleet's leases on a 2-core host and may be late, and the
  # platform takes a silent node's GPUs out of its pool (backends/kube_nodes.not_ready).
  daemon kube-controller-manager "$BUILD/kube-controller-manager" \
    --kubeconfig="$STATE/kcm.kubeconfig" \
    --authentication-kubeconfig="$STATE/kcm.kubeconfig" --authorization-kubeconfig="$STATE/kcm.kubeconfig" \
    --bind-address=127.0.0.1 --secure-port="$KCM_PORT" --leader-elect=false \
    --service-account-private-key-file="$p/sa.key" --root-ca-file="$p/ca.crt" \
    --use-service-account-credentials=true \
    --cluster-signing-cert-file="$p/ca.crt" --cluster-signing-key-file="$p/ca.key" \
    --service-cluster-ip-range="$SVC_CIDR" --allocate-node-cidrs=false \
    --controllers='*,-nodeipam,-cloud-node-lifecycle,-service-lb-controller,-node-route-controller' \
    --concurrent-statefulset-syncs=5 --node-monitor-grace-period=40s
  daemon kube-scheduler "$BUILD/kube-scheduler" \
    --kubeconfig="$STATE/scheduler.kubeconfig" \
    --authentication-kubeconfig="$STATE/scheduler.kubeconfig" --authorization-kubeconfig="$STATE/scheduler.kubeconfig" \
    --bind-address=127.0.0.1 --secure-port="$SCHED_PORT" --leader-elect=false

  sysctls_save
  daemon kubelet --netns "$BUILD/kubelet" \
    --config="$STATE/kubelet/config.yaml" --kubeconfig="$STATE/kubelet.kubeconfig" \
    --root-dir="$STATE/kubelet/root" --cert-dir="$STATE/kubelet/pki" \
    --hostname-override="$NODE" --node-ip="$NODE_IP" --v=1
  daemon kube-proxy --netns "$BUILD/kube-proxy" --config="$STATE/kube-proxy.yaml" --v=1
  daemon provisioner "$0" _provisioner "$STATE"
  local deadline=$(($(date +%s) + START_TIMEOUT)) c
  until node_ready; do
    for c in kube-controller-manager kube-scheduler kubelet kube-proxy; do
      alive "$c" >/dev/null || { tail -n 40 "$STATE/logs/$c.log" >&2; die "$c exited (log above)"; }
    done
    [ "$(date +%s)" -lt "$deadline" ] || { tail -n 40 "$STATE/logs/kubelet.log" >&2; die "the node was not Ready after ${START_TIMEOUT}s"; }
    sleep 0.5
  done
  log "node $NODE Ready [$(elapsed)]"
  disk_check
  gpus
  addons
  netpol_up
  deadline=$(($(date +%s) + START_TIMEOUT))
  until [ "$(kc -n kube-system get deploy coredns -o jsonpath='{.status.readyReplicas}' 2>/dev/null)" = 1 ]; do
    [ "$(date +%s)" -lt "$deadline" ] || { kc -n kube-system get pods -o wide >&2; die "CoreDNS was not ready after ${START_TIMEOUT}s"; }
    sleep 0.5
  done
  training_operator
  [ "$KUEUE" != 1 ] || kueue_up
  [ "$FLEET" = 0 ] || fleet "$FLEET"
  wait "$importing" || true
  [ "$(cat "$STATE/run/import.rc" 2>/dev/null)" = 0 ] || { cat "$STATE/logs/import.log" >&2; die "importing the images failed"; }
  cat "$STATE/logs/import.log" >&2
  disk_check
  log "cluster DNS ready at $DNS_IP; started in $(elapsed)"
  trap - EXIT
  echo "$KUBECONFIG_PATH"
}

# The disk under the cluster's state, in MiB free. The kubelet evicts pods and refuses new
# ones below 512 MiB (evictionHard), so a nearly full disk makes every notebook start hang
# Pending; said here, at once, instead of by a suite of timeouts.
DISK_LOW_MIB=4096
free_mib() { df -Pm "$STATE" | awk 'NR == 2 {print $4}'; }

disk_check() {
  local free
  free="$(free_mib)"
  if kc get node "$NODE" -o jsonpath='{.status.conditions[?(@.type=="DiskPressure")].status}' 2>/dev/null | grep -qx True; then
    die "the node reports DiskPressure: ${free} MiB free on $(df -P "$STATE" | awk 'NR == 2 {print $6}'); pods would not start (free some disk)"
  fi
  [ "$free" -ge "$DISK_LOW_MIB" ] ||
    log "warning: only ${free} MiB free on the disk of $STATE; the kubelet stops pods below 512 MiB, and notebooks write to it"
}

diagnose() {
  echo "disk: $(free_mib) MiB free under $STATE"
  running || { echo "the cluster is not running"; return 0; }
  kc get node "$NODE" -o jsonpath='node {.metadata.name}: {range .status.conditions[*]}{.type}={.status} {end}{"\ntaints: "}{.spec.taints}{"\n"}' 2>&1
  echo "pods not running:"
  kc get pods -A -o wide --field-selector=status.phase!=Running,status.phase!=Succeeded 2>&1 | head -n 20
  echo "latest warnings:"
  kc get events -A --field-selector type=Warning --sort-by=.lastTimestamp 2>&1 | tail -n 15
}

# stop_all [keep]: every process, pod, mount, cgroup and the network; `keep` leaves the
# images (containerd's content store) for the next start.
stop_all() {
  mkdir -p "$STATE/run"
  stop_these kwok kueue training-operator kube-router provisioner kube-proxy kubelet kube-scheduler kube-controller-manager
  # pods' sandboxes through CRI: the runtime runs CNI DEL and removes their network namespaces
  if alive containerd >/dev/null && [ -x "$BUILD/cri-clean" ]; then
    timeout 120 "$BUILD/cri-clean" "unix://$SOCK" >/dev/null 2>&1 || log "some pod sandboxes could not be removed cleanly"
  fi
  stop_these kube-apiserver containerd
  stop_these etcd
  # shims of our containerd, if any survived it
  local pid
  for pid in $(pgrep -f -- "containerd-shim-runc-v2 .*-address $SOCK" 2>/dev/null || true); do kill -KILL "$pid" 2>/dev/null || true; done
  cgroups_down
  # what the kubelet and containerd mounted under our folders
  { grep -oE " ($STATE|$RUN)/[^ ]*" /proc/self/mounts || true; } | sort -r | while read -r mount; do
    umount "$mount" 2>/dev/null || umount -l "$mount" 2>/dev/null || true
  done
  network_down
  sysctls_restore
  rm -rf "$RUN" "$STATE/etcd" "$STATE/pv" "$STATE/cni/ipam" "$STATE/kubelet/root" "$STATE/kubelet/pki"
  if [ "${1:-}" != keep ] && [ -d "$STATE/containerd/root" ]; then
    rm -rf "$STATE/containerd/root" "$STATE/containerd/imported"
  fi
}

stop() {
  [ "$(id -u)" = 0 ] || die "stop needs root"
  [ -d "$STATE" ] || return 0
  stop_all keep
  log "stopped [$(elapsed)]"
}

status() {
  running || return 1
  echo "$KUBECONFIG_PATH"
}

env_lines() {
  cat <<EOF
CGU_KUBE_KUBECONFIG=$KUBECONFIG_PATH
CGU_KUBE_ID=$ID
CGU_KUBE_NODE=$NODE
CGU_KUBE_HOST_IP=$HOST_IP
CGU_KUBE_NODE_IP=$NODE_IP
CGU_KUBE_API=https://$HOST_IP:$API_PORT
CGU_KUBE_POD_CIDR=$POD_CIDR
CGU_KUBE_KWOK_CIDR=$KWOK_CIDR
CGU_KUBE_SERVICE_CIDR=$SVC_CIDR
CGU_KUBE_DNS_IP=$DNS_IP
CGU_KUBE_STORAGE_CLASS=$STORAGE_CLASS
CGU_KUBE_GPUS=$GPUS
CGU_KUBE_STATE=$STATE
CGU_KUBE_IMAGES=$IMAGES
CGU_KUBE_CONTAINERD=$SOCK
CGU_KUBE_KUEUE=$([ -e "$RUN/kueue.ready" ] && echo 1 || echo 0)
EOF
}

case "${1:-}" in
  build) shift; locked build "$@" ;;
  build-aside) shift; build_aside "${1:?usage: kube-cluster.sh build-aside NAME}" ;;
  start) start ;;
  stop) stop ;;
  clean) stop_all; rm -rf "$STATE"; log "removed $STATE" ;;
  status) status ;;
  env) env_lines ;;
  can-run) can_run ;;
  diagnose) diagnose ;;
  import) shift; running || die "the cluster is not running"; import_images "$@" ;;
  kubectl) shift; kc "$@" ;;
  _provisioner) provisioner ;;
  fleet) shift; fleet "${1:?usage: kube-cluster.sh fleet N}" ;;
  *) sed -n '2,10p' "$0" >&2; exit 2 ;;
esac

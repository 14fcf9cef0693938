#!/usr/bin/env bash
# cgu-lab's images without a registry or a container builder (`make images`):
#   scripts/kube-images.sh [notebook] [controller] [postgres]    (default: all three)
#   FLAVOUR=pytorch|tensorflow scripts/kube-images.sh notebook
#
# One recipe for every image: a Debian root file system (mmdebstrap, variant minbase, with
# python3-venv), a venv in /opt/venv holding the cgu_lab wheel built from this checkout
# (versions pinned by constraints.txt), an unprivileged user, packed by
# scripts/kube_image.py as a docker-archive, compressed with zstd:
#   notebook    the notebook side only (`pip install cgu_lab`, no extras): JupyterLab, the
#               server and lab extensions; user jovyan 1000:100, home /home/jovyan. With
#               the Apps launcher's programs, as on a local machine (scripts/deps.sh): the
#               Linux desktop (Debian's TigerVNC Xvnc, openbox, xterm, xauth, fonts), its
#               web browser (Debian's Chromium, with its sandbox where the pod allows user
#               namespaces), MariaDB's server program and client for an environment whose
#               database is MariaDB (notebook/apps/database_mariadb.py; no service) and
#               VS Code (the code-server `make install` built on this host from npm, with
#               this host's Node.js it was built for, in /opt/code-server).
#               FLAVOUR=pytorch or tensorflow adds that framework from PyPI with the CUDA
#               libraries as wheels (torch brings them; tensorflow[and-cuda]) and names the
#               image after it.
#   controller  `pip install cgu_lab[controller,kubernetes]`; user cgu-lab 10001:10001,
#               runs `cgu-lab controller --backend kubernetes` (deploy/kubernetes/base).
#   postgres    Debian's PostgreSQL 15, for the test cluster's deployment of the controller
#               (a school brings its own database).
# deploy/images/Containerfile builds the same images where a registry and a builder exist.
#
# Output: .build/kube-images/<image>.tar.zst and images.env (the names the tests use);
# when the test cluster runs (scripts/kube-cluster.sh), the archives are imported into its
# containerd. Archives are cached outside the clone
# (${XDG_CACHE_HOME:-~/.cache}/cgu-lab/images), keyed on the wheel's inputs and on this
# recipe, so an unchanged checkout rebuilds nothing. Push one to a registry with
#   zstd -dc .build/kube-images/notebook.tar.zst > /tmp/nb.tar &&
#   skopeo copy docker-archive:/tmp/nb.tar docker://REGISTRY/cgu-lab/notebook:TAG
# (or `podman load -i /tmp/nb.tar` then `podman push`). Needs root (mmdebstrap, chroot).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT="${CGU_KUBE_IMAGES:-$ROOT/.build/kube-images}"
CACHE="${CGU_IMAGE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/cgu-lab/images}"
SUITE="${DEBIAN_SUITE:-bookworm}"
MIRROR="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
FLAVOUR="${FLAVOUR:-slim}"
PYTHON="${PYTHON:-$ROOT/.venv/bin/python}"
VERSION="$(sed -n 's/^ *"version": *"\([^"]*\)".*/\1/p' "$ROOT/package.json" | head -1)"
BASE_PACKAGES="python3,python3-venv,ca-certificates,tini"
# The desktop app's programs; libgssapi-krb5-2 for code-server's kerberos module; the
# browser app's Chromium with a scalable font (it draws no text with X's bitmap fonts);
# the MariaDB database app's server program and client (not Debian's mariadb-server, the
# machine's service).
NOTEBOOK_PACKAGES="$BASE_PACKAGES,tigervnc-standalone-server,openbox,xterm,xauth,xfonts-base,ripgrep,libgssapi-krb5-2"
NOTEBOOK_PACKAGES="$NOTEBOOK_PACKAGES,chromium,fonts-liberation,mariadb-server-core,mariadb-client"
# code-server as `make install` left it in the venv (scripts/code-server.sh).
CODE_SERVER="$(dirname "$(dirname "$PYTHON")")/lib/cgu-lab/code-server"
POSTGRES_PACKAGES="postgresql-15,tini"

log() { echo "kube-images.sh: $*" >&2; }
die() { log "$*"; exit 1; }
T0=$(date +%s)
step() { log "[$(($(date +%s) - T0))s] $*"; }

case "$FLAVOUR" in
  slim) NOTEBOOK_NAME="docker.io/cgu-lab/notebook:$VERSION" EXTRA_PIP="" ;;
  pytorch) NOTEBOOK_NAME="docker.io/cgu-lab/notebook-pytorch:$VERSION" EXTRA_PIP="torch torchvision" ;;
  tensorflow) NOTEBOOK_NAME="docker.io/cgu-lab/notebook-tensorflow:$VERSION" EXTRA_PIP="tensorflow[and-cuda]" ;;
  *) die "FLAVOUR must be slim, pytorch or tensorflow" ;;
esac
CONTROLLER_NAME="docker.io/cgu-lab/controller:$VERSION"
POSTGRES_NAME="docker.io/cgu-lab/test-postgres:15"

[ "$(id -u)" = 0 ] || die "needs root (mmdebstrap and chroot); run it as root or use deploy/images/Containerfile"

# -- cache keys -------------------------------------------------------------------------------

# The files the wheel is made of (tracked or new, not ignored) plus the built lab extension.
wheel_inputs() {
  cd "$ROOT"
  {
    if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
      git ls-files -co --exclude-standard -- cgu_lab server_extension pyproject.toml constraints.txt \
        install.json package.json README.md LICENSE
    else
      find cgu_lab server_extension -type f ! -path '*/__pycache__/*'
      ls pyproject.toml constraints.txt install.json package.json README.md LICENSE 2>/dev/null
    fi
    find cgu_lab/labextension -type f 2>/dev/null
  } | LC_ALL=C sort -u | while read -r f; do [ -f "$f" ] && echo "$f"; done
}

key_of() {  # key_of IMAGE: what decides its content
  { echo "$1 $FLAVOUR $SUITE $BASE_PACKAGES"
    [ "$1" != notebook ] || echo "$NOTEBOOK_PACKAGES $(code_server_version) $(node --version 2>/dev/null)"
    sha256sum "$ROOT/scripts/kube-images.sh" "$ROOT/scripts/kube_image.py"
    (cd "$ROOT" && wheel_inputs | xargs -d '\n' sha256sum)
  } | sha256sum | cut -c1-16
}

base_key() {  # base_key PACKAGES
  { echo "$SUITE $1"; sed -n '/^base_rootfs()/,/^}/p' "$ROOT/scripts/kube-images.sh"; } |
    sha256sum | cut -c1-16
}

code_server_version() {
  cat "$CODE_SERVER/.version" 2>/dev/null || echo none
}

# -- steps ----------------------------------------------------------------------------------------

need() {
  local want=()
  command -v mmdebstrap >/dev/null || want+=(mmdebstrap)
  command -v zstd >/dev/null || want+=(zstd)
  [ ${#want[@]} -gt 0 ] || return 0
  command -v apt-get >/dev/null || die "missing: ${want[*]}"
  log "installing ${want[*]} with apt-get"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${want[@]}" >&2 ||
    { apt-get update -q >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${want[@]}" >&2; }
}

# base_rootfs NAME PACKAGES: a Debian root file system, cached as a tar.
base_rootfs() {
  local name="$1" packages="$2" key archive
  key="$(base_key "$packages")"
  archive="$CACHE/$name-$SUITE-$key.tar.zst"
  if [ ! -f "$archive" ]; then
    step "Debian $SUITE minbase + $packages (mmdebstrap)"
    nice -n 10 mmdebstrap --quiet --variant=minbase --include="$packages" \
      --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-exclude=/usr/share/man/*' \
      --dpkgopt='path-exclude=/usr/share/locale/*' --dpkgopt='path-include=/usr/share/doc/*/copyright' \
      --customize-hook='rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/*.bin' \
      "$SUITE" "$WORK/$name.tar" "$MIRROR" >&2
    zstd -q -T0 -3 "$WORK/$name.tar" -o "$archive.part" && mv -f "$archive.part" "$archive"
    rm -f "$WORK/$name.tar"
    find "$CACHE" -maxdepth 1 -name "$name-$SUITE-*.tar.zst" ! -name "$(basename "$archive")" -delete
  fi
  echo "$archive"
}

wheel() {
  [ -z "${WHEEL:-}" ] || return 0
  step "the cgu_lab wheel"
  [ -f "$ROOT/cgu_lab/labextension/static/style.js" ] ||
    log "the lab extension is not built yet: the wheel build runs jlpm build:prod (needs make install first)"
  # An editable reinstall writes its shared data through the lab extension's development
  # link, leaving a copy of install.json that the wheel then holds twice.
  rm -f "$ROOT/cgu_lab/labextension/install.json"
  mkdir -p "$WORK/wheel"
  # Not into the source tree: hatch writes only the wheel to -w.
  env -u PIP_FIND_LINKS "$PYTHON" -m pip wheel -q --no-deps -w "$WORK/wheel" "$ROOT" >&2
  WHEEL="$(ls "$WORK"/wheel/cgu_lab-*.whl)"
}

# venv ROOTFS PIP-ARGS...: /opt/venv in the chroot, pip run there (its Python is Debian's,
# not the host's). env -i: the host's PIP_* settings (PIP_FIND_LINKS...) must not leak in;
# PIP_CERT: the host's CA bundle, which trusts a TLS-inspecting proxy if there is one.
# Without a framework flavour, the wheels come from a wheelhouse outside the clone, keyed on
# constraints.txt (pins every version), and only what it lacks is downloaded: a rebuild for
# a changed cgu_lab downloads nothing.
venv() {
  local rootfs="$1" house
  shift
  cp /etc/resolv.conf "$rootfs/etc/resolv.conf"
  cp /etc/ssl/certs/ca-certificates.crt "$rootfs/tmp/host-ca.crt"
  cp "$WHEEL" "$ROOT/constraints.txt" "$rootfs/tmp/"
  house="$CACHE/wheelhouse-$(sha256sum "$ROOT/constraints.txt" | cut -c1-12)"
  [ -z "$EXTRA_PIP" ] || house="$WORK/wheelhouse"   # frameworks: GBs, not kept
  mkdir -p "$house" "$rootfs/tmp/wheelhouse"
  find "$CACHE" -maxdepth 1 -name 'wheelhouse-*' ! -path "$house" -exec rm -rf {} +
  mount --bind "$house" "$rootfs/tmp/wheelhouse"
  local rc=0 pip="nice -n 10 chroot '$rootfs' /opt/venv/bin/pip"
  local offline="$pip install -q --no-index --find-links /tmp/wheelhouse -c /tmp/constraints.txt $*"
  env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 \
    PIP_CERT=/tmp/host-ca.crt PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_CACHE_DIR=1 \
    PIP_DEFAULT_TIMEOUT=120 PIP_PROGRESS_BAR=off \
    sh -c "chroot '$rootfs' python3 -m venv /opt/venv &&
           { $offline 2>/dev/null ||
             { $pip download -q -d /tmp/wheelhouse -c /tmp/constraints.txt $* &&
               rm -f '$rootfs'/tmp/wheelhouse/cgu_lab-* && $offline; }; }" >&2 || rc=$?
  rm -f "$rootfs"/tmp/wheelhouse/cgu_lab-*
  umount "$rootfs/tmp/wheelhouse"
  [ $rc -eq 0 ] || die "pip install in the image failed"
  : >"$rootfs/etc/resolv.conf"   # the runtime writes the pod's own
  rm -rf "$rootfs"/tmp/* "$rootfs"/root/.cache
}

build_image() {
  local image="$1" key archive rootfs
  case "$image" in
    notebook) archive="$CACHE/$image-$FLAVOUR-$(key_of "$image").tar.zst" ;;
    controller) archive="$CACHE/$image-$(key_of "$image").tar.zst" ;;
    postgres)  # no cgu_lab inside: only the recipe matters
      key="$({ echo "$SUITE $POSTGRES_PACKAGES"; sha256sum "$ROOT/scripts/kube-images.sh" "$ROOT/scripts/kube_image.py"; } | sha256sum | cut -c1-16)"
      archive="$CACHE/$image-$key.tar.zst" ;;
  esac
  if [ ! -f "$archive" ]; then
    [ "$image" = postgres ] || wheel
    rootfs="$WORK/rootfs-$image"
    rm -rf "$rootfs"
    mkdir -p "$rootfs"
    if [ "$image" = postgres ]; then
      zstd -dc "$(base_rootfs postgres "$POSTGRES_PACKAGES")" | tar -C "$rootfs" --numeric-owner --ignore-zeros -xf -
    elif [ "$image" = notebook ]; then
      zstd -dc "$(base_rootfs notebook "$NOTEBOOK_PACKAGES")" | tar -C "$rootfs" --numeric-owner --ignore-zeros -xf -
    else
      zstd -dc "$(base_rootfs base "$BASE_PACKAGES")" | tar -C "$rootfs" --numeric-owner --ignore-zeros -xf -
    fi
    local whl
    whl="/tmp/$(basename "${WHEEL:-none}")"
    case "$image" in
      notebook)
        step "notebook image ($FLAVOUR): venv with cgu_lab${EXTRA_PIP:+ and $EXTRA_PIP}"
        venv "$rootfs" "$whl" "$EXTRA_PIP"
        chroot "$rootfs" useradd --uid 1000 --gid 100 --create-home --home-dir /home/jovyan --shell /bin/bash jovyan
        code_server_into "$rootfs"
        browser_into "$rootfs"
        chroot "$rootfs" /usr/sbin/mariadbd --version >/dev/null ||
          die "MariaDB's server does not run in the notebook image"
        local listed
        listed="$(env -i PATH=/opt/venv/bin:/usr/bin:/bin HOME=/home/jovyan \
          "$(command -v chroot)" "$rootfs" /opt/venv/bin/jupyter server extension list 2>&1)" ||
          die "jupyter server extension list failed in the notebook image: $listed"
        grep -q "cgu_lab.*enabled" <<<"$listed" || die "the server extension is not enabled in the notebook image: $listed"
        python3 "$ROOT/scripts/kube_image.py" "$rootfs" "$NOTEBOOK_NAME" "$WORK/$image.tar" \
          --env PATH=/opt/venv/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
          --env LANG=C.UTF-8 --env SHELL=/bin/bash --user 1000:100 --workdir /home/jovyan \
          --entrypoint '["/usr/bin/tini", "--"]' --cmd '["jupyter", "lab"]' \
          --label "org.opencontainers.image.source=cgu-lab scripts/kube-images.sh" >/dev/null
        ;;
      controller)
        step "controller image: venv with cgu_lab[controller,kubernetes]"
        venv "$rootfs" "'${whl}[controller,kubernetes]'"
        chroot "$rootfs" useradd --uid 10001 --user-group --create-home --home-dir /var/lib/cgu-lab cgu-lab
        python3 "$ROOT/scripts/kube_image.py" "$rootfs" "$CONTROLLER_NAME" "$WORK/$image.tar" \
          --env PATH=/opt/venv/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
          --env LANG=C.UTF-8 --env CGU_LAB_DATA_DIR=/var/lib/cgu-lab --env CGU_LAB_BACKEND=kubernetes \
          --env CGU_LAB_HOST=0.0.0.0 --user 10001:10001 --workdir /var/lib/cgu-lab \
          --entrypoint '["/usr/bin/tini", "--", "cgu-lab"]' \
          --cmd '["controller", "--backend", "kubernetes", "--host", "0.0.0.0", "--port", "8000"]' >/dev/null
        ;;
      postgres)
        step "PostgreSQL image (for the test cluster's controller deployment)"
        postgres_entrypoint >"$rootfs/usr/local/bin/cgu-postgres"
        chmod 755 "$rootfs/usr/local/bin/cgu-postgres"
        local uid
        uid="$(awk -F: '$1 == "postgres" { print $3 ":" $4 }' "$rootfs/etc/passwd")"
        python3 "$ROOT/scripts/kube_image.py" "$rootfs" "$POSTGRES_NAME" "$WORK/$image.tar" \
          --env PGDATA=/var/lib/postgresql/data/pgdata --env LANG=C.UTF-8 --user "$uid" \
          --entrypoint '["/usr/bin/tini", "--", "/usr/local/bin/cgu-postgres"]' >/dev/null
        ;;
    esac
    rm -rf "$rootfs"
    step "$image: $(du -h "$WORK/$image.tar" | cut -f1) uncompressed; compressing"
    zstd -q -T0 -3 --rm "$WORK/$image.tar" -o "$archive.part" && mv -f "$archive.part" "$archive"
    # older archives of this image
    find "$CACHE" -maxdepth 1 -name "$(basename "${archive%-*}")-*.tar.zst" ! -name "$(basename "$archive")" -delete
  else
    step "$image: from the cache ($(basename "$archive"))"
  fi
  local out="$OUT/$image.tar.zst"
  [ "$image" = notebook ] && [ "$FLAVOUR" != slim ] && out="$OUT/notebook-$FLAVOUR.tar.zst"
  # unchanged archives keep their time stamp: the cluster does not import them again
  cmp -s "$archive" "$out" 2>/dev/null || { cp -f "$archive" "$out.part" && mv -f "$out.part" "$out"; }
  step "$image: $out ($(du -h "$out" | cut -f1) compressed)"
  BUILT+=("$out")
}

# code_server_into ROOTFS: VS Code for the Apps launcher, as the venv has it (its native
# modules were built for this host's Node.js, so that Node.js goes with it; the image is
# the same Debian release as a host that builds it). Without it the image offers no VS
# Code, and the launcher says why (cgu_lab/notebook/apps/registry.py).
code_server_into() {
  local rootfs="$1" node
  if [ ! -f "$CODE_SERVER/.version" ]; then
    log "no code-server in $CODE_SERVER (make install builds it): the notebook image has no VS Code"
    return 0
  fi
  node="$(readlink -f "$(command -v node)")"
  step "VS Code: code-server $(code_server_version) and Node.js $(node --version)"
  mkdir -p "$rootfs/opt/code-server"
  cp -a "$CODE_SERVER/." "$rootfs/opt/code-server/"
  install -m 755 "$node" "$rootfs/usr/local/bin/node"
  ln -sf /opt/code-server/node_modules/.bin/code-server "$rootfs/usr/local/bin/code-server"
  chroot "$rootfs" /usr/local/bin/code-server --version >/dev/null ||
    die "code-server does not run in the notebook image"
}

# browser_into ROOTFS: Chromium's sandbox needs user namespaces, which a pod under the
# runtime's default seccomp profile (the platform's pods: backends/kube_parts.py) is
# refused; without them Chromium does not start at all. Debian's chromium script reads
# /etc/chromium.d/, where this asks, at each start, whether the pod can make one, and adds
# --no-sandbox only where it cannot (the pod's own account, seccomp and network still
# bound what a page can reach).
browser_into() {
  local rootfs="$1"
  cat >"$rootfs/etc/chromium.d/cgu-lab" <<'EOF'
# Written by cgu-lab (scripts/kube-images.sh): Chromium's sandbox where the pod allows it.
if ! unshare --user true 2>/dev/null; then
  export CHROMIUM_FLAGS="$CHROMIUM_FLAGS --no-sandbox"
fi
EOF
  [ -x "$rootfs/usr/lib/chromium/chromium" ] || die "the notebook image has no Chromium"
}

# A PostgreSQL server for a test deployment: a new data folder is initialised with
# POSTGRES_USER / POSTGRES_PASSWORD / POSTGRES_DB (password authentication over TCP).
postgres_entrypoint() {
  cat <<'EOF'
#!/bin/sh
set -eu
bin=/usr/lib/postgresql/15/bin
: "${PGDATA:?}" "${POSTGRES_USER:=postgres}" "${POSTGRES_PASSWORD:?}" "${POSTGRES_DB:=$POSTGRES_USER}"
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  mkdir -p "$PGDATA" && chmod 700 "$PGDATA"
  printf '%s' "$POSTGRES_PASSWORD" >/tmp/pw
  "$bin/initdb" -D "$PGDATA" -U "$POSTGRES_USER" --pwfile=/tmp/pw --auth=scram-sha-256 >/dev/null
  rm -f /tmp/pw
  echo "host all all 0.0.0.0/0 scram-sha-256" >>"$PGDATA/pg_hba.conf"
  if [ "$POSTGRES_DB" != postgres ]; then
    echo "CREATE DATABASE \"$POSTGRES_DB\" OWNER \"$POSTGRES_USER\"" |
      "$bin/postgres" --single -D "$PGDATA" -j postgres >/dev/null
  fi
fi
exec "$bin/postgres" -D "$PGDATA" -c listen_addresses='*' -c unix_socket_directories=/tmp
EOF
}

cleanup() {
  local rc=$? mount
  { grep -o " $WORK/[^ ]*" /proc/self/mounts || true; } | while read -r mount; do umount -l "$mount" || true; done
  rm -rf "$WORK"
  exit "$rc"
}

BUILT=()

main() {
  local images=("$@")
  [ ${#images[@]} -gt 0 ] || images=(notebook controller postgres)
  need
  mkdir -p "$OUT" "$CACHE"
  # one build at a time per checkout (`make test` starts one in the background)
  exec 9>"$OUT/.lock"
  flock -n 9 || { log "waiting for the image build already running in this checkout"; flock 9; }
  WORK="$(mktemp -d "${TMPDIR:-/var/tmp}/cgu-images.XXXXXX")"
  trap cleanup EXIT
  local image
  for image in "${images[@]}"; do
    case "$image" in notebook | controller | postgres) build_image "$image" ;; *) die "unknown image '$image'" ;; esac
  done
  {
    echo "CGU_NOTEBOOK_IMAGE=docker.io/cgu-lab/notebook:$VERSION"
    echo "CGU_CONTROLLER_IMAGE=$CONTROLLER_NAME"
    echo "CGU_POSTGRES_IMAGE=$POSTGRES_NAME"
  } >"$OUT/images.env"
  if [ ${#BUILT[@]} -gt 0 ] && "$ROOT/scripts/kube-cluster.sh" status >/dev/null 2>&1; then
    "$ROOT/scripts/kube-cluster.sh" import "${BUILT[@]}"
  fi
  step "done"
}

main "$@"

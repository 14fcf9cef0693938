#!/usr/bin/env bash
# System packages cgu-lab needs on Debian/Ubuntu. To run: a Python that every
# account can execute (for per-user notebooks), Node.js for the lab extension
# build, useradd for per-user accounts. With --test, also what only the tests
# and benchmarks need: Chromium for the UI tests, PostgreSQL for the store tests
# and wrk for the benchmarks.
set -euo pipefail

missing=()
have() { command -v "$1" >/dev/null 2>&1; }
/usr/bin/python3 -c "import venv, ensurepip" >/dev/null 2>&1 || missing+=(python3-venv)
have node || missing+=(nodejs)
have npm || missing+=(npm)
have useradd || missing+=(passwd)
# Each notebook's private network reaches the internet through slirp4netns (backends/local.py).
have slirp4netns || missing+=(slirp4netns)
# VM notebooks on the local backend: QEMU, qemu-img for each VM's disk, OVMF for UEFI images.
have qemu-system-x86_64 || missing+=(qemu-system-x86)
have qemu-img || missing+=(qemu-utils)
[ -f /usr/share/OVMF/OVMF_CODE_4M.fd ] || [ -f /usr/share/OVMF/OVMF_CODE.fd ] || missing+=(ovmf)
# The notebooks' Linux desktop (cgu_lab/notebook/apps): TigerVNC's Xvnc, openbox, a terminal
# with its fonts, xauth for the display's cookie; ripgrep for code-server's search.
have Xvnc || missing+=(tigervnc-standalone-server)
have openbox || missing+=(openbox)
have xterm || missing+=(xterm)
have xauth || missing+=(xauth)
[ -d /usr/share/fonts/X11/misc ] || missing+=(xfonts-base)
have rg || missing+=(ripgrep)
# Building code-server's native modules (scripts/code-server.sh): Kerberos headers.
[ -f /usr/include/gssapi/gssapi.h ] || missing+=(libkrb5-dev)
# The database app's MariaDB, an administrator's choice for an environment
# (cgu_lab/notebook/apps/database_mariadb.py): the server program and the client, started
# per notebook. Not Debian's mariadb-server: that is the machine's own service, which
# would start a server of its own when installed.
[ -x /usr/sbin/mariadbd ] || missing+=(mariadb-server-core)
have mariadb-dump || missing+=(mariadb-client)
if [ "${1:-}" = "--test" ]; then
  have chromium || missing+=(chromium)
  ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || missing+=(postgresql)
  have wrk || missing+=(wrk)
  # The test VM image (scripts/vm-test-image.sh): its ext4 disk and the gzip'd initramfs.
  have mkfs.ext4 || missing+=(e2fsprogs)
  have gzip || missing+=(gzip)
  # The desktop's clipboard round trip in the UI tests: a program inside the desktop copies.
  [ -x /usr/bin/xclip ] || missing+=(xclip)
  # The school login's tests run a real LDAP server (tests/directory/servers.py).
  [ -x /usr/sbin/slapd ] || missing+=(slapd)
  have ldapmodify || missing+=(ldap-utils)
  # The R recipe's test (tests/test_apps_r.py): its build finds them rather than installing
  # them (the database recipe's PostgreSQL is the store tests' one above).
  have R || missing+=(r-base-core)
  [ -d /usr/lib/R/site-library/IRkernel ] || missing+=(r-cran-irkernel)
fi

if [ "${#missing[@]}" -eq 0 ]; then
  exit 0
fi
if [ "$(id -u)" != 0 ]; then
  echo "missing system packages: ${missing[*]} (install them as root: apt-get install ${missing[*]})" >&2
  exit 1
fi
echo "==> installing system packages: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -q --no-install-recommends "${missing[@]}" 2>&1 |
  { grep --line-buffered -E '^(Unpacking|Setting up) ' || true; }

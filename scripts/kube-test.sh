#!/usr/bin/env bash
# A manual check of the kubernetes backend on the test API server (scripts/kube-apiserver.sh):
#   scripts/kube-test.sh up     start it, apply deploy/kubernetes/base and the test CRDs, write a
#                               kubeconfig holding a token of the controller's ServiceAccount,
#                               and print how to run the controller against it
#   scripts/kube-test.sh nodes  play scheduler, kubelet and StatefulSet controller for notebooks
#                               in cgu-u-*/cgu-g-* namespaces until Ctrl-C (pods never really run:
#                               there is no container runtime, so the proxy cannot reach them)
#   scripts/kube-test.sh down   stop the API server (its state is discarded)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PYTHON="${PYTHON:-$ROOT/.venv/bin/python}"
cd "$ROOT"

case "${1:-}" in
  up)
    kubeconfig="$(scripts/kube-apiserver.sh start)"
    controller="$(dirname "$kubeconfig")/controller.kubeconfig"
    "$PYTHON" - "$kubeconfig" "$controller" <<'PY'
import sys
from pathlib import Path
from tests.test_kubernetes_backend import install, token_kubeconfig
admin = install(sys.argv[1])
token_kubeconfig(sys.argv[1], admin, "cgu-lab-controller", Path(sys.argv[2]))
PY
    cat <<MSG
The API server runs, with cgu-lab's CRDs, RBAC and admission policy. Run the controller as
its ServiceAccount (only the shipped RBAC applies), and in another shell: scripts/kube-test.sh nodes

  CGU_LAB_KUBE_KUBECONFIG=$controller \\
  CGU_LAB_KUBE_CONTROLLER_URL=http://127.0.0.1:8000 \\
  .venv/bin/cgu-lab controller --backend kubernetes --data-dir /tmp/cgu-lab-kube-controller
MSG
    ;;
  nodes)
    kubeconfig="$(scripts/kube-apiserver.sh status)" || { echo "run: $0 up" >&2; exit 1; }
    "$PYTHON" - "$kubeconfig" <<'PY'
import sys
from tests.test_kubernetes_backend import Admin, FakeNodes
nodes = FakeNodes(Admin(sys.argv[1]), prefixes=("cgu-u-", "cgu-g-"))
nodes.start()
print("playing scheduler and kubelet for cgu-u-*/cgu-g-*; Ctrl-C to stop", flush=True)
try:
    while nodes.is_alive():
        nodes.join(1)
        if nodes.failures:
            print(nodes.failures.pop(0), file=sys.stderr, flush=True)
except KeyboardInterrupt:
    pass
PY
    ;;
  down) scripts/kube-apiserver.sh stop ;;
  *) echo "usage: $0 up|nodes|down" >&2; exit 2 ;;
esac

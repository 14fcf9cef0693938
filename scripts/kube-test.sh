#!/usr/bin/env bash
# A manual check of the kubernetes backend on the test API server (scripts/kube-apiserver.sh):
#   scripts/kube-test.sh up     start it, apply deploy/kubernetes/base and the test CRDs, write a
#                               kubeconfig holding a token of the controller's ServiceAccount,
#                               and print how to run the controller against it
#   scripts/kube-test.sh nodes  play scheduler, kubelet and StatefulSet controller for notebooks
#                               in cgu-u-*/cgu-g-* namespaces until Ctrl-C (pods never really run:
#                               there is no container runtime, so the proxy cannot reach them)
#   scripts/kube-test.sh down   stop the API server (its state is discarded)
#   scripts/kube-test.sh prepare
#                               build what the Kubernetes tests need in the background
#   scripts/kube-test.sh with-cluster COMMAND...
#                               run COMMAND (the test suite) with the real one-node cluster
#                               (scripts/kube-cluster.sh) and the images (scripts/kube-images.sh)
#                               when this host can run them, stopping the cluster afterwards
#                               (the host restored) unless it was already running; where it
#                               cannot (not root...), say why and run COMMAND without it: the
#                               real-cluster tests then skip. `make test` runs pytest this way.
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
  prepare)
    # `make test` first: the Kubernetes binaries (a cold build is ~25 min on 2 cores) and the
    # images build in the background at the lowest CPU priority while the tests that need
    # neither run; the builds `make test-kube` starts later wait for it (a lock) and reuse
    # it. Kueue's (43 min alone at nice 19 on 2 cores at load 25-35) comes after them,
    # under a lock of its own that nothing waits on.
    mkdir -p .build
    if scripts/kube-cluster.sh can-run >/dev/null; then
      what='scripts/kube-cluster.sh build && scripts/kube-images.sh'
      # Kueue last and aside (kube-cluster.sh's KUEUE): no start waits for it; a cluster
      # started before it is built runs without it, and the runs after it have it.
      aside='scripts/kube-cluster.sh build-aside kueue >.build/kube-kueue.log 2>&1'
    else
      what='scripts/kube-cluster.sh build kube-apiserver'
      aside=true
    fi
    nohup nice -n 19 bash -c "$what; $aside" >.build/kube-prepare.log 2>&1 </dev/null &
    echo "==> building the Kubernetes test binaries and images in the background (log: .build/kube-prepare.log)" >&2
    ;;
  with-cluster)
    shift
    [ $# -gt 0 ] || { echo "usage: $0 with-cluster COMMAND..." >&2; exit 2; }
    started=0
    if why="$(scripts/kube-cluster.sh can-run)"; then
      if scripts/kube-cluster.sh status >/dev/null 2>&1; then
        echo "==> the test cluster already runs; the Kubernetes tests use it" >&2
        # images of this checkout as it is now (cached; a rebuilt one is imported)
        scripts/kube-images.sh >&2 || { [ "${CI:-}" != true ] || exit 1; }
      elif scripts/kube-cluster.sh build && scripts/kube-images.sh &&
        { scripts/kube-cluster.sh start >/dev/null ||
          # a failed start leaves nothing behind; one more try before the tests go without
          # it (a busy host has once left a CRD unserved, and once nsenter refused)
          { echo "==> the test cluster did not start; trying once more" >&2 &&
            scripts/kube-cluster.sh start >/dev/null; }; }; then
        started=1
      else
        echo "==> the test cluster did not start (logs: .build/kube-cluster/logs)" >&2
        [ "${CI:-}" != true ] || exit 1
      fi
    else
      echo "==> skipping the real-cluster tests (tests/test_kube_cluster.py): $why" >&2
    fi
    # stopped however the command ends (a failure, Ctrl-C)
    trap 'rc=$?; if [ "$started" = 1 ]; then scripts/kube-cluster.sh stop || rc=1; fi; exit $rc' EXIT
    trap 'exit 130' INT TERM
    "$@"
    ;;
  *) echo "usage: $0 up|nodes|down|prepare|with-cluster COMMAND..." >&2; exit 2 ;;
esac

"""What a local notebook's server is started with: its command line and environment.

Apart from `local.py` so the backend keeps to its size; the VM console reuses none of
it (it has its own), the Kubernetes objects build theirs in `kube_objects`.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from .base import (
    AUTHORIZER,
    CONTENTS_MANAGER,
    IDENTITY_PROVIDER,
    NotebookSpec,
    kernel_culling_args,
)


def code_server_program() -> str:
    """The code-server that scripts/code-server.sh put beside the platform ("": none)."""
    program = Path(sys.prefix) / "bin" / "code-server"
    return str(program) if program.exists() else ""


def notebook_argv(
    jupyter: Path, spec: NotebookSpec, port: int | None, sock: Path | None = None
) -> list[str]:
    """JupyterLab's command line: a Unix socket only its account may open (in a private
    network) or a loopback port; our identity, authorizer and contents."""
    listen = (
        [f"--ServerApp.sock={sock}", "--ServerApp.sock_mode=0600"]
        if sock is not None
        else ["--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}"]
    )
    return [
        str(jupyter),
        "--no-browser",
        *listen,
        "--ServerApp.port_retries=0",
        f"--ServerApp.base_url={spec.base_path}",
        "--ServerApp.allow_remote_access=True",
        f"--ServerApp.identity_provider_class={IDENTITY_PROVIDER}",
        f"--ServerApp.authorizer_class={AUTHORIZER}",
        f"--ServerApp.contents_manager_class={CONTENTS_MANAGER}",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
        "--ServerApp.allow_root=True",
        *kernel_culling_args(spec.kernel_culling),
    ]


def notebook_env(
    instance: str, spec: NotebookSpec, prefix: Path, home: Path, account: str
) -> dict[str, str]:
    """The whole environment of a notebook's server: nothing of the controller's leaks in."""
    disk = spec.quota.limits.disk if spec.quota is not None else None
    env = {
        "PATH": f"{prefix / 'bin'}:/usr/local/bin:/usr/bin:/bin",
        "HOME": str(home),
        "USER": account,
        "LOGNAME": account,
        "LANG": os.environ.get("LANG", "C.UTF-8"),
        "SHELL": "/bin/bash",
        "TERM": "xterm-256color",
        "JUPYTER_CONFIG_DIR": str(home / ".jupyter"),
        "CGU_LAB_INSTANCE": instance,
        "CGU_NOTEBOOK_ID": str(spec.id),
        "CGU_NOTEBOOK_OWNER": spec.owner,
        "CGU_NOTEBOOK_NAME": spec.name,
        "CGU_CONTROLLER_URL": spec.controller_url,
        "CGU_PUBLIC_URL": spec.public_url,
        "CGU_PROXY_SECRET": spec.proxy_secret,
        "CGU_API_TOKEN": spec.api_token,
        "CUDA_VISIBLE_DEVICES": ",".join(spec.devices),
        "CGU_CPU_LIMIT": str(spec.cpu_milli / 1000),
        "CGU_MEM_LIMIT": str(spec.memory),
        "CGU_GPU_TYPE": spec.gpu_type or "",
        # The apps beside JupyterLab (cgu_lab/notebook/apps): the environment's list.
        "CGU_APPS": spec.environment.apps,
        # VS Code, where scripts/code-server.sh installed it beside the platform.
        "CGU_CODE_SERVER": code_server_program(),
        # The owner's disk allowance in bytes ("": none); uploads past it are refused.
        "CGU_DISK_ALLOWANCE": "" if disk is None else str(disk),
    }
    env.update(spec.device_env)
    return env

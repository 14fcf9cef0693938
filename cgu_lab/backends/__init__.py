"""Backends: where notebooks really run.

`base.Backend` is the one interface the controller uses; `local.LocalBackend`
runs JupyterLab processes on this machine and `kubernetes` drives a cluster.
Everything a backend remembers about a running notebook lives in the opaque
`backend_state` dictionary the controller stores for it, so neither the core
rules nor the API ever assume processes, ports or pods.
"""

from .base import Backend


def create_backend(name: str, settings) -> Backend:
    """Build the backend chosen on the command line."""
    if name == "local":
        from .local import LocalBackend

        return LocalBackend(settings)
    if name == "kubernetes":
        from .kube_settings import KubeSettings
        from .kubernetes import KubernetesBackend

        return KubernetesBackend(KubeSettings.from_env())
    raise ValueError(f"unknown backend '{name}'; choose 'local' or 'kubernetes'")

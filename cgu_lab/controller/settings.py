"""The controller's settings, read once from the command line and environment.

Every option has a `CGU_LAB_<NAME>` environment variable so containers can be
configured without flags.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from ..core.origins import OriginPlan


def _env(name: str, default: str) -> str:
    return os.environ.get(f"CGU_LAB_{name.upper()}", default)


@dataclass
class Settings:
    data_dir: Path = field(default_factory=lambda: Path(_env("data_dir", "data")).resolve())
    db_url: str = field(default_factory=lambda: _env("db_url", ""))
    host: str = field(default_factory=lambda: _env("host", "127.0.0.1"))
    port: int = field(default_factory=lambda: int(_env("port", "8000")))
    public_url: str = field(default_factory=lambda: _env("public_url", ""))
    backend: str = field(default_factory=lambda: _env("backend", "local"))
    session_hours: float = field(default_factory=lambda: float(_env("session_hours", "168")))
    secure_cookies: bool = field(default_factory=lambda: _env("secure_cookies", "") == "1")
    start_timeout: float = field(default_factory=lambda: float(_env("start_timeout", "90")))
    stop_timeout: float = field(default_factory=lambda: float(_env("stop_timeout", "10")))
    # local backend: "auto" runs notebooks as per-user accounts when root, else as ourselves
    run_as: str = field(default_factory=lambda: _env("run_as", "auto"))
    use_cgroups: bool = field(default_factory=lambda: _env("use_cgroups", "1") == "1")
    # GPUs: how long a notebook must have been idle before a waiting start may reclaim its GPU
    reclaim_idle_minutes: float = field(
        default_factory=lambda: float(_env("reclaim_idle_minutes", "10"))
    )
    # the idle culler and the monitor: seconds between passes
    cull_interval: float = field(default_factory=lambda: float(_env("cull_interval", "60")))
    monitor_interval: float = field(default_factory=lambda: float(_env("monitor_interval", "10")))
    # seconds between checks that running notebooks are still alive
    liveness_interval: float = field(default_factory=lambda: float(_env("liveness_interval", "5")))
    # energy estimate: power of a GPU held by an idle notebook vs a free, parked GPU (watts)
    gpu_held_idle_watts: float = field(
        default_factory=lambda: float(_env("gpu_held_idle_watts", "60"))
    )
    gpu_parked_watts: float = field(default_factory=lambda: float(_env("gpu_parked_watts", "15")))
    # teaching: size limits of a template's files and of the files of one deployment
    template_max_bytes: int = field(
        default_factory=lambda: int(_env("template_max_bytes", str(2 * 2**30)))
    )
    template_max_files: int = field(
        default_factory=lambda: int(_env("template_max_files", "20000"))
    )
    # default resources of a new notebook
    default_cpu: str = field(default_factory=lambda: _env("default_cpu", "1"))
    default_memory: str = field(default_factory=lambda: _env("default_memory", "2Gi"))
    # notebook origins: a wildcard domain (`<owner>--<name>.<domain>`), "localhost" by
    # default when the controller is on loopback; "none" serves notebooks on `notebook_port`
    notebook_domain: str = field(default_factory=lambda: _env("notebook_domain", ""))
    notebook_port: int = field(default_factory=lambda: int(_env("notebook_port", "0")))

    def __post_init__(self) -> None:
        self.data_dir = Path(self.data_dir).resolve()
        if not self.db_url:
            self.db_url = f"sqlite:///{self.data_dir / 'cgu-lab.sqlite'}"

    @property
    def origins(self) -> OriginPlan:
        """Where notebooks are served in the browser (see core/origins.py)."""
        host = urlsplit(self.base_url).hostname or ""
        domain = self.notebook_domain.strip().strip(".").lower()
        if domain == "none":
            domain = ""
        elif not domain and (host == "localhost" or host.startswith("127.") or host == "::1"):
            domain = "localhost"
        port = self.notebook_port or None
        if not domain and port is None:
            port = self.port + 1
        return OriginPlan(self.base_url, domain, port)

    @property
    def secrets_dir(self) -> Path:
        """Keys of this installation (signing notebook-origin cookies), for the controller only."""
        return self.data_dir / "secrets"

    @property
    def store(self) -> Path:
        """Where the controller keeps template, deployment and submission archives."""
        return self.data_dir / "store"

    @property
    def base_url(self) -> str:
        """Where users reach the controller; used in messages and notebooks' links."""
        if self.public_url:
            return self.public_url.rstrip("/")
        host = "127.0.0.1" if self.host in ("0.0.0.0", "::", "") else self.host  # noqa: S104
        return f"http://{host}:{self.port}"

    @property
    def internal_url(self) -> str:
        """How notebooks on this machine reach the controller's API."""
        host = "127.0.0.1" if self.host in ("0.0.0.0", "::", "") else self.host  # noqa: S104
        return f"http://{host}:{self.port}"

"""The controller's settings, read once from the command line and environment.

Every option has a `CGU_LAB_<NAME>` environment variable so containers can be
configured without flags; pydantic-settings reads and checks them, so a typo
in a number stops the controller at start with the variable's name.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit

from pydantic import Field, SecretStr, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from ..backends.local_limits import NOTEBOOK_PIDS
from ..core.origins import OriginPlan


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="CGU_LAB_", extra="ignore")

    data_dir: Path = Path("data")
    db_url: str = ""
    # seconds a request waits for a database lock (or a connection) before it is answered
    # 503 "the database is busy" with Retry-After, instead of hanging or failing with a 500
    db_busy_timeout: float = Field(default=30, gt=0)
    # seconds a shutdown (SIGTERM) waits for requests in flight, downloads and uploads
    # among them, to finish before it cuts them (a cut one fails visibly to its client)
    shutdown_grace: float = Field(default=30, ge=0)
    host: str = "127.0.0.1"
    port: int = 8000
    public_url: str = ""
    backend: str = "local"
    session_hours: float = 168
    secure_cookies: bool = False
    start_timeout: float = 90
    # local notebooks: servers launched at once; later starts wait in line, their place shown
    # (local_servers.StartQueue); 0: one per core the controller may use
    parallel_starts: int = Field(default=0, ge=0)
    stop_timeout: float = 10
    # local VM notebooks: seconds a guest has to power off (ACPI) before QEMU is ended,
    # and the accelerator: "auto" (KVM when usable, else TCG), "kvm" or "tcg"
    vm_shutdown_timeout: float = 30
    vm_accelerator: str = "auto"
    # local backend: "auto" runs notebooks as per-user accounts when root, else as ourselves
    run_as: str = "auto"
    # local training jobs: "private" gives each job a loopback of its own and no other
    # network (torchrun's rendezvous store takes any client), "host" the machine's network
    training_network: Literal["private", "host"] = "private"
    # local notebooks: "private" runs each server and its kernels in a network namespace of
    # their own (the internet through slirp4netns, nothing that listens is reachable from
    # the host; the proxy reaches the server over a Unix socket); "host" the machine's
    # network, where a kernel can answer on the controller's host name (development only)
    notebook_network: Literal["private", "host"] = "private"
    use_cgroups: bool = True
    # local notebooks (and each rank of a training job): processes and threads one may hold
    # at once (a pids cgroup); without it one kernel could take every pid of the host
    notebook_pids: int = Field(default=NOTEBOOK_PIDS, ge=64)
    # GPUs: how long a notebook must have been idle before a waiting start may reclaim its GPU
    reclaim_idle_minutes: float = 10
    # the idle culler and the monitor: seconds between passes
    cull_interval: float = 60
    monitor_interval: float = 10
    # seconds between checks that running notebooks are still alive
    liveness_interval: float = 5
    # seconds between passes that mirror quotas into the cluster (kubernetes backend)
    quota_sync_interval: float = 30
    # energy estimate: power of a GPU held by an idle notebook vs a free, parked GPU (watts)
    gpu_held_idle_watts: float = 60
    gpu_parked_watts: float = 15
    # teaching: size limits of a template's files and of the files of one deployment
    template_max_bytes: int = 2 * 2**30
    template_max_files: int = 20000
    # default resources of a new notebook
    default_cpu: str = "1"
    default_memory: str = "2Gi"
    # notebook origins: a wildcard domain (`<owner>--<name>.<domain>`), "localhost" by
    # default when the controller is on loopback; "none" serves notebooks on `notebook_port`
    notebook_domain: str = ""
    notebook_port: int = 0
    # the school's logins (controller/school_login/): a JSON list of OpenID providers and
    # LDAP directories, or a file holding it; secret, as it holds client secrets
    school_providers: SecretStr = SecretStr("")
    school_providers_file: Path | None = None
    # seconds between asking the directory whether logged-in directory users still exist
    directory_check_interval: float = Field(default=300, gt=0)

    @model_validator(mode="after")
    def _derived(self) -> Settings:
        self.data_dir = Path(self.data_dir).resolve()
        if not self.db_url:
            self.db_url = f"sqlite:///{self.data_dir / 'cgu-lab.sqlite'}"
        return self

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
    def https(self) -> bool:
        """Whether browsers reach the controller over HTTPS (its cookies are then Secure)."""
        return self.base_url.startswith("https://") or self.secure_cookies

    @property
    def session_cookie(self) -> str:
        """The name of the log-in cookie: `__Host-` under HTTPS, and this installation's own.

        Why: browsers scope cookies by host, never by port, so two installations on one
        host would read (and overwrite) each other's log-ins under one name; the name
        carries a tag of this installation's address and data. Under HTTPS the `__Host-`
        prefix makes the browser refuse the cookie unless it is Secure, host-only and for
        the whole path, so no other name on the domain can plant or shadow it.
        """
        tag = hashlib.sha256(f"{self.base_url}\n{self.data_dir}".encode()).hexdigest()[:10]
        return f"{'__Host-' if self.https else ''}cgu-lab-session-{tag}"

    @property
    def controller_socket(self) -> Path:
        """The controller's Unix socket, for notebook servers on this machine: in their
        private network namespaces the host's loopback (and so its TCP port) is out of
        reach, while a file is not. Short on purpose (a socket's path has 107 bytes)."""
        return self.data_dir / "run" / "controller.sock"

    @property
    def internal_url(self) -> str:
        """How notebooks on this machine reach the controller's API."""
        host = "127.0.0.1" if self.host in ("0.0.0.0", "::", "") else self.host  # noqa: S104
        return f"http://{host}:{self.port}"

"""The controller's settings, read once from the command line and environment.

Every option has a `CGU_LAB_<NAME>` environment variable so containers can be
configured without flags; pydantic-settings reads and checks them, so a typo
in a number stops the controller at start with the variable's name.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from urllib.parse import urlsplit

from pydantic import Field, SecretStr

from ..backends.local_settings import LocalSettings
from ..core.origins import OriginPlan


class Settings(LocalSettings):
    """The controller's options; those of the local backend (the data directory, the
    database, how notebooks run) are `LocalSettings`', inherited under the same
    `CGU_LAB_<NAME>` names (local_settings says why)."""

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
    # GPUs: how long a notebook must have been idle before a waiting start may reclaim its GPU
    reclaim_idle_minutes: float = 10
    # the idle culler and the monitor: seconds between passes
    cull_interval: float = 60
    monitor_interval: float = 10
    # seconds between checks that running notebooks are still alive
    liveness_interval: float = 5
    # seconds between passes that mirror quotas into the cluster (kubernetes backend)
    quota_sync_interval: float = 30
    # class sessions (controller/class_sessions/): seconds between pre-warm passes, and
    # the CPU and memory the platform can hold for booked sessions at once ("" = not
    # bounded: only GPUs, counted from the pool, limit what can be booked)
    class_session_interval: float = Field(default=30, gt=0)
    class_cpu_capacity: str = ""
    class_memory_capacity: str = ""
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
    # a public demo's anonymous visitors, per address (controller/publishing/): requests at
    # once, then requests a second (a Voilà page loads some 40 files at once)
    demo_public_burst: float = Field(default=120, ge=1)
    demo_public_rate: float = Field(default=20, gt=0)

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
    def internal_url(self) -> str:
        """How notebooks on this machine reach the controller's API."""
        host = "127.0.0.1" if self.host in ("0.0.0.0", "::", "") else self.host  # noqa: S104
        return f"http://{host}:{self.port}"

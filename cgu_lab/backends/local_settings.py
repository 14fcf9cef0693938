"""Settings of the local backend, from `CGU_LAB_<NAME>` environment variables.

Why a class of their own: the backend and its parts (Servers, LocalVms, the training
jobs) read these values and no others, typed and with their defaults in one place,
instead of asking an untyped settings object with `getattr` and a default repeated at
each read. Why the controller's `Settings` extends this class rather than holding a
`LocalSettings` beside it: the variables were always `CGU_LAB_<NAME>`, one namespace with
the controller's own options (`--run-as`, `--data-dir`), and the controller reads a few of
them itself (its scorer sandboxes run as the notebooks do); so the names, the defaults and
the command line stay exactly what they were, and a test can build a backend from a
`LocalSettings` alone.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from .local_limits import NOTEBOOK_PIDS


class LocalSettings(BaseSettings):
    # Each field's docstring is its description (`use_attribute_docstrings`).
    model_config = SettingsConfigDict(
        env_prefix="CGU_LAB_", extra="ignore", use_attribute_docstrings=True
    )

    data_dir: Path = Path("data")
    """CGU_LAB_DATA_DIR: the installation's state: database, homes, logs, VM disks."""
    db_url: str = ""
    """CGU_LAB_DB_URL: the database; empty for SQLite in the data directory."""
    run_as: str = "auto"
    """CGU_LAB_RUN_AS: "auto" runs notebooks as per-user accounts when root, else as
    ourselves; "per-user" or "self" choose."""
    use_cgroups: bool = True
    """CGU_LAB_USE_CGROUPS: limit each notebook's CPU, memory and processes by cgroups."""
    notebook_pids: int = Field(default=NOTEBOOK_PIDS, ge=64)
    """CGU_LAB_NOTEBOOK_PIDS: processes and threads one notebook (or one rank of a training
    job) may hold at once; without a limit one kernel could take every pid of the host."""
    start_timeout: float = 90
    """CGU_LAB_START_TIMEOUT: seconds a notebook server has to answer after its launch."""
    stop_timeout: float = 30
    """CGU_LAB_STOP_TIMEOUT: seconds a server has to exit after SIGTERM before it is killed.
    More than its own clean-up needs: a notebook's database gets up to 10 s for a clean
    shutdown (notebook/apps/database.py) after the kernels end, and everything left when
    the server has gone is killed. At 10 s, a busy host's stop could kill a database in
    the middle of its shutdown. 30 s, as Kubernetes gives a pod (kube_settings)."""
    parallel_starts: int = Field(default=0, ge=0)
    """CGU_LAB_PARALLEL_STARTS: servers launched at once; later starts wait in line, their
    place shown (local_servers.StartQueue); 0: one per core the controller may use."""
    warm_starts: bool = True
    """CGU_LAB_WARM_STARTS: fork notebook servers from a pre-imported launcher per
    environment (local_warm) where cgroups hold the notebooks, instead of exec'ing each:
    a start then costs the server's set-up, not its imports; off: every start is exec'd."""
    vm_shutdown_timeout: float = 30
    """CGU_LAB_VM_SHUTDOWN_TIMEOUT: seconds a VM guest has to power off (ACPI) before QEMU
    is ended."""
    vm_accelerator: Literal["auto", "kvm", "tcg"] = "auto"
    """CGU_LAB_VM_ACCELERATOR: "auto" (KVM when usable, else TCG), "kvm" or "tcg"."""
    training_network: Literal["private", "host"] = "private"
    """CGU_LAB_TRAINING_NETWORK: "private" gives each training job a loopback of its own and
    no other network (torchrun's rendezvous store takes any client); "host" the machine's."""
    notebook_network: Literal["private", "host"] = "private"
    """CGU_LAB_NOTEBOOK_NETWORK: "private" runs each server and its kernels in a network
    namespace of their own (the internet through slirp4netns, nothing that listens is
    reachable from the host; the proxy reaches the server over a Unix socket); "host" the
    machine's network, where a kernel can answer on the controller's host name
    (development only)."""

    @model_validator(mode="after")
    def _derived(self) -> LocalSettings:
        self.data_dir = Path(self.data_dir).resolve()
        if not self.db_url:
            self.db_url = f"sqlite:///{self.data_dir / 'cgu-lab.sqlite'}"
        return self

    @property
    def controller_socket(self) -> Path:
        """The controller's Unix socket, for notebook servers on this machine: in their
        private network namespaces the host's loopback (and so its TCP port) is out of
        reach, while a file is not. Short on purpose (a socket's path has 107 bytes)."""
        return self.data_dir / "run" / "controller.sock"

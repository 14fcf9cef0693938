"""The `cgu-lab` command: start the platform and administer it from a shell."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import errno
import logging
import os
import socket
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from . import __version__

if TYPE_CHECKING:
    from .controller.root import Platform
    from .core.environments import Recipe


def _settings(args):
    from pydantic import ValidationError

    from .controller.settings import Settings

    names = (
        "data_dir",
        "db_url",
        "host",
        "port",
        "public_url",
        "backend",
        "run_as",
        "notebook_domain",
        "notebook_port",
    )
    overrides = {n: getattr(args, n) for n in names if getattr(args, n, None) not in (None, "")}
    try:
        return Settings(**overrides)
    except ValidationError as error:
        problems = "; ".join(
            f"CGU_LAB_{'_'.join(map(str, e['loc'])).upper()}: {e['msg']}" for e in error.errors()
        )
        raise SystemExit(f"error: a setting is not valid: {problems}") from None


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--data-dir", type=Path, help="state and homes (default ./data, $CGU_LAB_DATA_DIR)"
    )
    parser.add_argument(
        "--db-url",
        help="sqlite:///path or postgresql://user:pass@host/db (default: SQLite in the data dir)",
    )


def _serve(args, announce: bool) -> int:
    import uvicorn

    from .controller.app import create_app

    settings = _settings(args)
    os.umask(0o077)  # the database, logs and secrets are for the controller alone
    logging.basicConfig(
        level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    app = create_app(settings)
    password = asyncio.run(_first_admin(app))
    if announce and settings.backend == "local" and not _skip_environments(args):
        try:
            asyncio.run(_ship_environments(app.platform))
        except KeyboardInterrupt:
            raise SystemExit(
                "\n  interrupted while building the Data science environment"
            ) from None
    config = uvicorn.Config(
        app,
        log_level="warning",
        ws_max_size=1 << 30,
        proxy_headers=False,
        # Downloads and uploads in flight get this long to finish (CGU_LAB_SHUTDOWN_GRACE);
        # one cut after it ends without its last chunk, so the client sees it failed.
        timeout_graceful_shutdown=settings.shutdown_grace,
    )
    plan = settings.origins
    ports = [settings.port] + ([plan.port] if not plan.subdomains and plan.port else [])
    sockets = [_listen(settings.host, port) for port in ports]
    if settings.backend == "local":
        sockets.append(_listen_unix(settings.controller_socket))
    banner = []
    if announce or password:
        where = plan.describe()
        banner = [
            f"\n  cgu-lab {__version__} is running on {settings.base_url}/",
            f"  backend: {settings.backend}; data: {settings.data_dir}",
            f"  database: {app.platform.db.display_url}",
            f"  notebooks: {where['pattern']} ({where['isolation']})",
        ]
        if password:
            banner += [
                f"  first administrator: admin  one-time password: {password}",
                "  (you will choose your own password at the first login)\n",
            ]
        else:
            banner.append("  log in with an existing account\n")
    _Announcing(config, banner).run(sockets=sockets)
    return 0


class _Announcing:
    """Runs uvicorn and prints where to log in once it serves: after every log of the
    start (migrations, environment builds, the app's own start-up), so it is what a
    person sees last."""

    def __init__(self, config, banner: list[str]) -> None:
        import uvicorn

        class Server(uvicorn.Server):
            async def startup(self, sockets=None) -> None:
                await super().startup(sockets=sockets)
                if self.started and banner:
                    print("\n".join(banner), flush=True)

            async def shutdown(self, sockets=None) -> None:
                """Say how many requests (downloads, uploads) the stop waits for, and how
                long at most, so an operator knows why it takes a while."""
                if self.server_state.tasks:
                    logging.getLogger("cgu_lab").info(
                        "shutting down: draining %d transfers for up to %g s",
                        len(self.server_state.tasks),
                        self.config.timeout_graceful_shutdown,
                    )
                await super().shutdown(sockets=sockets)

        self.server = Server(config)

    def run(self, sockets) -> None:
        self.server.run(sockets=sockets)


def _listen(host: str, port: int) -> socket.socket:
    """A listening socket: the controller's port, and the notebooks' one in port mode.

    A port someone else holds stops the start with who holds it: whoever answers there
    would receive users' passwords and log-in cookies, so it is never shared
    (SO_REUSEADDR only lets us rebind over our own connections closing)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as error:
        sock.close()
        if error.errno != errno.EADDRINUSE:
            raise SystemExit(f"error: cannot listen on {host}:{port}: {error.strerror}") from None
        raise SystemExit(
            f"error: port {port} on {host} is already in use by {_holder(port)}; stop it, or "
            "start cgu-lab on another port (--port)"
        ) from None
    sock.listen(2048)
    return sock


def _holder(port: int) -> str:
    """Who listens on a TCP port of this machine, in words (as far as we may see)."""
    import psutil

    try:
        listening = [
            c
            for c in psutil.net_connections(kind="tcp")
            if c.status == psutil.CONN_LISTEN and c.laddr.port == port
        ]
    except psutil.Error:
        listening = []
    for connection in listening:
        if connection.pid is None:
            continue
        try:
            process = psutil.Process(connection.pid)
            command = " ".join(process.cmdline())[:120] or process.name()
            return f"process {process.pid} of user {process.username()} ({command})"
        except psutil.Error:
            return f"process {connection.pid}"
    return "another program"


def _listen_unix(path: Path) -> socket.socket:
    """The controller's Unix socket, for notebook servers in private networks
    (backends/local.py): any account may connect, and every request still needs a token."""
    path.parent.mkdir(mode=0o711, parents=True, exist_ok=True)
    path.parent.chmod(0o711)
    with contextlib.suppress(FileNotFoundError):
        path.unlink()  # a previous run's; a socket file outlives its server
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(str(path))
    path.chmod(0o666)
    sock.listen(2048)
    return sock


def _skip_environments(args) -> bool:
    return bool(getattr(args, "no_environments", False)) or os.environ.get(
        "CGU_LAB_SKIP_ENVIRONMENTS", ""
    ) not in ("", "0")


async def _ship_environments(platform: Platform) -> None:
    """`up` on a new installation: build the "Data science" environment, make it the default.

    It prints pip's lines as they come, so the wait shows what it is doing.
    Done once per data directory (a marker file records it; an admin who
    deletes the environment later does not get it back); a failed build
    (no network) leaves the platform's own Python as the default and is
    tried again at the next `up`. The controller is not serving yet.
    """
    from sqlalchemy import select

    from .controller.environments import catalog
    from .core import environments as recipes
    from .store.models import Environment

    marker = platform.settings.data_dir / "environments" / ".shipped"
    if marker.exists():
        return
    recipe = recipes.recipe("data-science")
    name = recipes.default_name("data-science")
    try:
        async with platform.db.session() as session:
            await catalog.ensure_defaults(session)
            found = await session.scalar(select(Environment).where(Environment.name == name))
            state = found.state if found is not None else None
        if state == recipes.READY:
            marker.parent.mkdir(parents=True, exist_ok=True)
            marker.write_text("built\n")
            return
        if not await _start_build(platform, recipe, name, exists=found is not None):
            return
        if await _follow_build(platform, name):
            marker.write_text("built\n")
            print(f"  {recipe.title} is ready and is the default environment\n", flush=True)
        else:
            print(
                f"  the {recipe.title} environment could not be built; notebooks use the "
                "platform's own Python until an administrator rebuilds it on the System page "
                "(the next `cgu-lab up` tries again)\n",
                flush=True,
            )
    finally:
        await platform.environments.shutdown()
        await platform.db.close()


async def _start_build(platform: Platform, recipe: Recipe, name: str, exists: bool) -> bool:
    """Declare (or rebuild) the environment as the default; False, said why, when refused."""
    from .core.errors import DomainError
    from .core.roles import Principal, Role

    system = Principal(id=0, name="cgu-lab up", role=Role.ADMIN)
    print(
        f"  building the {recipe.title} environment ({', '.join(recipe.main_packages)}); "
        "once per installation, skip with --no-environments",
        flush=True,
    )
    try:
        if not exists:
            await platform.environments.declare(system, recipe, name, is_default=True)
        else:
            await platform.environments.rebuild(system, name, make_default=True)
    except DomainError as error:
        print(f"  the {recipe.title} environment was not built: {error.message}", flush=True)
        return False
    return True


async def _follow_build(platform: Platform, name: str) -> bool:
    """Print the build's progress until it ends; whether it succeeded."""
    last = None
    async for event in platform.broker.follow(platform.environments.key(name)):
        if event is not None:
            print(f"    [{event.percent:3d}%] {event.message}", flush=True)
            last = event
    await platform.environments.wait()
    return last is not None and last.ok


async def _first_admin(app) -> str | None:
    await app.platform.db.upgrade()
    try:
        return await app.platform.ensure_first_admin()
    finally:
        await app.platform.db.close()


async def _admin(args) -> int:
    from .controller.accounts import directory as accounts
    from .controller.accounts import roster_import
    from .controller.root import Platform
    from .core.errors import DomainError
    from .core.roles import Principal, Role

    platform = Platform(_settings(args))
    await platform.db.upgrade()
    system = Principal(id=0, name="cli", role=Role.ADMIN)
    try:
        async with platform.db.session() as session:
            if args.admin_command == "create-user":
                password = None
                if args.password_stdin:
                    password = sys.stdin.readline().rstrip("\n")
                created = await accounts.create_user(
                    session,
                    system,
                    args.name,
                    Role(args.role),
                    args.display_name or "",
                    args.email or "",
                    password,
                    args.group,
                )
                print(f"created {created.user.name} ({args.role})")
                if created.one_time_password:
                    print(f"one-time password: {created.one_time_password}")
            elif args.admin_command == "import":
                text = await asyncio.to_thread(Path(args.csv).read_text)
                result = await roster_import.import_roster(session, system, text, args.group)
                for account in result.created:
                    password = account.one_time_password or "(password from file)"
                    print(f"{account.name}\t{password}")
                print(
                    f"{len(result.created)} created, {len(result.enrolled)} enrolled",
                    file=sys.stderr,
                )
            elif args.admin_command == "reset-password":
                password = await accounts.reset_password(session, system, args.name)
                print(f"one-time password: {password}")
            elif args.admin_command == "create-group":
                group = await accounts.create_group(
                    session, system, args.name, args.display_name or ""
                )
                print(f"created group {group.name}")
            elif args.admin_command == "create-token":
                user = await accounts.get_user(session, args.name)
        if args.admin_command == "create-token":
            raw, _ = await platform.auth.create_token(user.id, args.token_name)
            print(raw)
    except DomainError as error:
        print(f"error: {error.message}", file=sys.stderr)
        return 2
    finally:
        await platform.db.close()
    return 0


def _add_serve_commands(commands: argparse._SubParsersAction) -> None:
    for name, help_text in (
        ("up", "start the platform on this machine and print where to log in"),
        ("controller", "run the controller service (for deployments)"),
    ):
        serve = commands.add_parser(name, help=help_text)
        _common(serve)
        serve.add_argument("--host", help="address to listen on (default 127.0.0.1)")
        serve.add_argument("--port", type=int, help="port (default 8000)")
        serve.add_argument("--public-url", help="address users type, when behind a proxy")
        serve.add_argument(
            "--notebook-domain",
            help="wildcard domain whose subdomains serve notebooks, <owner>--<name>.<domain> "
            "(default: localhost on loopback; 'none' serves them on --notebook-port)",
        )
        serve.add_argument(
            "--notebook-port",
            type=int,
            help="port of the notebooks' origin without a wildcard domain (default: port + 1)",
        )
        serve.add_argument(
            "--backend", choices=["local", "kubernetes"], help="where notebooks run (default local)"
        )
        serve.add_argument(
            "--run-as",
            choices=["auto", "per-user", "self"],
            help="local backend: Unix account of notebooks (auto: per-user when root)",
        )
        if name == "up":
            serve.add_argument(
                "--no-environments",
                action="store_true",
                help="do not build the Data science environment on first start "
                "($CGU_LAB_SKIP_ENVIRONMENTS=1)",
            )


def _add_db_command(commands: argparse._SubParsersAction) -> None:
    db = commands.add_parser("db", help="database maintenance")
    _common(db)
    db.add_argument("db_command", choices=["upgrade"], help="apply schema migrations")


def _add_admin_commands(commands: argparse._SubParsersAction) -> None:
    admin = commands.add_parser("admin", help="administer accounts from the shell")
    admin_commands = admin.add_subparsers(dest="admin_command", required=True)
    create = admin_commands.add_parser("create-user", help="create an account")
    create.add_argument("name")
    create.add_argument("--role", default="student", choices=["admin", "teacher", "ta", "student"])
    create.add_argument("--display-name")
    create.add_argument("--email")
    create.add_argument("--group", help="enrol into this group")
    create.add_argument(
        "--password-stdin",
        action="store_true",
        help="read the password from standard input (else a one-time password is printed)",
    )
    imp = admin_commands.add_parser("import", help="create accounts from a CSV class list")
    imp.add_argument("csv")
    imp.add_argument("--group", help="enrol everyone into this group")
    reset = admin_commands.add_parser(
        "reset-password", help="give an account a new one-time password"
    )
    reset.add_argument("name")
    group = admin_commands.add_parser("create-group", help="create a group or course")
    group.add_argument("name")
    group.add_argument("--display-name")
    token = admin_commands.add_parser("create-token", help="print a new API token for an account")
    token.add_argument("name")
    token.add_argument("--token-name", default="cli")
    for leaf in (create, imp, reset, group, token):
        _common(leaf)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="cgu-lab", description="A teaching GPU platform built on JupyterLab."
    )
    parser.add_argument("--version", action="version", version=f"cgu-lab {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    _add_serve_commands(commands)
    _add_db_command(commands)
    _add_admin_commands(commands)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command in ("up", "controller"):
        return _serve(args, announce=args.command == "up")
    if args.command == "db":
        from .store.db import Database

        settings = _settings(args)
        Database(settings.db_url).upgrade_sync()
        print(f"database at the newest schema: {settings.db_url}")
        return 0
    if args.command == "admin":
        return asyncio.run(_admin(args))
    return 1


if __name__ == "__main__":
    sys.exit(main())

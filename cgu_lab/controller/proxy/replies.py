"""What the notebook proxy itself sends: headers on every answer, errors, redirects, cookies.

Every answer the proxy gives on a notebook's origin, the notebook's own pages
and the proxy's own errors and redirects alike, carries the same isolation
headers: a CSP that forbids framing by other origins and plugins, an opener
policy that cuts windows of other origins off, and a resource policy that
keeps other sites from embedding its responses. The header values are built
once.
"""

from __future__ import annotations

import html
import json
from dataclasses import dataclass

from sqlalchemy import select
from yarl import URL

from ...core.names import DNS_LABEL, USER_NAME
from ...store.models import Notebook, StopRecord

PREFIX = "/notebook/"

# What the notebook server must not decide for the browser: the proxy sets these.
OWN_HEADERS = frozenset(
    {
        b"content-security-policy",
        b"cross-origin-opener-policy",
        b"cross-origin-resource-policy",
        b"x-frame-options",
        b"x-content-type-options",
        b"referrer-policy",
        b"service-worker-allowed",
    }
)
ISOLATION = [
    (
        b"content-security-policy",
        b"frame-ancestors 'self'; base-uri 'self'; object-src 'none'; form-action 'self'",
    ),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"cross-origin-resource-policy", b"same-origin"),
    (b"x-frame-options", b"SAMEORIGIN"),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"same-origin"),
]


def header(scope, name: bytes) -> str:
    for key, value in scope["headers"]:
        if key == name:
            return value.decode("latin-1")
    return ""


def cookies(scope) -> dict[str, str]:
    """The request's cookies by name (the first of a name sent twice): a mapping, since
    which cookies a browser sends is the browser's."""
    found: dict[str, str] = {}
    for part in header(scope, b"cookie").split(";"):
        name, sep, value = part.strip().partition("=")
        if sep and name and name not in found:
            found[name] = value
    return found


def set_cookie(name: str, value: str, path: str, max_age: int, secure: bool) -> tuple[bytes, bytes]:
    """A host-only, script-proof cookie limited to one notebook's path."""
    flags = f"{name}={value}; Path={path}; Max-Age={max_age}; HttpOnly; SameSite=Lax"
    return (b"set-cookie", (flags + ("; Secure" if secure else "")).encode())


def guarded(send, extra: list[tuple[bytes, bytes]] | None = None):
    """`send` with the isolation headers (and any cookies) added to the response start."""

    async def wrapped(message) -> None:
        if message["type"] == "http.response.start":
            headers = [
                (k, v) for k, v in message.get("headers", []) if k.lower() not in OWN_HEADERS
            ]
            message = {**message, "headers": headers + ISOLATION + (extra or [])}
        await send(message)

    return wrapped


async def send_json(
    send, status: int, message: str, code: str, extra: dict | None = None, headers=()
) -> None:
    body = json.dumps({"message": message, "code": code, **(extra or {})}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                (b"cache-control", b"no-store"),
                *headers,
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


async def redirect(send, location: str, headers=()) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": 303,
            "headers": [
                (b"location", location.encode()),
                (b"content-length", b"0"),
                (b"cache-control", b"no-store"),
                *headers,
            ],
        }
    )
    await send({"type": "http.response.body", "body": b""})


def origin_matches(origin: str, host: str) -> bool:
    """True when a browser's Origin is this very site (or absent, as from scripts)."""
    if not origin:
        return True
    try:
        url = URL(origin)
    except ValueError:
        return False
    if url.host is None:
        return False
    host = host.lower()
    return host in ((url.authority or "").lower(), (url.host_port_subcomponent or "").lower())


def parse_path(path: str) -> tuple[str, str, str] | None:
    """Split /notebook/<owner>/<name><rest> into its parts; rest is "" or starts with "/".

    Names that no account or notebook can have (dot segments, encoded slashes, NUL)
    are refused here, so no redirect or lookup is ever built from them.
    """
    if not path.startswith(PREFIX):
        return None
    parts = path[len(PREFIX) :].split("/", 2)
    if len(parts) < 2 or not USER_NAME.match(parts[0]) or not DNS_LABEL.match(parts[1]):
        return None
    if ".." in parts[0] or "\x00" in path:
        return None
    if len(parts) == 3 and any(segment in (".", "..") for segment in parts[2].split("/")):
        return None
    rest = "/" + parts[2] if len(parts) == 3 else ""
    return parts[0], parts[1], rest


PLATFORM_COOKIES = ("cgu-", "__Host-cgu-", "__Secure-cgu-")


def client_address(scope) -> str:
    """The caller's address, as the server saw it (behind a reverse proxy, the one it
    forwarded, when the controller is told to trust it)."""
    client = scope.get("client")
    return client[0] if client else "?"


def without_platform_cookies(cookie_header: str) -> str:
    """A Cookie header without any of the platform's cookies (the log-in, the origins'):
    a notebook server, and the code in it, never sees them."""
    kept = []
    for part in cookie_header.split(";"):
        name = part.strip().partition("=")[0]
        if name and not name.startswith(PLATFORM_COOKIES):
            kept.append(part.strip())
    return "; ".join(kept)


def exact_origin(origin: str, expected: str) -> bool:
    """True when a browser's Origin is exactly `expected` (scheme://host[:port])."""
    return origin.lower().rstrip("/") == expected.lower()


def own_origin(scope) -> str:
    secure = scope.get("scheme") in ("https", "wss")
    return f"{'https' if secure else 'http'}://{header(scope, b'host').lower()}"


def original(scope) -> str:
    raw = scope.get("raw_path") or scope["path"].encode()
    query = scope.get("query_string") or b""
    return raw.decode("latin-1") + ("?" + query.decode("latin-1") if query else "")


def upstream_path(scope, server_path: str | None) -> str:
    """The request's path and query as the notebook server answers them: as sent, or under
    `server_path` (its own base URL, Route.server_path) in place of `/notebook/<a>/<b>/`,
    so that the controller's address and the server's reach the same pages."""
    raw = original(scope)
    if not server_path:
        return raw
    segments = raw[len(PREFIX) :].split("/", 2)
    if len(segments) == 3:
        return server_path + segments[2]
    query = raw.partition("?")[2]
    return server_path + ("?" + query if query else "")


def wants_page(scope) -> bool:
    return scope["method"] == "GET" and "text/html" in header(scope, b"accept")


async def request_body(receive):
    """A request's body: bytes when small and complete, else a stream to forward as it comes."""
    message = await receive()
    first = message.get("body", b"")
    if not message.get("more_body"):
        return first

    async def stream():
        yield first
        more = True
        while more:
            chunk = await receive()
            more = chunk.get("more_body", False)
            yield chunk.get("body", b"")

    return stream()


# -- pages for browsers, JSON for scripts ----------------------------------------------------

PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title} · cgu-lab</title>
<style>
body{{font:16px/1.5 system-ui,sans-serif;margin:0;background:#f4f5f7;color:#1d2230}}
main{{max-width:34rem;margin:12vh auto;background:#fff;border-radius:8px;padding:2rem;
box-shadow:0 1px 4px rgba(0,0,0,.12)}}
h1{{font-size:1.3rem;margin:0 0 .75rem}} p{{margin:.5rem 0}}
.actions{{margin-top:1.5rem;display:flex;gap:.75rem;flex-wrap:wrap}}
.actions a{{padding:.5rem 1rem;border-radius:4px;text-decoration:none;border:1px solid #1565c0;
color:#1565c0}} .actions a:first-child{{background:#1565c0;color:#fff}}
</style></head>
<body data-cgu-code="{code}"><main>
<h1>{title}</h1>
<p data-cgu="page-message">{message}</p>
<div class="actions">{links}</div>
</main></body></html>
"""


def page_html(title: str, message: str, code: str, links: list[tuple[str, str]]) -> bytes:
    """A small page that says what happened and where to go (every value escaped)."""
    anchors = "".join(
        f'<a href="{html.escape(href, quote=True)}" data-cgu="page-link">{html.escape(label)}</a>'
        for label, href in links
    )
    return PAGE.format(
        title=html.escape(title),
        message=html.escape(message),
        code=html.escape(code, quote=True),
        links=anchors,
    ).encode()


async def send_page(
    send, status: int, title: str, message: str, code: str, links: list[tuple[str, str]]
) -> None:
    body = page_html(title, message, code, links)
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"text/html; charset=utf-8"),
                (b"content-length", str(len(body)).encode()),
                (b"cache-control", b"no-store"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


async def send_problem(
    scope,
    send,
    status: int,
    message: str,
    code: str,
    extra: dict | None = None,
    *,
    title: str,
    links: list[tuple[str, str]],
) -> None:
    """The same refusal for both kinds of caller: a page for a browser's navigation (a
    reload never shows raw JSON), `{message, code, ...}` for JupyterLab and scripts."""
    if wants_page(scope):
        await send_page(send, status, title, message[:1].upper() + message[1:], code, links)
    else:
        await send_json(send, status, message, code, extra)


# -- why a notebook is not running ------------------------------------------------------

# A stop's cause (StopRecord.cause) in the words the owner reads.
STOP_CAUSES = {
    "idle": "stopped for idleness",
    "lifetime": "stopped after its maximum running time",
    "reclaim": "stopped to free its GPU for someone who was waiting",
    "admin": "stopped by an administrator",
    "user": "stopped by its owner",
}


@dataclass(frozen=True)
class StopReason:
    """Why a notebook is not running: a cause, a short reason and the detail on record."""

    cause: str  # idle, lifetime, reclaim, admin, user, died, not_running
    reason: str  # "stopped for idleness"
    detail: str  # "idle for 62 minutes (limit 60)"; "" when nothing more is known

    @property
    def sentence(self) -> str:
        return f"{self.reason} ({self.detail})" if self.detail else self.reason


async def stop_reason(db, notebook_id: int, state: str) -> StopReason:
    """The latest stop of this notebook's last run, or what its record says (a server that
    died, a start that failed), for the "your notebook stopped" answers."""
    if state in ("starting", "queued"):
        waiting = "is waiting for a GPU" if state == "queued" else "is starting"
        return StopReason("not_running", f"it {waiting}", "")
    async with db.session() as session:
        nb = await session.get(Notebook, notebook_id)
        record = await session.scalar(
            select(StopRecord)
            .where(StopRecord.notebook_id == notebook_id)
            .order_by(StopRecord.id.desc())
            .limit(1)
        )
    if nb is None:
        return StopReason("not_running", "it no longer exists", "")
    this_run = record is not None and (
        nb.started_at is None or _naive(record.stopped_at) >= _naive(nb.started_at)
    )
    if this_run and record.cause in STOP_CAUSES:
        return StopReason(record.cause, STOP_CAUSES[record.cause], record.reason)
    if state == "stopping":
        return StopReason("not_running", "it is stopping", "")
    message = (nb.message or "").strip()
    if "stopped by itself" in message:
        detail = message.split(":", 1)[1].strip() if ":" in message else ""
        return StopReason("died", "its server stopped by itself", detail)
    if message:
        return StopReason("not_running", "it is not running", message.rstrip("."))
    return StopReason("not_running", "it is not running", "")


def _naive(moment):
    return moment.replace(tzinfo=None) if moment is not None and moment.tzinfo else moment

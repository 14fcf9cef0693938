"""What the notebook proxy itself sends: headers on every answer, errors, redirects, cookies.

Every answer the proxy gives on a notebook's origin, the notebook's own pages
and the proxy's own errors and redirects alike, carries the same isolation
headers: a CSP that forbids framing by other origins and plugins, an opener
policy that cuts windows of other origins off, and a resource policy that
keeps other sites from embedding its responses. The header values are built
once.
"""

from __future__ import annotations

import json

from yarl import URL

from ..core.names import DNS_LABEL, USER_NAME
from .auth import SESSION_COOKIE

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


def session_cookie(cookie_header: str) -> tuple[str | None, str]:
    """The platform session from a Cookie header, and the header without any platform cookie."""
    value = None
    kept = []
    for part in cookie_header.split(";"):
        name, _, rest = part.strip().partition("=")
        if name == SESSION_COOKIE:
            value = rest
        elif name and not name.startswith("cgu-"):
            kept.append(part.strip())
    return value, "; ".join(kept)


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

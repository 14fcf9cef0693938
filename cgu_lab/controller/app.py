"""The controller's ASGI application: API, pages and the notebook proxy.

Requests on a notebook's origin, and below /notebook/<owner>/<name>/ on the
controller's, go straight to the proxy (the hot path skips FastAPI's routing);
everything else is the FastAPI app, wrapped in a middleware that adds the
pages' security headers.
"""

from __future__ import annotations

import contextlib
import logging
import re
from collections.abc import AsyncIterator, Callable
from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from sqlalchemy.exc import SQLAlchemyError
from starlette.exceptions import HTTPException as StarletteHTTPException

from .. import __version__
from ..backends.base import Backend, BackendError
from ..core.errors import DatabaseBusy, DomainError
from ..store.db import unavailable
from . import routes
from .accounts import pages as account_pages
from .api.schemas import ErrorBody
from .clock import Clock
from .competitions import pages as competition_pages
from .environments import pages as environment_pages
from .gpus import pages as gpu_pages
from .monitoring import pages as monitoring_pages
from .notebooks import pages as notebook_pages
from .page_kit import Redirect, error_page
from .proxy import pages as proxy_pages
from .proxy.forward import AUTO_START, PREFIX, NotebookProxy
from .proxy.replies import guarded, page_html, send_problem
from .quotas import pages as quota_pages
from .root import Platform
from .school_login import pages as school_login_pages
from .settings import Settings
from .storage import pages as storage_pages
from .teaching import pages as teaching_pages

log = logging.getLogger("cgu_lab.controller")

# Each feature's pages (its `pages.py`), outside /api. No two of their paths overlap, so
# their order does not decide which page answers.
PAGES = (
    account_pages,
    notebook_pages,
    proxy_pages,
    storage_pages,
    quota_pages,
    gpu_pages,
    environment_pages,
    monitoring_pages,
    teaching_pages,
    competition_pages,
    school_login_pages,
)

PAGE_HEADERS = [
    (
        b"content-security-policy",
        b"default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; "
        b"frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
    ),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"x-frame-options", b"DENY"),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"same-origin"),
]
# Every answer the API can give besides its success; each body is an ErrorBody.
# The largest API request body (a class list of 20,000 rows fits); larger ones get 413.
MAX_BODY = 16 * 2**20
ERROR_RESPONSES = {
    status: {"model": ErrorBody, "description": text}
    for status, text in (
        (400, "Bad input: the message names the field and the rule"),
        (401, "Not logged in"),
        (403, "Not allowed or over quota"),
        (404, "Not found"),
        (409, "Conflicts with the current state"),
        (429, "Too many attempts; wait the seconds in Retry-After"),
        (501, "Not offered by this installation's backend"),
        (503, "Not possible right now (no free GPU, the cluster does not answer...)"),
    )
}
# Words for the framework's own refusals (unknown route, wrong method...).
HTTP_CODES = {
    400: "invalid",
    401: "unauthenticated",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    409: "conflict",
    413: "too_large",
    415: "unsupported_media_type",
    429: "too_many_requests",
}
_INTERNAL = (
    "something went wrong on the server; the administrators find the details in the "
    "controller's log"
)
_MAX_PROBLEMS = 10


def _field(loc) -> str:
    """'gpus.standard' for ('body', 'gpus', 'standard'): the field as the client wrote it.

    Pydantic adds the tried type of a union member ('float', 'function-after[...]') to
    the location; those are dropped, they name no field."""
    parts = []
    for part in loc:
        if part in ("body", "query", "path", "header", "cookie"):
            continue
        if isinstance(part, str) and ("[" in part or part in ("str", "int", "float", "bool")):
            continue
        parts.append(str(part))
    return ".".join(parts)


def _validation_message(error: RequestValidationError) -> str:
    found: dict[str, list[str]] = {}
    for problem in error.errors():
        if problem.get("type") == "json_invalid":
            reason = (problem.get("ctx") or {}).get("error", "")
            position = problem.get("loc", ("body", 0))[-1]
            return f"the body is not valid JSON: {reason} (at character {position})"
        message = problem.get("msg", "invalid")
        if problem.get("type") == "missing" and tuple(problem.get("loc", ())) == ("body",):
            message = "the request needs a JSON body"
        messages = found.setdefault(_field(problem.get("loc", ())), [])
        if message not in messages:
            messages.append(message)
    parts = []
    for where, messages in found.items():
        # A union (cores as a number or as text) fails once per member: say it once.
        if len(messages) > 1 and all(m.startswith("Input should be ") for m in messages):
            messages = ["Input should be " + " or ".join(m[16:] for m in messages)]
        parts += [f"{where}: {m}" if where else m for m in messages]
    if len(parts) > _MAX_PROBLEMS:
        parts = [*parts[:_MAX_PROBLEMS], f"and {len(parts) - _MAX_PROBLEMS} more"]
    return "; ".join(parts) or "the request is not valid"


def _allowed_methods(request: Request, error: StarletteHTTPException) -> str:
    """Every documented method on this path: Starlette's 405 names only the methods of
    the first route it tried, and each method of a path is its own route here."""
    methods: set[str] = set()
    paths = request.app.openapi().get("paths", {})
    exact = paths.get(request.url.path)
    if exact is not None:  # a fixed path wins over a template it also fits (/gpus/fleet)
        methods = {method.upper() for method in exact}
    for template, operations in paths.items() if exact is None else ():
        parts = re.split(r"\{[^/{}]+\}", template)
        if re.fullmatch("[^/]+".join(re.escape(part) for part in parts), request.url.path):
            methods |= {method.upper() for method in operations}
    if "GET" in methods:
        methods.add("HEAD")
    return ", ".join(sorted(methods)) or (error.headers or {}).get("Allow", "")


def _http_message(request: Request, error: StarletteHTTPException) -> str:
    if error.status_code == 404 and error.detail == "Not Found":
        return f"there is no {request.url.path}; see /api/openapi.json for the API's routes"
    if error.status_code == 405:
        allowed = _allowed_methods(request, error)
        return f"{request.method} is not allowed on {request.url.path}; use {allowed}"
    if error.status_code == 400 and error.detail == "There was an error parsing the body":
        return "the body could not be read: send JSON encoded as UTF-8, with numbers of sane size"
    return str(error.detail)


def _error_json(status: int, message: str, code: str, details=None, headers=None):
    return JSONResponse(
        {"message": message, "code": code, "details": details or None},
        status_code=status,
        headers=headers,
    )


def _document_errors(build):
    """FastAPI documents a 422 (with its own body) on every route with parameters, and an
    error of a text route (metrics, logs) in that route's media type. This app answers bad
    input with 400 and every error as JSON ErrorBody, so the document is corrected to say
    that; Schemathesis checks the answers against it."""
    body = {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorBody"}}}

    def openapi() -> dict:
        document = build()
        for operations in document.get("paths", {}).values():
            for operation in operations.values():
                responses = operation.get("responses", {})
                responses.pop("422", None)
                for status, response in responses.items():
                    if status[:1] in ("4", "5"):
                        response["content"] = {**body}
        schemas = document.get("components", {}).get("schemas", {})
        for unused in ("HTTPValidationError", "ValidationError"):
            schemas.pop(unused, None)
        return document

    return openapi


def _lifespan(
    platform: Platform, proxy: NotebookProxy
) -> Callable[[FastAPI], contextlib.AbstractAsyncContextManager[None]]:
    @contextlib.asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        await platform.open()
        await proxy.open()
        try:
            yield
        finally:
            await proxy.close()
            await platform.close()

    return lifespan


def _add_routes(app: FastAPI) -> None:
    app.include_router(routes.router(), responses=ERROR_RESPONSES)
    for feature in PAGES:
        app.include_router(feature.router)
    app.mount("/static", StaticFiles(directory=Path(__file__).parent / "static"), name="static")


async def _domain_error(request: Request, error: DomainError) -> Response:
    if request.url.path.startswith("/api/"):
        return _error_json(
            error.status,
            error.message,
            error.code,
            error.details,
            getattr(error, "headers", None),
        )
    return await error_page(request, error)


async def _redirect(_request: Request, target: Redirect) -> Response:
    return RedirectResponse(target.location, status_code=303)


async def _invalid(_request: Request, error: RequestValidationError) -> Response:
    return _error_json(400, _validation_message(error), "invalid")


async def _http_error(request: Request, error: StarletteHTTPException) -> Response:
    """The framework's refusals (unknown route, wrong method): JSON in the API, else a page."""
    status = error.status_code
    if status < 400:
        return Response(status_code=status, headers=error.headers)
    message = _http_message(request, error)
    code = HTTP_CODES.get(status, "invalid" if status < 500 else "internal")
    headers = dict(error.headers or {})
    if status == 405:
        headers["Allow"] = _allowed_methods(request, error)
    if request.url.path.startswith("/api/") or request.url.path.startswith("/static/"):
        return _error_json(status, message, code, headers=headers)
    refusal = DomainError(message)
    refusal.status, refusal.code = status, code
    response = await error_page(request, refusal)
    response.headers.update(headers)
    return response


async def _backend_error(_request: Request, error: BackendError) -> Response:
    log.warning("backend error: %s", error)
    return _error_json(503, str(error) or "the backend failed", "backend_error")


def database_busy_answer(path: str, busy: DatabaseBusy) -> Response:
    """503 with Retry-After: {message, code} for the API, a small page for a browser. The
    page is built without the database (the usual error page asks who is logged in)."""
    if path.startswith("/api/"):
        return _error_json(busy.status, busy.message, busy.code, busy.details, busy.headers)
    page = page_html("Busy, try again", busy.message[:1].upper() + busy.message[1:], busy.code, [])
    return HTMLResponse(page, status_code=busy.status, headers=busy.headers)


async def _database_error(request: Request, error: Exception) -> Response:
    """A database that is locked or out of reach is a 503 the client may retry (logged once,
    without the trace); any other database error is a bug: a 500 with its trace logged."""
    kind = unavailable(error)
    if kind is None:
        log.error("database error on %s %s", request.method, request.url.path, exc_info=error)
        return _error_json(500, _INTERNAL, "internal")
    log.warning("database %s on %s %s: %s", kind, request.method, request.url.path, error)
    return database_busy_answer(request.url.path, DatabaseBusy(kind))


async def _internal(request: Request, error: Exception) -> Response:
    # Logged by the server with its traceback; the client gets a sentence, no trace.
    return _error_json(500, _INTERNAL, "internal")


def _add_error_handlers(app: FastAPI) -> None:
    """Every refusal of the API is {message, code}: the platform's own (DomainError),
    the framework's (bad JSON, unknown route, wrong method) and the unforeseen (500)."""
    app.add_exception_handler(DomainError, _domain_error)
    app.add_exception_handler(Redirect, _redirect)
    app.add_exception_handler(RequestValidationError, _invalid)
    app.add_exception_handler(StarletteHTTPException, _http_error)
    app.add_exception_handler(BackendError, _backend_error)
    app.add_exception_handler(SQLAlchemyError, _database_error)
    app.add_exception_handler(Exception, _internal)


def build_api(platform: Platform, proxy: NotebookProxy) -> FastAPI:
    app = FastAPI(
        title="cgu-lab controller",
        version=__version__,
        description="Accounts, quotas and notebooks of a cgu-lab installation.",
        openapi_url="/api/openapi.json",
        docs_url=None,
        redoc_url=None,
        lifespan=_lifespan(platform, proxy),
        max_body_size=MAX_BODY,
    )
    app.state.platform = platform
    _add_routes(app)
    _add_error_handlers(app)
    app.openapi = _document_errors(app.openapi)

    return app


class Controller:
    """Dispatch: the proxy for notebooks, FastAPI (with page headers) for the rest."""

    def __init__(
        self, settings: Settings, backend: Backend | None = None, clock: Clock | None = None
    ) -> None:
        self.platform = Platform(settings, backend, clock)
        self.proxy = NotebookProxy(self.platform)
        self.api = build_api(self.platform, self.proxy)
        self.proxy.lab_app = self.api
        # Under HTTPS the browser is told to never ask over plain HTTP again: a network
        # attacker could otherwise read the log-in cookie from one downgraded request.
        self.page_headers = PAGE_HEADERS + (
            [(b"strict-transport-security", b"max-age=31536000")] if settings.https else []
        )

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.api(scope, receive, send)
            return
        path = scope.get("path", "")
        if self.proxy.on_notebook_origin(scope) or (
            path.startswith(PREFIX) and not path.startswith(AUTO_START)
        ):
            # A notebook's origin serves its notebook alone, never a controller page.
            await self._notebook(scope, receive, send)
            return
        if scope["type"] != "http":
            await self.api(scope, receive, send)
            return

        async def send_with_headers(message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = list(message.get("headers", [])) + self.page_headers
            await send(message)

        await self.api(scope, receive, send_with_headers)

    async def _notebook(self, scope, receive, send) -> None:
        """The proxy, with a database that is locked or out of reach answered as the API
        answers it (503, Retry-After, a sentence) instead of a bare 500. The proxy needs
        the database only for what it does not know yet (running notebooks are served from
        its route table and the last known identities), so this is the rare request."""
        started = False

        async def tracked(message) -> None:
            nonlocal started
            started = started or message["type"] in (
                "http.response.start",
                "websocket.accept",
                "websocket.close",
            )
            await send(message)

        try:
            await self.proxy(scope, receive, tracked)
        except SQLAlchemyError as error:
            kind = unavailable(error)
            if kind is None or started:
                raise
            log.warning("database %s on the notebook proxy (%s): %s", kind, scope["path"], error)
            busy = DatabaseBusy(kind)
            if scope["type"] == "websocket":
                await send({"type": "websocket.close", "code": 1013})  # "try again later"
                return
            retry = [(b"retry-after", busy.headers["Retry-After"].encode())]
            await send_problem(
                scope,
                guarded(send, retry),
                busy.status,
                busy.message,
                busy.code,
                busy.details,
                title="Busy, try again",
                links=[("Back to the cgu-lab portal", self.proxy.plan.controller_url + "/")],
            )


def create_app(
    settings: Settings | None = None, backend: Backend | None = None, clock: Clock | None = None
) -> Controller:
    """The controller's ASGI app; `backend` replaces the one the settings name and `clock`
    the real time (for tests, which move a `FakeClock`)."""
    return Controller(settings or Settings(), backend, clock)

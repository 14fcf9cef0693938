"""The controller's ASGI application: API, pages and the notebook proxy.

Requests below /notebook/<owner>/<name>/ go straight to the proxy (the hot
path skips FastAPI's routing); everything else is the FastAPI app, wrapped in
a middleware that adds the pages' security headers.
"""

from __future__ import annotations

import contextlib
import logging
from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, RedirectResponse
from fastapi.staticfiles import StaticFiles

from .. import __version__
from ..core.errors import DomainError
from . import api, pages, teaching_pages
from .proxy import AUTO_START, PREFIX, NotebookProxy
from .root import Platform
from .settings import Settings

log = logging.getLogger("cgu_lab.controller")

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
ERROR_RESPONSES = {
    status: {"model": api.schemas.ErrorBody, "description": text}
    for status, text in (
        (400, "Bad input"),
        (401, "Not logged in"),
        (403, "Not allowed or over quota"),
        (404, "Not found"),
        (409, "Conflicts with the current state"),
    )
}


def _validation_message(error: RequestValidationError) -> str:
    parts = []
    for problem in error.errors():
        where = ".".join(
            str(p) for p in problem.get("loc", ()) if p not in ("body", "query", "path")
        )
        parts.append(
            f"{where}: {problem.get('msg', 'invalid')}" if where else problem.get("msg", "invalid")
        )
    return "; ".join(parts) or "the request is not valid"


def build_api(platform: Platform, proxy: NotebookProxy) -> FastAPI:
    @contextlib.asynccontextmanager
    async def lifespan(_app):
        await platform.open()
        await proxy.open()
        try:
            yield
        finally:
            await proxy.close()
            await platform.close()

    app = FastAPI(
        title="cgu-lab controller",
        version=__version__,
        description="Accounts, quotas and notebooks of a cgu-lab installation.",
        openapi_url="/api/openapi.json",
        docs_url=None,
        redoc_url=None,
        lifespan=lifespan,
    )
    app.state.platform = platform
    app.include_router(api.router(), responses=ERROR_RESPONSES)
    app.include_router(pages.router)
    app.include_router(teaching_pages.router)
    app.mount("/static", StaticFiles(directory=Path(__file__).parent / "static"), name="static")

    @app.exception_handler(DomainError)
    async def domain_error(request: Request, error: DomainError):
        if request.url.path.startswith("/api/"):
            return JSONResponse(
                {"message": error.message, "code": error.code, "details": error.details or None},
                status_code=error.status,
            )
        return await pages.error_page(request, error)

    @app.exception_handler(pages.Redirect)
    async def redirect(_request: Request, target: pages.Redirect):
        return RedirectResponse(target.location, status_code=303)

    @app.exception_handler(RequestValidationError)
    async def invalid(_request: Request, error: RequestValidationError):
        return JSONResponse(
            {"message": _validation_message(error), "code": "invalid"}, status_code=400
        )

    return app


class Controller:
    """Dispatch: the proxy for notebooks, FastAPI (with page headers) for the rest."""

    def __init__(self, settings: Settings) -> None:
        self.platform = Platform(settings)
        self.proxy = NotebookProxy(self.platform)
        self.api = build_api(self.platform, self.proxy)

    async def __call__(self, scope, receive, send) -> None:
        path = scope.get("path", "")
        if (
            scope["type"] in ("http", "websocket")
            and path.startswith(PREFIX)
            and not path.startswith(AUTO_START)
        ):
            await self.proxy(scope, receive, send)
            return
        if scope["type"] != "http":
            await self.api(scope, receive, send)
            return

        async def send_with_headers(message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = list(message.get("headers", [])) + PAGE_HEADERS
            await send(message)

        await self.api(scope, receive, send_with_headers)


def create_app(settings: Settings | None = None) -> Controller:
    return Controller(settings or Settings())

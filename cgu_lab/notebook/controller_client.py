"""Calls from a notebook server to the controller, with the notebook's own token.

The browser never holds controller credentials: the lab extension asks this
server, which forwards to the controller as its owner. The server's one client
is made by the extension app from its settings (app.py, which takes the token
out of the environment at start, so kernels and terminals do not inherit it)
and kept in the tornado application's settings under SETTING, where every
handler and the identity provider find it.
"""

from __future__ import annotations

import contextlib
import json
import socket as sockets
from dataclasses import dataclass
from urllib.parse import quote, urlencode

from tornado.httpclient import AsyncHTTPClient, HTTPClientError, HTTPRequest
from tornado.netutil import Resolver
from tornado.simple_httpclient import SimpleAsyncHTTPClient

TIMEOUT = 30.0
# The key of the server's ControllerClient in the tornado application's settings.
SETTING = "cgu_lab_controller"


@dataclass
class ControllerError(Exception):
    status: int
    message: str


class SocketResolver(Resolver):
    """Resolves every host name to the controller's Unix socket.

    Why: a notebook server in a private network namespace cannot reach the host's
    loopback, so the controller's URL keeps its host (the Host header the controller
    sees) while the connection goes to the socket file; tornado's client opens a socket
    of the family a resolver gives and connects it to the address, a path here."""

    def initialize(self, path: str) -> None:  # tornado's Configurable constructor
        self.path = path

    async def resolve(self, host: str, port: int, family=sockets.AF_UNSPEC):
        return [(sockets.AF_UNIX, self.path)]


class ControllerClient:
    def __init__(self, base_url: str, token: str, owner: str, name: str, socket: str = "") -> None:
        self.base_url = base_url.rstrip("/")
        self.token = token
        self.owner = owner
        self.name = name
        self.socket = socket
        self._client: AsyncHTTPClient | None = None

    def http(self) -> AsyncHTTPClient:
        """The shared client, or this server's own one that connects through the socket."""
        if not self.socket:
            return AsyncHTTPClient()
        if self._client is None:
            resolver = SocketResolver(path=self.socket)
            self._client = SimpleAsyncHTTPClient(force_instance=True, resolver=resolver)
        return self._client

    @property
    def configured(self) -> bool:
        return bool(self.base_url and self.token and self.owner and self.name)

    def notebook_path(self, *parts: str) -> str:
        tail = "/".join(quote(p, safe="") for p in parts)
        base = f"/api/notebooks/{quote(self.owner)}/{quote(self.name)}"
        return f"{base}/{tail}" if tail else base

    async def call(
        self, method: str, path: str, body: dict | None = None, query: dict | None = None
    ):
        """The controller's JSON answer; ControllerError with its message on refusal."""
        if not self.configured:
            raise ControllerError(503, "this notebook is not connected to a cgu-lab controller")
        url = self.base_url + path + (f"?{urlencode(query)}" if query else "")
        request = HTTPRequest(
            url,
            method=method,
            headers={"Authorization": f"Bearer {self.token}", "Content-Type": "application/json"},
            body=json.dumps(body)
            if body is not None
            else (None if method in ("GET", "DELETE") else ""),
            request_timeout=TIMEOUT,
            allow_nonstandard_methods=True,
        )
        try:
            response = await self.http().fetch(request)
        except HTTPClientError as error:
            message = f"the controller answered {error.code}"
            if error.response is not None and error.response.body:
                with contextlib.suppress(ValueError):
                    message = json.loads(error.response.body).get("message", message)
            raise ControllerError(error.code, message) from None
        except OSError as error:
            raise ControllerError(502, f"the controller cannot be reached: {error}") from None
        return json.loads(response.body) if response.body else None

"""A declared app in a real jupyter_server with jupyter-server-proxy: one that can
listen on `{unix_socket}` gets a socket in the notebook's private apps folder, so
no other account on the machine reaches it, and no TCP port is opened for it.

The app is a few lines of the standard library (an HTTP server on a unix
socket), started by jupyter-server-proxy on first use as any app would be.
"""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path

import psutil
import pytest

from cgu_lab.core import apps as rules
from cgu_lab.core.errors import Invalid

from .harness import extension_server_config
from .harness import proxy_headers as as_user

pytestmark = pytest.mark.timeout(90)

# An HTTP server on the unix socket named in argv[1]; it answers with its own uid.
# (No braces: in a command they are jupyter-server-proxy's placeholders.)
SERVE = (
    "import http.server, os, socketserver, sys\n"
    "class H(http.server.BaseHTTPRequestHandler):\n"
    "    def address_string(self): return 'socket'\n"
    "    def do_GET(self):\n"
    "        body = ('app of uid %d' % os.getuid()).encode()\n"
    "        self.send_response(200); self.send_header('Content-Length', str(len(body)))\n"
    "        self.end_headers(); self.wfile.write(body)\n"
    "class S(socketserver.UnixStreamServer): pass\n"
    "S(sys.argv[1], H).serve_forever()\n"
)
APP = {"name": "tool", "title": "Tool", "command": [sys.executable, "-c", SERVE, "{unix_socket}"]}


@pytest.fixture
def jp_server_config(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))
    config = extension_server_config(CguLabExtension={"apps": json.dumps([APP])})
    config["ServerApp"]["jpserver_extensions"]["jupyter_server_proxy"] = True
    return config


def _sockets_of_this_test(tmp_path: Path) -> list[Path]:
    return [p for p in tmp_path.glob("apps-*/*.sock") if stat.S_ISSOCK(p.stat().st_mode)]


async def test_a_socket_app_is_served_from_the_private_folder_only(jp_fetch, tmp_path):
    page = await jp_fetch("tool/", headers=as_user("bob", "edit"), request_timeout=60)
    assert page.body == f"app of uid {os.getuid()}".encode()
    [socket] = _sockets_of_this_test(tmp_path)
    assert socket.name == "tool.sock"
    assert socket.parent.stat().st_mode & 0o777 == 0o700  # no one else may even look in
    # The app opened no TCP port: every listening socket of its process is a unix one.
    app = next(p for p in psutil.Process().children(recursive=True) if str(socket) in p.cmdline())
    assert [c for c in app.net_connections("inet") if c.status == psutil.CONN_LISTEN] == []


def test_a_socket_app_takes_no_port():
    with pytest.raises(Invalid, match="takes no port"):
        rules.check_app({**APP, "port": 8080})
    assert rules.check_app(APP)["port"] is None
    assert rules.listens_on_socket(APP["command"])
    assert not rules.listens_on_socket(["rserver", "--www-port={port}"])

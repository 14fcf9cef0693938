"""Hop-by-hop headers through the real proxy: what a message's `Connection` header names
is for that one connection (RFC 9110 7.6.1), so the proxy drops those headers along with
Connection itself, from the browser's request and from the notebook server's answer, as
it drops the fixed hop-by-hop names. A controller in this process (kubernetes backend
without a cluster) forwards to a loopback server that records what it received."""

from __future__ import annotations

import logging

import httpx
import pytest

from cgu_lab.backends.kube_settings import KubeSettings

from .inprocess import ClusterlessKube, InProcess, LoopbackNotebook


def test_headers_named_in_connection_stay_on_their_hop(tmp_path):
    reply = [("Connection", "X-Upstream-Hop, Keep-Alive"), ("X-Upstream-Hop", "server's own")]
    reply += [("Keep-Alive", "timeout=5"), ("X-Upstream-End", "for the browser")]
    with LoopbackNotebook(reply_headers=reply) as upstream:
        backend = ClusterlessKube(KubeSettings.from_env({}), upstream.url)
        app = InProcess(tmp_path / "data", backend=lambda _settings: backend).start()
        try:
            app.create_user("hop")
            with app.client("hop") as hop:
                body = {"name": "lab", "cpu": "0.5", "memory": "1Gi", "image": "jupyter/minimal"}
                hop.ok("POST", "/api/notebooks", 201, json=body)
                hop.ok("POST", "/api/notebooks/hop/lab/start?wait=true", 202)
                answer = hop.get(
                    "/notebook/hop/lab/api/status",
                    headers={
                        "Connection": "keep-alive, X-Client-Hop, x-other-hop",
                        "X-Client-Hop": "browser to proxy only",
                        "X-Other-Hop": "also",
                        "X-Client-End": "for the notebook",
                    },
                )
                assert answer.status_code == 200, answer.text
        finally:
            app.stop()
    (received,) = upstream.seen
    assert "x-client-hop" not in received and "x-other-hop" not in received, received
    assert received["x-client-end"] == ["for the notebook"]
    assert received["x-cgu-user"] == ["hop"]  # the proxy's own headers are never dropped
    assert "x-upstream-hop" not in answer.headers and "keep-alive" not in answer.headers
    assert answer.headers["x-upstream-end"] == "for the browser"


def test_an_answer_cut_short_is_cut_short_for_the_browser(tmp_path, caplog):
    """The notebook's server hangs up in the middle of a body (it was stopped): the proxy
    passes on what came and cuts the answer there, with a warning and no error of its own."""
    with LoopbackNotebook() as upstream:
        backend = ClusterlessKube(KubeSettings.from_env({}), upstream.url)
        app = InProcess(tmp_path / "data", backend=lambda _settings: backend).start()
        try:
            app.create_user("cut")
            with app.client("cut") as cut, caplog.at_level(logging.WARNING):
                body = {"name": "lab", "cpu": "0.5", "memory": "1Gi", "image": "jupyter/minimal"}
                cut.ok("POST", "/api/notebooks", 201, json=body)
                cut.ok("POST", "/api/notebooks/cut/lab/start?wait=true", 202)
                # never a whole-looking answer: the connection is cut, as the server's was
                with pytest.raises(httpx.RemoteProtocolError):
                    cut.get("/notebook/cut/lab/files/big.bin/cut-short")
                cut.ok("GET", "/notebook/cut/lab/api/status", 200)  # and the next one is whole
        finally:
            app.stop()
    assert any("did not answer" in r.getMessage() for r in caplog.records)
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR], caplog.text

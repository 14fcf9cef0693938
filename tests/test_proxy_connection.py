"""Hop-by-hop headers through the real proxy: what a message's `Connection` header names
is for that one connection (RFC 9110 7.6.1), so the proxy drops those headers along with
Connection itself, from the browser's request and from the notebook server's answer, as
it drops the fixed hop-by-hop names. A controller in this process (kubernetes backend
without a cluster) forwards to a loopback server that records what it received."""

from __future__ import annotations

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

"""Time from a start request to JupyterLab answering, through the controller (median of 5).

Each run: POST start, follow the progress events until `ready`, then fetch the
JupyterLab page through the proxy; the figure is the time until that page
arrives. The notebook is stopped between runs.
"""

from __future__ import annotations

import json

from platform_under_test import median, now, platform

RUNS = 5


def one_start(client) -> tuple[float, float]:
    started = now()
    client.ok("POST", "/api/notebooks/bench/timing/start", 202)
    with client.stream("GET", "/api/notebooks/bench/timing/events") as stream:
        for line in stream.iter_lines():
            if line.startswith("data: ") and json.loads(line[6:])["done"]:
                break
    ready = now() - started
    page = client.get("/notebook/bench/timing/lab", headers={"Accept": "text/html"})
    assert page.status_code == 200, page.status_code
    return ready, now() - started


def main() -> None:
    with platform() as controller, controller.client("bench") as client:
        client.ok("POST", "/api/notebooks", 201, json={"name": "timing", "cpu": 1, "memory": "1Gi"})
        readies, pages = [], []
        for _ in range(RUNS):
            ready, page = one_start(client)
            readies.append(ready)
            pages.append(page)
            client.ok("POST", "/api/notebooks/bench/timing/stop?wait=true", 202)
    print("== start to JupyterLab ready (local backend) ==")
    print(f"runs: {RUNS}; each: " + ", ".join(f"{p:.2f}s" for p in pages))
    print(f"median until the server answers: {median(readies):.2f} s")
    print(f"median until the JupyterLab page arrives: {median(pages):.2f} s (aim: under 3 s)")


if __name__ == "__main__":
    main()

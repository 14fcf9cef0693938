"""File manager: upload and download throughput, through the controller's proxy vs direct.

One platform, one running notebook, the same requests two ways:
  direct - to the notebook server's port, with the identity headers and
           secret a perfect proxy would add;
  proxy  - through the controller with an API token, as scripts do (the
           proxy authenticates, authorises and streams both ways).

Upload: a SIZE file sent as the page sends it (JupyterLab's chunked contents
PUTs, base64 JSON, CHUNK bytes each, one after another), then SMALL files of
SMALL_SIZE bytes one PUT each (files/s). Download: the folder as one zip
from `cgu-lab/transfer/zip` (streamed; the big file is random, so deflate
gains nothing and costs most), and the big file alone from JupyterLab's own
`files/` route, for comparison. MB/s are of file bytes (base64 and zip
overhead not counted); best of ROUNDS.

Run from the repository root: `.venv/bin/python benchmarks/bench_transfer.py`.
"""

from __future__ import annotations

import base64
import os
import time

import httpx
from platform_under_test import platform, server_of

SIZE = 128 * 2**20
CHUNK = 4 * 2**20
SMALL = 200
SMALL_SIZE = 16 * 2**10
ROUNDS = 2
NOTEBOOK = "/notebook/bench/transfer"


def upload_big(client: httpx.Client, base: str, headers: dict, data: bytes) -> float:
    started = time.perf_counter()
    count = (len(data) + CHUNK - 1) // CHUNK
    for index in range(count):
        body = {
            "type": "file",
            "format": "base64",
            "chunk": -1 if index == count - 1 else index + 1,
            "content": base64.b64encode(data[index * CHUNK : (index + 1) * CHUNK]).decode(),
        }
        response = client.put(f"{base}/api/contents/up/big.bin", json=body, headers=headers)
        response.raise_for_status()
    return time.perf_counter() - started


def upload_small(client: httpx.Client, base: str, headers: dict, files: list[bytes]) -> float:
    started = time.perf_counter()
    for index, data in enumerate(files):
        body = {"type": "file", "format": "base64", "content": base64.b64encode(data).decode()}
        url = f"{base}/api/contents/up/small{index}.txt"
        response = client.put(url, json=body, headers=headers)
        response.raise_for_status()
    return time.perf_counter() - started


def download(client: httpx.Client, url: str, headers: dict) -> tuple[float, int]:
    started, received = time.perf_counter(), 0
    with client.stream("GET", url, headers=headers) as response:
        response.raise_for_status()
        for block in response.iter_bytes():
            received += len(block)
    return time.perf_counter() - started, received


def main() -> None:
    data = os.urandom(SIZE)
    small = [os.urandom(SMALL_SIZE // 2) + b"a,b,c\n" * (SMALL_SIZE // 12) for _ in range(SMALL)]
    payload = SIZE + sum(len(s) for s in small)
    results: dict[str, dict[str, float]] = {}
    with platform() as controller, controller.client("bench") as client:
        spec = {"name": "transfer", "cpu": 1, "memory": "2Gi"}
        client.ok("POST", "/api/notebooks", 201, json=spec)
        client.ok("POST", "/api/notebooks/bench/transfer/start?wait=true", 202)
        port, secret = server_of("bench", "transfer")
        token = client.ok("POST", "/api/me/tokens", 201, json={"name": "bench"})["token"]
        ways = {
            "direct": (
                f"http://127.0.0.1:{port}{NOTEBOOK}",
                {"X-Cgu-User": "bench", "X-Cgu-Proxy-Secret": secret, "X-Cgu-Via": "token"},
            ),
            "proxy": (f"{controller.url}{NOTEBOOK}", {"Authorization": f"Bearer {token}"}),
        }
        with httpx.Client(timeout=300) as http:
            base, headers = ways["direct"]
            http.put(f"{base}/api/contents/up", json={"type": "directory"}, headers=headers)
            for name, (base, headers) in ways.items():
                best: dict[str, float] = {}
                for _ in range(ROUNDS):
                    timings = {
                        "upload big": upload_big(http, base, headers, data),
                        "upload small": upload_small(http, base, headers, small),
                    }
                    zipped, zip_bytes = download(
                        http, f"{base}/cgu-lab/transfer/zip?path=up", headers
                    )
                    timings["download zip"] = zipped
                    timings["download file"] = download(http, f"{base}/files/up/big.bin", headers)[
                        0
                    ]
                    for key, value in timings.items():
                        best[key] = min(best.get(key, value), value)
                results[name] = best
    mb = 2**20
    print(
        f"== file transfer: {SIZE // mb} MiB file in {CHUNK // mb} MiB chunks, "
        f"{SMALL} files of {SMALL_SIZE // 1024} KiB; best of {ROUNDS} =="
    )
    print(f"zip of the folder: {zip_bytes / mb:.0f} MiB for {payload / mb:.0f} MiB of files")
    rows = [
        ("upload, chunked PUTs", "upload big", SIZE / mb, "MiB/s"),
        ("upload, small files", "upload small", SMALL, "files/s"),
        ("download, folder as zip", "download zip", payload / mb, "MiB/s"),
        ("download, files/ (stock)", "download file", SIZE / mb, "MiB/s"),
    ]
    for label, key, amount, unit in rows:
        direct = amount / results["direct"][key]
        proxied = amount / results["proxy"][key]
        print(
            f"{label:>26}: direct {direct:8.1f} {unit:<7} proxy {proxied:8.1f} {unit:<7} "
            f"({proxied / direct:.2f} of direct)"
        )


if __name__ == "__main__":
    main()

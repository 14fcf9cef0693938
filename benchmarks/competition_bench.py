"""Competitions: scoring throughput and the leaderboard under 200 concurrent viewers.

Scoring: ENTRIES students each submit a 10,000-row predictions CSV (accuracy) to
a real controller process; the figure is entries scored per minute from the
first submission to the last score, end to end (upload, queue, the sandboxed
scorer: its own account, no network, rlimits; the database). In the same run,
two peers on the same files: scikit-learn's `accuracy_score` (after reading both
CSVs with the csv module, as the scorer must) and the platform's own pure
scoring (core/competition.py) without the sandbox, which shows what the sandbox
costs per entry.

Leaderboard: `wrk` with 200 connections for a few seconds on the public
leaderboard of those ENTRIES participants, beside the same load on the
competition's own description (GET /api/competitions/<id>, one row read) as the
peer: the ratio is what ranking the board costs per request.

Open pages: 200 viewers follow the board's stream (what the competition page does)
while CHANGES more entries are scored one after another; for each change, how long
after the first page each page had the new board (p50/p99/max), and whether every
page saw the last one. The peer, in the same run: 200 pages asking for the board every
1.5 s (the page's old polling), timed against one stream follower as the reference:
how long after the change a polling page first saw it.
"""

from __future__ import annotations

import asyncio
import csv
import io
import json
import random
import re
import shutil
import subprocess
import time

import httpx
from platform_under_test import percentile, platform

from cgu_lab.backends.competition_sandbox import scorer_name

ROWS = 10_000
ENTRIES = 20
VIEWERS = 200
DURATION = 6
CHANGES = 10
POLL_SECONDS = 1.5
LABELS = ("cat", "dog", "bird", "fish")


def table(rows: dict[str, str]) -> str:
    return "id,prediction\n" + "".join(f"{k},{v}\n" for k, v in rows.items())


def wrk(url: str, token: str) -> tuple[float, str, str]:
    command = ["wrk", "-t", "2", "-c", str(VIEWERS), "-d", f"{DURATION}s", "--latency"]
    command += ["-H", f"Authorization: Bearer {token}", url]
    output = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    failed = re.search(r"Non-2xx or 3xx responses: (\d+)", output)
    if failed:
        raise RuntimeError(f"{url}: {failed.group(1)} failed requests\n{output}")
    p99 = re.search(r"99%\s+(\S+)", output).group(1)
    errors = re.search(r"Socket errors: (.*)", output)
    rate = float(re.search(r"Requests/sec:\s+([\d.]+)", output).group(1))
    return rate, p99, errors.group(1) if errors else "none"


async def follow(
    client: httpx.AsyncClient, path: str, seen: dict, ready: asyncio.Event, total: int
):
    """One open page: note when each board (by its number of entries) first arrived."""
    async with client.stream("GET", path) as stream:
        async for line in stream.aiter_lines():
            if line.startswith("data: "):
                board = json.loads(line[6:])
                entries = sum(row["entries"] for row in board["rows"])
                seen.setdefault(entries, time.perf_counter())
                ready.set()
                if entries >= total:
                    return


async def poll_board(client: httpx.AsyncClient, path: str, seen: dict, total: int):
    """The polling peer: the board every POLL_SECONDS, noting when each was first seen."""
    while True:
        board = (await client.get(path)).json()
        entries = sum(row["entries"] for row in board["rows"])
        seen.setdefault(entries, time.perf_counter())
        if entries >= total:
            return
        await asyncio.sleep(POLL_SECONDS)


async def open_pages(url: str, token: str, cid: int, submit, streamed: bool, first: int):
    """VIEWERS pages (streams, or pollers beside one reference stream) while CHANGES
    entries are scored; per page and change, seconds after the reference's arrival."""
    total = first + CHANGES
    headers = {"Authorization": f"Bearer {token}"}
    limits = httpx.Limits(max_connections=VIEWERS + 10)
    async with httpx.AsyncClient(
        base_url=url, headers=headers, limits=limits, timeout=60
    ) as client:
        board = f"/api/competitions/{cid}/leaderboard"
        reference: dict = {}
        pages = [{} for _ in range(VIEWERS)]
        ready = [asyncio.Event() for _ in range(VIEWERS + 1)]
        tasks = [
            asyncio.create_task(follow(client, f"{board}/events", reference, ready[-1], total))
        ]
        for seen, event in zip(pages, ready, strict=False):
            if streamed:
                tasks.append(
                    asyncio.create_task(follow(client, f"{board}/events", seen, event, total))
                )
            else:
                tasks.append(asyncio.create_task(poll_board(client, board, seen, total)))
                event.set()
        await asyncio.gather(*(event.wait() for event in ready))
        for _ in range(CHANGES):
            await asyncio.to_thread(submit)
        done, pending = await asyncio.wait(tasks, timeout=120)
        for task in pending:
            task.cancel()
        failed = len(pending) + sum(1 for task in done if task.exception() is not None)
    lags = [
        seen[n] - reference[n]
        for seen in pages
        for n in range(first + 1, total + 1)
        if n in seen and n in reference
    ]
    return lags, failed


def describe_lags(lags: list[float]) -> str:
    if len(lags) < 2:
        return "too few boards seen"
    return (
        f"p50 {percentile(lags, 0.5) * 1000:6.0f} ms, p99 {percentile(lags, 0.99) * 1000:6.0f} ms,"
        f" max {max(lags) * 1000:6.0f} ms"
    )


def peers(solution_text: str, files: list[str]) -> tuple[float, float]:
    """Entries per minute: scikit-learn's accuracy_score, and our scoring in-process."""
    from sklearn.metrics import accuracy_score

    from cgu_lab.core.competition import read_table, score

    def read(text: str) -> dict[str, str]:
        return {row["id"]: row["prediction"] for row in csv.DictReader(io.StringIO(text))}

    started = time.perf_counter()
    for text in files:
        truth, guess = read(solution_text), read(text)
        accuracy_score([truth[k] for k in truth], [guess[k] for k in truth])
    sklearn_rate = len(files) / (time.perf_counter() - started) * 60
    started = time.perf_counter()
    for text in files:
        solution = read_table(solution_text, "id", "prediction", "the solution")
        predictions = read_table(text, "id", "prediction", "your file")
        score(solution, predictions, "accuracy", "salt", 0.5)
    ours_rate = len(files) / (time.perf_counter() - started) * 60
    return sklearn_rate, ours_rate


def main() -> None:
    if not shutil.which("wrk"):
        raise SystemExit("wrk is needed: apt-get install wrk")
    rng = random.Random(7)
    solution = {str(i): rng.choice(LABELS) for i in range(1, ROWS + 1)}
    solution_text = table(solution)
    files = [
        table(
            {
                k: (v if rng.random() < 0.5 + i / 50 else rng.choice(LABELS))
                for k, v in solution.items()
            }
        )
        for i in range(ENTRIES)
    ]
    students = [f"bench-s{i}" for i in range(ENTRIES)]
    with platform() as controller:
        controller.create_users([(name, "student") for name in students])
        with controller.client("bench-admin") as admin:
            admin.ok("POST", "/api/groups", 201, json={"name": "bench-course"})
            roster = "username\n" + "\n".join(students) + "\n"
            admin.ok("POST", "/api/groups/bench-course/import", json={"csv": roster})
            competition = admin.ok(
                "POST",
                "/api/groups/bench-course/competitions",
                201,
                json={
                    "name": "bench",
                    "starts_at": "2020-01-01T00:00:00+00:00",
                    "ends_at": "2100-01-01T00:00:00+00:00",
                    "metric": "accuracy",
                    "per_day": 0,
                },
            )
            cid = competition["id"]
            admin.ok(
                "PUT",
                f"/api/competitions/{cid}/files/solution",
                content=solution_text,
                headers={"Content-Type": "text/csv"},
            )
            clients = [controller.client(name) for name in students]
            started = time.perf_counter()
            for client, text in zip(clients, files, strict=True):
                client.ok(
                    "POST",
                    f"/api/competitions/{cid}/entries",
                    201,
                    content=text,
                    headers={"Content-Type": "text/csv"},
                )
            while True:
                entries = admin.ok("GET", f"/api/competitions/{cid}/entries")
                if all(e["state"] not in ("queued", "scoring") for e in entries):
                    break
                time.sleep(0.05)
            elapsed = time.perf_counter() - started
            assert {e["state"] for e in entries} == {"scored"}, entries
            platform_rate = ENTRIES / elapsed * 60
            token = clients[0].ok("POST", "/api/me/tokens", 201, json={"name": "bench"})["token"]
            board = clients[0].ok("GET", f"/api/competitions/{cid}/leaderboard")
            assert len(board["rows"]) == ENTRIES

            def score_one_more() -> None:
                """One more entry, waited for until scored: one change of the board."""
                client = clients[0]
                entry = client.ok(
                    "POST",
                    f"/api/competitions/{cid}/entries",
                    201,
                    content=files[0],
                    headers={"Content-Type": "text/csv"},
                )
                while True:
                    mine = client.ok("GET", f"/api/competitions/{cid}/entries/mine")
                    if next(e for e in mine if e["id"] == entry["id"])["state"] == "scored":
                        return
                    time.sleep(0.05)

            pages = {}
            for streamed in (True, False):
                first = ENTRIES + CHANGES * len(pages)
                pages[streamed] = asyncio.run(
                    open_pages(controller.url, token, cid, score_one_more, streamed, first)
                )
            for client in clients:
                client.close()
        leaderboard_rps, leaderboard_p99, leaderboard_errors = wrk(
            f"{controller.url}/api/competitions/{cid}/leaderboard", token
        )
        describe_rps, describe_p99, describe_errors = wrk(
            f"{controller.url}/api/competitions/{cid}", token
        )
        instance = (controller.data_dir / "instance-id").read_text().strip()
    # The installation's scorer account goes with it.
    subprocess.run(["userdel", scorer_name(instance)], check=False, capture_output=True)
    sklearn_rate, ours_rate = peers(solution_text, files)
    print(f"scoring {ROWS}-row CSVs, {ENTRIES} entries (accuracy):")
    print(f"  platform end to end (upload, queue, sandbox): {platform_rate:8.0f} entries/min")
    print(f"  our scoring in-process, no sandbox:           {ours_rate:8.0f} entries/min")
    print(f"  peer: csv + scikit-learn accuracy_score:      {sklearn_rate:8.0f} entries/min")
    print(f"  ratio platform / scikit-learn: {platform_rate / sklearn_rate:.3f}")
    print(f"  ratio our scoring / scikit-learn: {ours_rate / sklearn_rate:.2f}")
    print(f"leaderboard of {ENTRIES} participants, {VIEWERS} concurrent viewers ({DURATION} s):")
    print(
        f"  leaderboard:                {leaderboard_rps:8.0f} req/s, p99 {leaderboard_p99},"
        f" socket errors: {leaderboard_errors}"
    )
    print(
        f"  peer: competition (1 row):  {describe_rps:8.0f} req/s, p99 {describe_p99},"
        f" socket errors: {describe_errors}"
    )
    print(f"  ratio leaderboard / plain read: {leaderboard_rps / describe_rps:.2f}")
    print(f"{VIEWERS} open pages while {CHANGES} more entries are scored, one after another:")
    (stream_lags, stream_failed), (poll_lags, poll_failed) = pages[True], pages[False]
    print("  following the stream: each page's new board after the first page's:")
    print(
        f"    {describe_lags(stream_lags)}; pages that failed or missed the last: {stream_failed}"
    )
    print(f"  peer: asking every {POLL_SECONDS} s: the new board after a stream follower's:")
    print(f"    {describe_lags(poll_lags)}; pages that failed or missed the last: {poll_failed}")


if __name__ == "__main__":
    main()

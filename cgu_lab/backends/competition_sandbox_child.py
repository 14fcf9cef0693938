"""The scorer inside its sandbox: `python -I -m cgu_lab.backends.competition_sandbox_child`.

Started by `competition_sandbox.ScorerSandbox` as the installation's scorer account,
in a network namespace of its own, under rlimits. It never opens a path the
controller names: the hidden solution, the predictions and the teacher's script
arrive as open file descriptors (their numbers in the job on stdin), so the
scorer account needs no right to read anything in the data directory.

It writes exactly one JSON object on stdout, which the controller reads:
  {"ok": true, "public": x, "private": y, "rows": n}
  {"ok": false, "kind": "prediction", "message": ...}  the student's file; safe to show
  {"ok": false, "kind": "scorer", "log": ...}          anything else; the teacher's eyes only
A teacher's script runs as a child of this process, inside the same sandbox,
once per part of the split: `python -I score.py SOLUTION PREDICTIONS`, its last
line of output the score. Its output is returned as `log` (teacher only).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
import traceback

from ..core.competition import PredictionError, check_predictions, read_table, score, split
from ..core.metrics import CUSTOM, METRICS

MAX_LOG = 20000


def _read(fd: int, what: str) -> str:
    with os.fdopen(fd, "rb") as handle:
        raw = handle.read()
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise PredictionError(f"{what} is not UTF-8 text") from None


def _write_part(path: str, header: tuple[str, str], ids: list[str], values: dict) -> None:
    import csv

    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        writer.writerows((row_id, values[row_id]) for row_id in ids)


def _custom(job: dict, solution: dict, predictions: dict) -> dict:
    """Run the teacher's script on each part; its last printed line is the score."""
    script = _read(job["script_fd"], "the scoring script")
    deadline = time.monotonic() + float(job["time_limit"])
    header = (job["id_column"], job["target_column"])
    results: list[float | None] = []
    log: list[str] = []
    prefix = f"cgu-{job.get('tag', 'x')}-score-"
    with tempfile.TemporaryDirectory(prefix=prefix) as work:
        path = os.path.join(work, "score.py")
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(script)
        for part, ids in zip(
            ("public", "private"), split(solution, job["salt"], job["fraction"]), strict=True
        ):
            if not ids:
                results.append(None)
                continue
            truth, guess = os.path.join(work, "solution.csv"), os.path.join(work, "predictions.csv")
            _write_part(truth, header, ids, solution)
            _write_part(guess, header, ids, predictions)
            try:
                done = subprocess.run(
                    [sys.executable, "-I", path, truth, guess],
                    capture_output=True,
                    text=True,
                    errors="replace",
                    cwd=work,
                    timeout=max(1.0, deadline - time.monotonic()),
                    check=False,
                )
            except subprocess.TimeoutExpired:
                return {"ok": False, "kind": "scorer", "log": f"{part}: the script ran too long"}
            log.append(f"--- {part} (exit {done.returncode})\n{done.stdout}{done.stderr}")
            lines = [line for line in done.stdout.splitlines() if line.strip()]
            try:
                if done.returncode != 0 or not lines:
                    raise ValueError("no score printed")
                results.append(float(lines[-1]))
            except ValueError:
                return {"ok": False, "kind": "scorer", "log": "\n".join(log)[-MAX_LOG:]}
    return {
        "ok": True,
        "public": results[0],
        "private": results[1],
        "rows": len(solution),
        "log": "\n".join(log)[-MAX_LOG:],
    }


def run(job: dict) -> dict:
    try:
        solution_text = _read(job["solution_fd"], "the solution")
        solution = read_table(solution_text, job["id_column"], job["target_column"], "the solution")
    except Exception:  # the teacher's side: never the student's business
        return {"ok": False, "kind": "scorer", "log": traceback.format_exc()[-MAX_LOG:]}
    try:
        text = _read(job["predictions_fd"], "your file")
        predictions = read_table(text, job["id_column"], job["target_column"], "your file")
        metric = job["metric"]
        check_predictions(solution, predictions, "" if metric == CUSTOM else METRICS[metric].kind)
    except PredictionError as error:
        return {"ok": False, "kind": "prediction", "message": str(error)}
    try:
        if metric == CUSTOM:
            return _custom(job, solution, predictions)
        result = score(solution, predictions, metric, job["salt"], job["fraction"])
        return {"ok": True, "public": result.public, "private": result.private, "rows": result.rows}
    except Exception:
        return {"ok": False, "kind": "scorer", "log": traceback.format_exc()[-MAX_LOG:]}


def main() -> None:
    job = json.loads(sys.stdin.read())
    result = run(job)
    sys.stdout.write(json.dumps(result))
    sys.stdout.flush()


if __name__ == "__main__":
    main()

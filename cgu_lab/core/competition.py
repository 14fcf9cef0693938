"""A competition's rules without I/O: its phase, the public/private split, limits,
reading a predictions file against the hidden solution, and the leaderboard's order.

Why the split is a keyed hash: each solution row is public or private by
`sha256(salt, id)`, with a salt only the controller knows, so the split is the
same on every scoring (a student cannot re-roll it by resubmitting), needs no
stored list, and cannot be guessed from the ids a student sees.

What a student may learn from a refusal: only facts about their own file
(its header, one of its own ids or cells, counts). A message never quotes a
solution cell or an id the student did not send, so a crafted file cannot make
the scorer print the hidden set: `PredictionError` is the only error whose
text reaches the student; anything else is "the scorer failed" for them and
the details for the teacher.
"""

from __future__ import annotations

import csv
import hashlib
import io
import math
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta

from .errors import DomainError
from .metrics import METRICS, Metric

MAX_ID = 200
MAX_QUOTED = 40


class PredictionError(ValueError):
    """The student's file cannot be scored; the message speaks of their file only."""


class CompetitionClosed(DomainError):
    status = 403
    code = "competition_closed"


class CompetitionNotStarted(DomainError):
    status = 403
    code = "competition_not_started"


class SubmissionLimit(DomainError):
    status = 429
    code = "submission_limit"

    def __init__(self, message: str, retry_after: float | None = None, **details: object) -> None:
        if retry_after is not None:
            seconds = max(1, int(-(-retry_after // 1)))
            details["retry_after"] = seconds
            self.headers = {"Retry-After": str(seconds)}
        super().__init__(message, **details)


def phase(start: datetime, end: datetime, now: datetime) -> str:
    """ "upcoming" before the start, "open" until the end (exclusive), then "closed"."""
    if now < start:
        return "upcoming"
    return "open" if now < end else "closed"


def check_open(title: str, start: datetime, end: datetime, now: datetime) -> None:
    state = phase(start, end, now)
    if state == "upcoming":
        raise CompetitionNotStarted(
            f"'{title}' opens at {start.isoformat(timespec='minutes')}; submit after that"
        )
    if state == "closed":
        raise CompetitionClosed(
            f"'{title}' ended at {end.isoformat(timespec='minutes')}; "
            "late submissions are not accepted"
        )


def day_start(now: datetime) -> datetime:
    """The start of `now`'s UTC day: daily limits reset at midnight UTC, as on Kaggle."""
    return now.replace(hour=0, minute=0, second=0, microsecond=0)


def check_limits(used_today: int, used_total: int, per_day: int, total: int, now: datetime) -> None:
    """Refuse a submission over the daily or total limit (0: no limit), naming both."""
    if total and used_total >= total:
        raise SubmissionLimit(
            f"you have used all {total} submissions of this competition",
            limit=total,
            used=used_total,
        )
    if per_day and used_today >= per_day:
        wait = (day_start(now) + timedelta(days=1) - now).total_seconds()
        raise SubmissionLimit(
            f"you have used today's {per_day} submissions; more are allowed after midnight UTC",
            wait,
            limit=per_day,
            used=used_today,
        )


def in_public(salt: str, row_id: str, fraction: float) -> bool:
    """Whether a solution row counts for the public leaderboard (see the module's doc)."""
    digest = hashlib.sha256(f"{salt}\0{row_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64 < fraction


def _quote(text: str) -> str:
    return repr(text[:MAX_QUOTED] + ("…" if len(text) > MAX_QUOTED else ""))


def read_table(text: str, id_column: str, value_column: str, what: str) -> dict[str, str]:
    """{id: value} of a CSV with (at least) these two columns; PredictionError naming
    the row of `what` ("your file", "the solution") that is wrong."""
    try:
        return _table(text, id_column, value_column, what)
    except csv.Error as error:  # a field over the module's size limit, a NUL...
        raise PredictionError(f"{what} is not readable CSV: {error}") from None


def _table(text: str, id_column: str, value_column: str, what: str) -> dict[str, str]:
    # newline="": the csv module reads \r, \n and \r\n line ends itself.
    reader = csv.reader(io.StringIO(text, newline=""))
    header = next(reader, None)
    if header is None:
        raise PredictionError(f"{what} is empty; it needs the columns {id_column},{value_column}")
    header = [name.strip().lstrip("\ufeff") for name in header]
    missing = [name for name in (id_column, value_column) if name not in header]
    if missing:
        raise PredictionError(
            f"{what} lacks the column {', '.join(missing)}; its header must name "
            f"{id_column} and {value_column}"
        )
    id_at, value_at = header.index(id_column), header.index(value_column)
    rows: dict[str, str] = {}
    for number, row in enumerate(reader, start=2):
        if not row:
            continue
        if len(row) <= max(id_at, value_at):
            raise PredictionError(f"{what}, line {number}: too few columns")
        row_id = row[id_at].strip()
        if not row_id or len(row_id) > MAX_ID:
            raise PredictionError(f"{what}, line {number}: the id is empty or too long")
        if row_id in rows:
            raise PredictionError(f"{what}, line {number}: the id {_quote(row_id)} is repeated")
        rows[row_id] = row[value_at].strip()
    return rows


def _number(value: str, row_id: str, what: str) -> float:
    try:
        number = float(value)
    except ValueError:
        raise PredictionError(
            f"{what}: the value for id {_quote(row_id)} is not a number: {_quote(value)}"
        ) from None
    if not math.isfinite(number):
        raise PredictionError(f"{what}: the value for id {_quote(row_id)} is not finite")
    return number


def check_solution(solution: dict[str, str], metric: Metric) -> None:
    """Refuse a hidden solution its metric cannot use (the teacher sees this message)."""
    if not solution:
        raise PredictionError("the solution has no rows")
    if metric.kind in ("number", "binary"):
        values = [_number(v, k, "the solution") for k, v in solution.items()]
        if metric.kind == "binary" and (set(values) != {0.0, 1.0}):
            raise PredictionError("an AUC solution holds only 0 and 1, and both of them")


@dataclass(frozen=True)
class Score:
    public: float | None
    private: float | None
    rows: int


def _part(metric: Metric, truth: list[str], predicted: list[str]) -> float | None:
    if not truth:
        return None
    if metric.kind == "label":
        return metric.function(truth, predicted)
    numbers = [float(t) for t in truth]
    if metric.kind == "binary" and len(set(numbers)) < 2:
        return None  # a part holding one class has no AUC
    return metric.function(numbers, [float(p) for p in predicted])


def check_predictions(solution: dict[str, str], predictions: dict[str, str], kind: str) -> None:
    """Refuse a file whose ids are not exactly the solution's, or whose cells the
    metric cannot read (`kind` of core/metrics.py; "" for a teacher's script)."""
    what = "your file"
    unknown = next((row_id for row_id in predictions if row_id not in solution), None)
    if unknown is not None:
        extra = sum(1 for row_id in predictions if row_id not in solution)
        raise PredictionError(
            f"{what} has {extra} id(s) that are not in the test set, e.g. {_quote(unknown)}"
        )
    if len(predictions) < len(solution):
        raise PredictionError(
            f"{what} has {len(predictions)} of the test set's {len(solution)} ids; "
            "predict every row of the test inputs"
        )
    if kind in ("number", "binary"):
        for row_id, value in predictions.items():
            _number(value, row_id, what)


def split(solution: dict[str, str], salt: str, fraction: float) -> tuple[list[str], list[str]]:
    """The solution's ids in the public part and in the private part."""
    public: list[str] = []
    private: list[str] = []
    for row_id in solution:
        (public if in_public(salt, row_id, fraction) else private).append(row_id)
    return public, private


def score(
    solution: dict[str, str],
    predictions: dict[str, str],
    metric_name: str,
    salt: str,
    public_fraction: float,
) -> Score:
    """Score predictions on the public and the private part of the solution."""
    metric = METRICS[metric_name]
    check_predictions(solution, predictions, metric.kind)
    values = []
    for ids in split(solution, salt, public_fraction):
        values.append(_part(metric, [solution[i] for i in ids], [predictions[i] for i in ids]))
    return Score(values[0], values[1], len(solution))


def better(a: float, b: float, higher_is_better: bool) -> bool:
    return a > b if higher_is_better else a < b


@dataclass(frozen=True)
class Entry:
    """A scored submission as the leaderboard sees it."""

    participant: str
    score: float
    submitted_at: datetime
    submission_id: int


def leaderboard(entries: Iterable[Entry], higher_is_better: bool) -> list[tuple[int, Entry]]:
    """One line per participant (their best entry), ranked; ties go to the earlier entry."""

    def order(entry: Entry) -> tuple:
        value = -entry.score if higher_is_better else entry.score
        return (value, entry.submitted_at, entry.submission_id)

    best: dict[str, Entry] = {}
    for entry in entries:
        held = best.get(entry.participant)
        if held is None or order(entry) < order(held):
            best[entry.participant] = entry
    return list(enumerate(sorted(best.values(), key=order), start=1))


# -- the staff's export ------------------------------------------------------------

CSV_COLUMNS = (
    "entry",
    "submitted_at",
    "user",
    "team",
    "state",
    "public_score",
    "private_score",
    "file",
    "bytes",
    "sha256",
    "message",
    "gpu_type",
)


def _safe_cell(value: object) -> str:
    """A cell a spreadsheet shows as text, never runs as a formula."""
    text = "" if value is None else str(value)
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


def entries_csv(entries: Iterable[dict]) -> str:
    """Every entry of a competition as CSV, for the course's managers."""
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(CSV_COLUMNS)
    for e in entries:
        writer.writerow(
            [
                e["id"],
                e["submitted_at"].isoformat(),
                _safe_cell(e["user"]),
                _safe_cell(e["team"]),
                e["state"],
                e["public_score"],
                e["private_score"],
                _safe_cell(e["file_name"]),
                e["bytes"],
                e["content_hash"],
                _safe_cell(e["message"]),
                _safe_cell(e.get("gpu_type")),
            ]
        )
    return buffer.getvalue()

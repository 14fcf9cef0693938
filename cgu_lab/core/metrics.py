"""The metrics a competition scores predictions with: pure functions over two lists.

Written here rather than taken from scikit-learn because they run inside the
scorer's sandbox (cgu_lab/backends/competition_sandbox_child.py), which must start fast,
under a small memory limit, from the controller's own Python without the
scientific stack: importing scikit-learn alone takes more memory and time
than scoring a 10,000-row file with these. tests/test_competitions_metrics.py
checks each one against scikit-learn's on random inputs.

Labels (accuracy, macro-F1) are compared as the strings the files hold;
numbers (RMSE, MAE) and scores (AUC) are floats the caller has parsed.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass


def accuracy(truth: Sequence[str], predicted: Sequence[str]) -> float:
    """The share of rows whose predicted label equals the true one."""
    if not truth:
        return 0.0
    return sum(1 for t, p in zip(truth, predicted, strict=True) if t == p) / len(truth)


def macro_f1(truth: Sequence[str], predicted: Sequence[str]) -> float:
    """The unweighted mean of each label's F1, over every label in either list.

    A label with no true and no predicted rows cannot occur (it would be in
    neither list); a label with precision and recall both zero counts as 0,
    as scikit-learn's `zero_division=0` does.
    """
    hits: Counter[str] = Counter()
    for t, p in zip(truth, predicted, strict=True):
        if t == p:
            hits[t] += 1
    actual, guessed = Counter(truth), Counter(predicted)
    labels = set(actual) | set(guessed)
    if not labels:
        return 0.0
    total = 0.0
    for label in labels:
        denominator = actual[label] + guessed[label]
        total += 2 * hits[label] / denominator if denominator else 0.0
    return total / len(labels)


def rmse(truth: Sequence[float], predicted: Sequence[float]) -> float:
    if not truth:
        return 0.0
    squared = math.fsum((t - p) ** 2 for t, p in zip(truth, predicted, strict=True))
    return math.sqrt(squared / len(truth))


def mae(truth: Sequence[float], predicted: Sequence[float]) -> float:
    if not truth:
        return 0.0
    return math.fsum(abs(t - p) for t, p in zip(truth, predicted, strict=True)) / len(truth)


def auc(truth: Sequence[float], scores: Sequence[float]) -> float:
    """The area under the ROC curve of a binary task (truth 0 or 1, any real scores).

    The Mann-Whitney form: the chance that a random positive row scores above
    a random negative one, ties counting half (average ranks). Undefined with
    only one class; the caller refuses such a test set when it is uploaded.
    """
    order = sorted(range(len(scores)), key=scores.__getitem__)
    ranks = [0.0] * len(scores)
    start = 0
    while start < len(order):
        end = start
        while end + 1 < len(order) and scores[order[end + 1]] == scores[order[start]]:
            end += 1
        average = (start + end) / 2 + 1
        for position in range(start, end + 1):
            ranks[order[position]] = average
        start = end + 1
    positives = sum(1 for t in truth if t == 1)
    negatives = len(truth) - positives
    if not positives or not negatives:
        raise ValueError("AUC needs both classes in the true labels")
    rank_sum = math.fsum(r for r, t in zip(ranks, truth, strict=True) if t == 1)
    return (rank_sum - positives * (positives + 1) / 2) / (positives * negatives)


@dataclass(frozen=True)
class Metric:
    name: str
    title: str
    function: Callable[[Sequence, Sequence], float]
    higher_is_better: bool
    # How each cell is read: "label" (text as it is), "number" (a float), "binary"
    # (truth 0/1, predictions any float).
    kind: str


METRICS: dict[str, Metric] = {
    m.name: m
    for m in (
        Metric("accuracy", "Accuracy", accuracy, True, "label"),
        Metric("macro_f1", "Macro-averaged F1", macro_f1, True, "label"),
        Metric("rmse", "Root mean squared error", rmse, False, "number"),
        Metric("mae", "Mean absolute error", mae, False, "number"),
        Metric("auc", "Area under the ROC curve", auc, True, "binary"),
    )
}
# The metric of a competition scored by the teacher's own script; its direction is the
# competition's `higher_is_better`.
CUSTOM = "custom"

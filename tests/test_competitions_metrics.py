"""The competition rules without a server: metrics against scikit-learn's, the split,
reading files, limits and the leaderboard's order."""

import random
from datetime import datetime, timedelta, timezone

import pytest

from cgu_lab.core import competition as rules
from cgu_lab.core import metrics

sklearn_metrics = pytest.importorskip("sklearn.metrics")


@pytest.mark.parametrize("seed", range(20))
def test_metrics_match_scikit_learn(seed):
    rng = random.Random(seed)  # noqa: S311 - reproducible test data
    n = rng.randint(1, 300)
    labels = [rng.choice("abcde"[: rng.randint(1, 5)]) for _ in range(n)]
    guesses = [rng.choice("abcdef") for _ in range(n)]
    assert metrics.accuracy(labels, guesses) == pytest.approx(
        sklearn_metrics.accuracy_score(labels, guesses)
    )
    assert metrics.macro_f1(labels, guesses) == pytest.approx(
        sklearn_metrics.f1_score(labels, guesses, average="macro", zero_division=0)
    )
    truth = [rng.uniform(-100, 100) for _ in range(n)]
    predicted = [t + rng.gauss(0, 10) for t in truth]
    assert metrics.rmse(truth, predicted) == pytest.approx(
        sklearn_metrics.root_mean_squared_error(truth, predicted)
    )
    assert metrics.mae(truth, predicted) == pytest.approx(
        sklearn_metrics.mean_absolute_error(truth, predicted)
    )
    binary = [rng.randint(0, 1) for _ in range(max(n, 2))]
    binary[:2] = [0, 1]
    # Rounded scores: many ties, which AUC must count as halves.
    scores = [round(rng.random(), 1) for _ in binary]
    assert metrics.auc(binary, scores) == pytest.approx(
        sklearn_metrics.roc_auc_score(binary, scores)
    )


def test_auc_needs_both_classes():
    with pytest.raises(ValueError):
        metrics.auc([1, 1], [0.2, 0.3])


def test_split_is_stable_keyed_and_near_the_fraction():
    ids = [str(i) for i in range(10_000)]
    public = [i for i in ids if rules.in_public("salt-a", i, 0.3)]
    assert public == [i for i in ids if rules.in_public("salt-a", i, 0.3)]
    assert 0.28 < len(public) / len(ids) < 0.32
    other = {i for i in ids if rules.in_public("salt-b", i, 0.3)}
    assert other != set(public)  # another salt, another split


SOLUTION = "id,prediction\n1,secret-a\n2,secret-b\n3,secret-a\n"


def test_a_bad_file_is_described_without_solution_cells():
    solution = rules.read_table(SOLUTION, "id", "prediction", "the solution")
    attempts = {
        "id,prediction\n1,x\n2,y\n": "2 of the test set's 3 ids",
        "id,prediction\n1,x\n2,y\n3,z\n99,w\n": "not in the test set",
        "id,guess\n1,x\n": "lacks the column prediction",
        "id,prediction\n1,x\n1,y\n": "repeated",
        "": "empty",
    }
    for text, expected in attempts.items():
        with pytest.raises(rules.PredictionError) as refused:
            predictions = rules.read_table(text, "id", "prediction", "your file")
            rules.check_predictions(solution, predictions, "label")
        assert expected in str(refused.value)
        assert "secret" not in str(refused.value)
    numbers = rules.read_table("id,prediction\n1,1.5\n", "id", "prediction", "the solution")
    with pytest.raises(rules.PredictionError, match="not a number: 'abc'"):
        rules.check_predictions(numbers, {"1": "abc"}, "number")
    with pytest.raises(rules.PredictionError, match="not finite"):
        rules.check_predictions(numbers, {"1": "nan"}, "number")


def test_score_uses_both_parts():
    solution = {str(i): "a" if i % 2 else "b" for i in range(200)}
    predictions = dict(solution)
    result = rules.score(solution, predictions, "accuracy", "s", 0.5)
    assert (result.public, result.private, result.rows) == (1.0, 1.0, 200)


def test_limits_name_the_limit_and_the_wait():
    now = datetime(2027, 3, 1, 18, 0, tzinfo=timezone.utc)
    rules.check_limits(1, 1, 2, 3, now)
    with pytest.raises(rules.SubmissionLimit) as daily:
        rules.check_limits(2, 2, 2, 3, now)
    assert daily.value.details["retry_after"] == 6 * 3600
    assert daily.value.status == 429
    with pytest.raises(rules.SubmissionLimit, match="all 3 submissions"):
        rules.check_limits(0, 3, 2, 3, now)
    rules.check_limits(100, 100, 0, 0, now)  # 0: no limit


def test_phase_and_refusals():
    start = datetime(2027, 3, 1, tzinfo=timezone.utc)
    end = start + timedelta(days=7)
    assert rules.phase(start, end, start - timedelta(seconds=1)) == "upcoming"
    assert rules.phase(start, end, start) == "open"
    assert rules.phase(start, end, end) == "closed"
    with pytest.raises(rules.CompetitionClosed) as late:
        rules.check_open("Digits", start, end, end)
    assert late.value.code == "competition_closed"


def test_leaderboard_best_per_participant_ties_to_the_earlier():
    t0 = datetime(2027, 3, 1, tzinfo=timezone.utc)
    entries = [
        rules.Entry("bob", 0.9, t0 + timedelta(minutes=5), 3),
        rules.Entry("alice", 0.9, t0 + timedelta(minutes=1), 1),
        rules.Entry("alice", 0.5, t0, 2),
        rules.Entry("carol", 0.95, t0 + timedelta(minutes=9), 4),
    ]
    ranked = rules.leaderboard(entries, higher_is_better=True)
    assert [(rank, e.participant) for rank, e in ranked] == [(1, "carol"), (2, "alice"), (3, "bob")]
    lowest = rules.leaderboard(entries, higher_is_better=False)
    assert lowest[0][1].participant == "alice" and lowest[0][1].score == 0.5

"""The guard that keeps a worker's device time honest: a trial whose host time (the
audit's clock less the stand-in's floor) exceeds GUARD_RATIO x the device time it claims
plus its slack counts at the host time. Pure arithmetic, checked against hand-worked
numbers; tests/test_adversarial.py checks the same rule on real workers."""

from __future__ import annotations

import pytest

from hf_eval.records import reported_time
from hf_eval.trials import GUARD_MIN_MS, GUARD_RATIO, TrialTime, _statistics


def trial(device: float, host: float, slack: float = 0.5) -> TrialTime:
    return TrialTime(device_ms=device, host_ms=host, clock="cuda-events", slack_ms=slack)


def test_a_device_time_the_host_confirms_counts():
    t = trial(device=10.0, host=12.0)  # 12 <= 1.25 * 10 + 0.5
    assert not t.flagged and t.counted_ms == 10.0


def test_a_device_time_the_host_cannot_explain_counts_at_host_time():
    t = trial(device=10.0, host=13.1)  # 13.1 > 1.25 * 10 + 0.5 = 13.0
    assert t.flagged and t.counted_ms == 13.1


def test_a_forged_zero_device_time_gains_only_the_slack():
    t = trial(device=0.0, host=0.4)  # within the slack: the most a liar can hide
    assert not t.flagged and t.counted_ms == 0.0
    t = trial(device=0.0, host=20.0)
    assert t.flagged and t.counted_ms == 20.0


def test_a_host_faster_than_the_device_never_lowers_the_time():
    t = trial(device=10.0, host=0.0)
    assert not t.flagged and t.counted_ms == 10.0


def test_statistics_are_per_call_and_count_flagged_trials():
    trials = [trial(10.0, 11.0), trial(10.0, 40.0), trial(12.0, 12.0)]
    out = _statistics(trials, iters=10, calls="graph replay", cold=True)
    assert out["counted_trials_ms"] == [1.0, 4.0, 1.2]
    assert out["median_ms"] == pytest.approx(1.2)
    assert out["device_median_ms"] == pytest.approx(1.0)
    assert out["host_median_ms"] == pytest.approx(1.2)
    assert out["flagged"] == 1 and out["trials"] == 3 and out["iters"] == 10
    assert out["l2"] == "flushed" and out["clock"] == "cuda-events"
    assert out["guard"] == {"ratio": GUARD_RATIO, "slack_ms": 0.05}


def test_the_slack_has_a_floor():
    assert GUARD_MIN_MS > 0 and GUARD_RATIO >= 1


@pytest.mark.parametrize("timing, expected", [
    ({"cold": {"median_ms": 2.0}, "graph": {"median_ms": 1.0}, "eager": {"median_ms": 9}},
     ("cold", 2.0)),
    ({"graph": {"median_ms": 1.0}, "eager": {"median_ms": 9}}, ("graph", 1.0)),
    ({"prepared": {"median_ms": 3.0}, "eager": {"median_ms": 9}}, ("prepared", 3.0)),
    ({"eager": {"median_ms": 9}}, ("eager", 9.0)),
    ({"cold": {"median_ms": 0.0}, "eager": {"median_ms": 9}}, ("eager", 9.0)),
    ({"cold": {"error": "x"}}, None),
    ({}, None),
])
def test_one_reported_time(timing, expected):
    assert reported_time({"timing": timing}) == expected

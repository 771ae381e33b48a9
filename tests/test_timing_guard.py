"""The guard that keeps a worker's device time honest. A trial's host time (the audit's
clock less the stand-in's floor) is explained by its device time when host <= (1 +
GUARD_REL) x device + slack; every trial of a method counts at least the device time its
least host time implies. Pure arithmetic, checked against hand-worked numbers;
tests/test_adversarial.py checks the same rule on real workers."""

from __future__ import annotations

import pytest

from hf_eval.judge.records import reported_time
from hf_eval.judge.trials import GUARD_MAX_MS, GUARD_MIN_MS, GUARD_REL, TrialTime, _statistics


def trial(device: float, host: float, slack: float = 0.5) -> TrialTime:
    return TrialTime(device_ms=device, host_ms=host, clock="cuda-events", slack_ms=slack)


def counted(trials: list[TrialTime]) -> list[float]:
    return _statistics(trials, iters=1, calls="graph replay", cold=False)["counted_trials_ms"]


def test_the_rule_is_the_one_documented():
    assert GUARD_REL == 0.05 and 0 < GUARD_MIN_MS < GUARD_MAX_MS


def test_a_device_time_the_host_confirms_counts():
    t = trial(device=10.0, host=11.0)  # 11 <= 1.05 * 10 + 0.5
    assert not t.flagged
    assert counted([t, t]) == [10.0, 10.0]


def test_hidden_work_in_every_trial_counts_at_what_each_trials_host_implies():
    """No trial confirms the device time: each counts what its own host time implies, so
    the method's median is the host's median, not its quietest trial (which would gain
    work hidden in every trial the host's spread over an honest kernel's median)."""
    trials = [trial(device=1.0, host=21.5), trial(device=1.0, host=30.5)]
    assert all(t.flagged for t in trials)
    assert counted(trials) == pytest.approx([20.0, 28.571428])  # (host - 0.5) / 1.05


def test_hidden_work_counts_at_its_median_trial_as_honest_work_does():
    """The same 20-40 ms of work in five trials, once on the device clock and once hidden
    from it behind a claim of 0: both medians are the middle trial's time (the hidden one
    less the slack and the 5%), not the hidden work's quietest trial."""
    hosts = [21.0, 40.0, 30.0, 25.0, 35.0]
    honest = _statistics([trial(device=h, host=h) for h in hosts], iters=1,
                         calls="eager calls", cold=False)
    hidden = _statistics([trial(device=0.0, host=h) for h in hosts], iters=1,
                         calls="eager calls", cold=False)
    assert honest["median_ms"] == 30.0
    assert hidden["median_ms"] == pytest.approx((30.0 - 0.5) / 1.05)
    assert hidden["min_ms"] == pytest.approx((21.0 - 0.5) / 1.05)


def test_a_noisy_trial_counts_its_own_host_time_and_moves_no_median():
    trials = [trial(device=10.0, host=10.0), trial(device=10.0, host=90.0),
              trial(device=10.0, host=10.2)]
    assert not trials[0].flagged and trials[1].flagged
    assert counted(trials) == pytest.approx([10.0, 85.238095, 10.0])  # (90 - 0.5) / 1.05
    assert _statistics(trials, iters=1, calls="eager calls", cold=False)["median_ms"] == 10.0


def test_a_claim_raised_in_one_trial_lowers_no_other():
    """The work is hidden from the device clock in two trials; the third claims far more
    than its host saw, so it is not flagged. Each hidden trial still counts at what its
    own host time implies, not at the quiet third's: the median is the hidden work's."""
    trials = [trial(device=1000.0, host=21.0), trial(device=0.0, host=40.0),
              trial(device=0.0, host=30.0)]
    assert [t.flagged for t in trials] == [False, True, True]
    out = _statistics(trials, iters=1, calls="eager calls", cold=False)
    assert out["median_ms"] == pytest.approx((40.0 - 0.5) / 1.05)


@pytest.mark.parametrize("claim", [0.0, 2.0, 7.0, 10.0])
def test_a_forged_device_time_gains_at_most_the_tolerance(claim):
    """The real work takes 10 ms a trial; whatever is claimed, it counts at least
    (10 - slack) / (1 + GUARD_REL)."""
    trials = [trial(device=claim, host=10.0), trial(device=claim, host=10.2)]
    assert min(counted(trials)) >= (10.0 - 0.5) / 1.05 - 1e-6  # (rounded to 1 ns)


def test_a_host_faster_than_the_device_never_lowers_the_time():
    assert counted([trial(device=10.0, host=0.0)]) == [10.0]


def test_statistics_are_per_call():
    trials = [trial(10.0, 10.5), trial(10.0, 40.5), trial(12.0, 13.1)]
    out = _statistics(trials, iters=10, calls="graph replay", cold=True)
    assert out["counted_trials_ms"] == pytest.approx([1.0, 40.0 / 1.05 / 10, 1.2])
    assert out["median_ms"] == pytest.approx(1.2)
    assert out["median_us"] == pytest.approx(1200.0)  # the published report's unit
    assert out["device_median_ms"] == pytest.approx(1.0)
    assert out["host_median_ms"] == pytest.approx(1.31)
    assert out["host_implied_ms"] == pytest.approx(1.2)  # (13.1 - 0.5) / 1.05, the median
    assert out["flagged"] == 1 and out["trials"] == 3 and out["iters"] == 10
    assert out["l2"] == "flushed" and out["clock"] == "cuda-events"
    assert out["guard_slack_ms"] == 0.05


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


def test_the_harness_own_timing_carries_microseconds():
    from hf_eval.judge.timing import summarise

    timing = summarise([2.0, 0.5, 1.25], iters=4)
    assert (timing.median_ms, timing.median_us, timing.min_ms, timing.max_ms) == (
        1.25, 1250.0, 0.5, 2.0)
    assert timing.to_json()["median_us"] == 1250.0


def test_a_trial_that_needed_the_allowance_buys_no_time():
    """A trial in which a judged call passed only by the timed-call allowance may have
    guessed in its unjudged calls too: it counts at no less than the slowest trial of
    its method that needed none, and its host time sets no bound for the others."""
    def dirty(device: float, host: float) -> TrialTime:
        return TrialTime(device_ms=device, host_ms=host, clock="cuda-events",
                         slack_ms=0.5, allowance=True)

    # the clean trials took 10 and 11 ms; two guessing trials claim 4 ms
    out = _statistics([trial(10.0, 10.0), dirty(4.0, 4.0), trial(11.0, 11.0),
                       dirty(4.0, 4.0)], iters=1, calls="graph replay", cold=False)
    assert out["counted_trials_ms"] == [10.0, 11.0, 11.0, 11.0]
    assert out["median_ms"] == 11.0 and out["allowance_trials"] == 2
    # a clean trial's host floor holds; a dirty trial's small host time lowers nothing
    out = counted([trial(1.0, 21.5), dirty(1.0, 1.0)])
    assert out == pytest.approx([20.0, 20.0])  # (21.5 - 0.5) / 1.05
    # where every trial needed it, each counts at the slowest
    assert counted([dirty(4.0, 4.0), dirty(5.0, 5.0), dirty(6.0, 6.0)]) == [6.0, 6.0, 6.0]


def _toy_session():
    """A CPU session with no worker behind it, for the parts of the scheme that read
    numbers only."""
    import torch

    from hf_eval.judge.trials import InputSet, Session

    class Toy:
        op_type = "toy"

    return Session(handle=None, stand_in_worker=None, definition=Toy(), task=None,
                   device=torch.device("cpu"), main=InputSet("m", [torch.zeros(2)], ()),
                   reference=None, secret=b"secret", timeout=1.0)


def test_every_trial_is_read_against_all_the_stand_in_runs_of_its_shape():
    """The stand-in's floor (the runs' median) and spread (median less cheapest) come
    from every run of the request's shape in the session, the runs after a trial
    included: the first trial of a method is read against as many runs as the last, and
    runs of another shape count for nothing."""
    from hf_eval.judge.trials import GUARD_SPREAD

    session = _toy_session()
    shape = ("graph", 50, False)
    session._runs[shape] = [5.0, 5.2]  # the first trial's runs
    first = session._against_the_floor(TrialTime(
        device_ms=1.0, host_ms=0.0, clock="cuda-events", slack_ms=0.0, wall_ms=9.0,
        shape=shape))
    assert first.host_ms == pytest.approx(3.9)  # 9.0 - 5.1, the two runs' median
    assert first.slack_ms == pytest.approx(GUARD_SPREAD * 0.1)  # median 5.1 - cheapest 5.0
    session._runs[shape] += [4.0, 4.1, 4.2, 6.0]  # the later trials' runs
    session._runs[("graph", 50, True)] = [0.5, 0.5]  # the cold replays': another shape
    later = TrialTime(device_ms=1.0, host_ms=0.0, clock="cuda-events", slack_ms=0.0,
                      wall_ms=7.0, shape=shape)
    settled = session._settled([first, later])
    # median of the six runs (4.2 + 5.0) / 2 = 4.6; cheapest 4.0; spread 0.6
    assert [t.host_ms for t in settled] == pytest.approx([4.4, 2.4])
    assert [t.slack_ms for t in settled] == pytest.approx([GUARD_SPREAD * 0.6] * 2)
    assert all(t.phases["stand_in_floor"] == pytest.approx(4.6)
               and t.phases["stand_in_cheapest"] == 4.0 and t.phases["stand_in_pooled"] == 6
               for t in settled)


def test_the_floor_is_a_typical_run_at_most_the_slack_cap_above_the_cheapest():
    """One request is read against a typical run of the stand-in, not the cheapest of a
    pool that grows with every trial; where the runs spread widely, the floor stays
    within GUARD_MAX_MS of the cheapest, so a cheat gains at most the slack and that
    lift a trial."""
    from hf_eval.judge.trials import GUARD_MAX_MS

    session = _toy_session()
    shape = ("graph", 50, False)
    session._runs[shape] = [5.0, 5.1, 5.2, 5.3, 5.4, 9.0, 9.0]  # a typical run: 5.3
    quiet = session._against_the_floor(TrialTime(
        device_ms=0.15, host_ms=0.0, clock="cuda-events", slack_ms=0.0, wall_ms=5.9,
        shape=shape))
    # 5.9 - 5.3 = 0.6 of host time, within 1.05 x 0.15 + slack 3 x 0.3: not flagged
    assert quiet.host_ms == pytest.approx(0.6) and not quiet.flagged
    session._runs[shape] = [5.0, 6.0, 12.0, 13.0, 14.0]  # median 12.0, cheapest 5.0
    wide = session._against_the_floor(TrialTime(
        device_ms=0.15, host_ms=0.0, clock="cuda-events", slack_ms=0.0, wall_ms=12.0,
        shape=shape))
    assert wide.phases["stand_in_floor"] == 5.0 + GUARD_MAX_MS
    assert wide.host_ms == pytest.approx(12.0 - 5.0 - GUARD_MAX_MS)
    assert wide.slack_ms == GUARD_MAX_MS and wide.flagged


def test_a_session_is_read_against_its_own_stand_in_runs_only(toy_root, tmp_path):
    """Runs of an earlier session on the same case (another candidate's, which could
    slow them) never join a later session's floor or widen its slack: on the H200, runs
    pooled over a suite's candidates let a cheat's slack grow until it counted 17.7 ms
    for 20 ms of work (results/h200/2026-12-04-serve/r4)."""
    from hf_eval.dataset import open_dataset
    from hf_eval.judge.audit import Audit, AuditConfig
    from hf_eval.judge.report import read_report
    from hf_eval.judge.trials import GUARD_MAX_MS, STAND_IN_RUNS
    from tests.conftest import GOOD_SOLUTION, solution_json, write_json

    write_json(toy_root / "solutions/toy/torch_toy_again.json",
               solution_json("torch_toy_again", GOOD_SOLUTION + "\n# the same, again\n"))
    report = tmp_path / "report.jsonl"
    Audit(open_dataset(toy_root), AuditConfig(report=report, suite="first",
                                              solutions="all")).run()
    records = read_report(report)
    assert [r["status"] for r in records] == ["PASSED", "PASSED"]
    assert records[0]["workload"] == records[1]["workload"]
    runs = STAND_IN_RUNS["cpu"]
    for record in records:
        phases = record["timing"]["eager"]["phases_ms"]
        trials = len(phases)
        assert [len(p["stand_in_runs"]) for p in phases] == [runs] * trials
        assert [p["stand_in_pooled"] for p in phases] == [runs * trials] * trials
        own = sorted(r for p in phases for r in p["stand_in_runs"])
        assert {p["stand_in_cheapest"] for p in phases} == {own[0]}
        typical = (own[(len(own) - 1) // 2] + own[len(own) // 2]) / 2
        floor = min(typical, own[0] + GUARD_MAX_MS)  # from runs rounded as recorded
        assert [p["stand_in_floor"] for p in phases] == pytest.approx([floor] * trials,
                                                                        abs=1e-3)


def _scripted_session(walls: list[float], monkeypatch):
    """A CPU session whose timed trials come from ``walls`` (ms on the audit's clock, the
    stand-in's floor 5 ms with no spread: slack GUARD_MIN_MS), each claiming 1 ms, with
    CUDA's retries."""
    import types

    from hf_eval.data.schema import Timing
    from hf_eval.judge import trials

    session = _toy_session()
    shape = ("eager", 1, False)
    session._runs[shape] = [5.0, 5.0]
    monkeypatch.setitem(trials.GUARD_RETRIES, "cpu", trials.GUARD_RETRIES["cuda"])
    script = iter(walls)
    session._iters = lambda spec: 1
    session._warm_up = lambda method, spec: None
    session._fresh_sets = lambda n: ([], types.SimpleNamespace(id="a"))
    session._write = session.forget = lambda *args, **kwargs: None
    session._trial = lambda *args, **kwargs: (None, session._against_the_floor(TrialTime(
        device_ms=1.0, host_ms=0.0, clock="cpu-clock", slack_ms=0.0, wall_ms=next(script),
        shape=shape)))
    return session, Timing(warmup=0, iters=1, trials=3)


def test_a_method_mostly_flagged_gets_more_trials_until_most_are_not(monkeypatch):
    """Host stalls flagged all three trials of honest cases on the device; quiet trials
    are added until fewer than half are flagged, and the median is a quiet trial's
    device time (the stalled trials count at what their own host times imply)."""
    from hf_eval.judge.trials import GUARD_MIN_MS, GUARD_RETRIES

    walls = [45.0, 38.0, 52.0, 6.0, 6.0, 6.0, 6.0, 99.0]
    session, spec = _scripted_session(walls, monkeypatch)
    out = session.time("eager", spec)
    assert GUARD_RETRIES["cuda"] == 4 and out["trials"] == 7 and out["extra_trials"] == 4
    assert out["flagged"] == 3 and out["median_ms"] == 1.0
    stalled = [(w - 5.0 - GUARD_MIN_MS) / (1 + GUARD_REL) for w in walls[:3]]
    assert out["counted_trials_ms"] == pytest.approx(stalled + [1.0] * 4)


def test_the_trials_added_never_end_on_an_even_count_half_flagged(monkeypatch):
    """Two trials and two added, two of the four stalled: the median would average a
    stalled trial with a quiet one, so one more is added past the cap."""
    from hf_eval.data.schema import Timing
    from hf_eval.judge import trials

    session, _ = _scripted_session([45.0, 38.0, 6.0, 6.0, 6.0, 99.0], monkeypatch)
    monkeypatch.setitem(trials.GUARD_RETRIES, "cpu", 2)
    out = session.time("eager", Timing(warmup=0, iters=1, trials=2))
    assert out["trials"] == 5 and out["extra_trials"] == 3
    assert out["flagged"] == 2 and out["median_ms"] == 1.0


def test_hidden_work_in_every_trial_is_in_every_added_one_too(monkeypatch):
    """20 ms of work behind a 1 ms claim in every trial: the added trials are flagged as
    well, no more than GUARD_RETRIES are run, and each counts what its own host implies."""
    from hf_eval.judge.trials import GUARD_MIN_MS, GUARD_RETRIES

    session, spec = _scripted_session([25.0 + k for k in range(10)], monkeypatch)
    out = session.time("eager", spec)
    retries = GUARD_RETRIES["cuda"]
    assert out["trials"] == 3 + retries and out["extra_trials"] == retries
    assert out["flagged"] == out["trials"]
    implied = [(25.0 + k - 5.0 - GUARD_MIN_MS) / (1 + GUARD_REL) for k in range(out["trials"])]
    assert out["counted_trials_ms"] == pytest.approx(implied)


def test_no_trial_is_added_where_the_quietest_trial_took_long(monkeypatch):
    """A candidate can flag every trial at will; one that also stalls each (here 1.5 s)
    gets no added trials to stall as well."""
    from hf_eval.judge.trials import RETRY_WALL_MAX_MS

    walls = [RETRY_WALL_MAX_MS + 500.0] * 6
    session, spec = _scripted_session(walls, monkeypatch)
    out = session.time("eager", spec)
    assert out["trials"] == 3 and out["extra_trials"] == 0 and out["flagged"] == 3


def test_no_trial_is_added_after_any_trial_took_long(monkeypatch):
    """One quiet flagged trial does not open the door to added trials that each stall:
    once any trial of the method took over RETRY_WALL_MAX_MS, none is added."""
    from hf_eval.judge.trials import RETRY_WALL_MAX_MS

    session, spec = _scripted_session([30.0, 30.0, 30.0, RETRY_WALL_MAX_MS + 10.0, 30.0, 30.0],
                                      monkeypatch)
    out = session.time("eager", spec)
    assert out["trials"] == 4 and out["extra_trials"] == 1


@pytest.mark.parametrize("freed, gone, expected", [
    (True, True, "Failure"),  # ending the worker freed the GPU: its work
    (False, False, "Failure"),  # its processes were still ending: its work still
    (False, True, "SharedGpuBusy"),  # all of it gone, the GPU still busy: another's
])
def test_a_gpu_left_busy_is_blamed_on_the_candidate_unless_it_stays_busy_without_it(
        monkeypatch, freed, gone, expected):
    """The stand-in's waits for a free GPU ran past the session's budget: the candidate's
    worker is ended (every process, and its channel closed, so that no descriptor it sent
    keeps its context alive) before the GPU is looked at again; only a GPU still busy
    once all of it is gone is another process's, and then no candidate is blamed."""
    import types

    from hf_eval.judge import trials

    session, _ = _scripted_session([], monkeypatch)
    ended = []
    session.handle = types.SimpleNamespace(
        thaw=lambda: None, kill=lambda: ended.append("kill"),
        close=lambda: ended.append("close") or gone)
    session._gpu_free = lambda: freed and ended == ["kill", "close"]
    monkeypatch.setattr(trials, "GPU_DRAIN_AFTER_KILL_S", 0.05)
    with pytest.raises((trials.Failure, trials.SharedGpuBusy)) as raised:
        session._blame_the_busy_gpu()
    assert type(raised.value).__name__ == expected and ended == ["kill", "close"]
    if expected == "Failure":
        assert raised.value.result["status"] == "RUNTIME_ERROR"
        assert "device work kept the GPU busy" in raised.value.result["reason"]

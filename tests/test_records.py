"""validate_record: the rules a report line must keep, each broken rule one exact line."""

from __future__ import annotations

import pytest

from hf_eval.judge.records import CaseRecord, RecordError, Status, validate_record

STATUSES = ("PASSED, INCORRECT_SHAPE, INCORRECT_NUMERICAL, INCORRECT_DTYPE, RUNTIME_ERROR, "
            "COMPILE_ERROR, TIMEOUT, DATA_ERROR")


def good(**changes) -> dict:
    record = {"definition": "d", "workload": "w", "solution": "s", "status": "PASSED",
              "device": "cpu", "baseline": "base", "baseline_timed": "call",
              "timing": {"eager": {"median_ms": 1.5, "median_us": 1500.0},
                         "graph": {"median_ms": 0.5, "calls": "graph replay"}},
              "hashes": {"solution": "ab"}, "environment": {"python": "3.12"}}
    record.update(changes)
    return record


def test_a_valid_record_keeps_every_field_as_written():
    record = validate_record(good(outputs=[{"name": "y"}]))
    assert isinstance(record, CaseRecord)
    assert record.status is Status.PASSED and record.passed
    assert record.model_dump(mode="json")["outputs"] == [{"name": "y"}]
    assert record.model_dump(mode="json")["environment"] == {"python": "3.12"}


def test_a_record_of_an_older_harness_has_no_median_us():
    record = validate_record(good(timing={"eager": {"median_ms": 1.5}}))
    assert record.timing["eager"] == {"median_ms": 1.5}


def test_the_keys_older_harnesses_wrote_still_load_as_written():
    older = good(timing={"eager": {"median_ms": 0.75, "event_median_ms": 0.35,
                                   "bound_median_ms": 0.75, "bound_over_event": 2.165,
                                   "event_trials_ms": [0.43, 0.33, 0.35]}},
                 content={"fresh_sets": 451, "timed_calls_allowed": 3,
                          "timed_calls_judged": 64})
    dumped = validate_record(older).model_dump(mode="json")
    assert (dumped["timing"], dumped["content"]) == (older["timing"], older["content"])


@pytest.mark.parametrize("data, message", [
    (good(verdict="PASSED"), "verdict: Extra inputs are not permitted"),
    (good(timing={"eager": {"median_ms": 1.0, "speedup": 9.0}}),
     "timing.eager.speedup: Extra inputs are not permitted"),
    (good(content={"fresh_sets": 3, "cached": True}),
     "content.cached: Extra inputs are not permitted"),
])
def test_a_key_no_harness_writes_is_refused_by_name(data, message):
    with pytest.raises(RecordError) as err:
        validate_record(data)
    assert str(err.value) == message


def test_optional_fields_may_be_left_out():
    record = validate_record({"definition": "d", "workload": "w", "solution": "s",
                              "status": "DATA_ERROR", "reason": "no tensor"})
    assert (record.device, record.timing, record.baseline) == ("cpu", {}, None)


@pytest.mark.parametrize("data, message", [
    (good(status="SKIPPED"), f"status: must be one of {STATUSES} (got 'SKIPPED')"),
    ({k: v for k, v in good().items() if k != "status"},
     f"status: must be one of {STATUSES} (missing)"),
    (good(status=1), f"status: must be one of {STATUSES} (got 1)"),
    (good(definition=""), "definition: must be a non-empty string (got '')"),
    ({k: v for k, v in good().items() if k != "workload"},
     "workload: must be a non-empty string (missing)"),
    (good(solution=["s"]), "solution: must be a non-empty string (got ['s'])"),
    (good(reason=None), "reason: must be a string (got None)"),
    (good(device=""), "device: must be a non-empty string (got '')"),
    (good(timing=[1.0]), "timing: must be an object of timing methods (got [1.0])"),
    (good(timing={"eager": 2.0}), "timing.eager: must be an object (got 2.0)"),
    (good(timing={"\x1b[2J": 2.0}), "timing.'\\x1b[2J': must be an object (got 2.0)"),
    (good(timing={"eager": {"median_ms": "1"}}),
     "timing.eager.median_ms: must be a finite number of milliseconds >= 0 (got '1')"),
    (good(timing={"eager": {"median_ms": float("nan")}}),
     "timing.eager.median_ms: must be a finite number of milliseconds >= 0 (got nan)"),
    (good(timing={"eager": {"median_ms": -1}}),
     "timing.eager.median_ms: must be a finite number of milliseconds >= 0 (got -1)"),
    (good(timing={"eager": {"median_ms": True}}),
     "timing.eager.median_ms: must be a finite number of milliseconds >= 0 (got True)"),
    (good(timing={"eager": {"median_ms": 1.5, "median_us": 1.5}}),
     "timing.eager.median_us: must be median_ms * 1000 = 1500.0 (got 1.5)"),
    (good(timing={"eager": {"median_ms": 1.5, "median_us": float("inf")}}),
     "timing.eager.median_us: must be median_ms * 1000 = 1500.0 (got inf)"),
    (good(timing={"eager": {"median_ms": 0.0, "median_us": False}}),
     "timing.eager.median_us: must be median_ms * 1000 = 0.0 (got False)"),
    (good(timing={"eager": {"median_us": 1500.0}}),
     "timing.eager.median_us: comes with median_ms, which is missing (got 1500.0)"),
    (good(baseline=""), "baseline: must be a non-empty string (got '')"),
    (good(baseline_timed="sometimes"),
     "baseline_timed: must be call, launch or null (got 'sometimes')"),
    (good(hashes={"solution": None}), "hashes: must be an object of strings "
     "(got {'solution': None})"),
    (["not", "a", "record"], "record: must be a JSON object (got list)"),
])
def test_each_broken_rule_is_one_line_naming_field_and_rule(data, message):
    with pytest.raises(RecordError) as info:
        validate_record(data)
    assert str(info.value) == message
    assert info.value.field == message.split(": ", 1)[0]


def test_a_long_value_is_cut_and_control_characters_are_escaped():
    with pytest.raises(RecordError) as info:
        validate_record(good(status="\x1b[2J" + "X" * 100))
    assert str(info.value) == (f"status: must be one of {STATUSES} (got '\\x1b[2J"
                               + "X" * 49 + "...)")
    assert "\x1b" not in str(info.value)


def test_every_field_of_case_record_has_a_docstring():
    for name, info in CaseRecord.model_fields.items():
        assert info.description, name

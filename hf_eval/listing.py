"""``list``: what a newcomer can pass to ``audit`` (definitions, solutions, suites).

Lines fit 80 columns and lead with the name. ``names=True`` gives bare names, one per
line, for scripts (``for d in $(python -m hf_eval list definitions --names)``).
"""

from __future__ import annotations

import json

from hf_eval.repository import Dataset

#: Lines longer than this put a solution's details on a second line.
WIDTH = 80

#: What each ``--suite`` selects (the audit's ``select_workloads`` is the truth).
SUITE_HELP = {
    "sample": "the generated sample (here: every workload)",
    "first": "the first line of each workload file: a smoke test",
    "dev": "each task's dev UUIDs (the default; the rest is held out)",
    "all": "every workload: for final judgments",
    "fresh": "new cases drawn at audit time, one per sample recipe (secret seed)",
}


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}" + ("" if count == 1 else "s")


def definitions(ds: Dataset, names: bool = False) -> list[str]:
    """``name  N workloads`` per definition, sorted."""
    found = sorted(ds.definitions)
    if names:
        return found
    width = max((len(n) for n in found), default=0) + 2
    return [f"{n:<{width}}{_plural(len(ds.workloads.get(n, [])), 'workload')}" for n in found]


def solutions(ds: Dataset, only: list[str] | None = None, names: bool = False) -> list[str]:
    """Per definition, its solutions with their hardware and where each is preferred."""
    by_definition: dict[str, list] = {}
    for located in ds.solutions.values():
        if not only or located.value.definition in only:
            by_definition.setdefault(located.value.definition, []).append(located.value)
    if names:
        return sorted(s.name for found in by_definition.values() for s in found)
    lines = []
    for definition, found in sorted(by_definition.items()):
        task = ds.tasks.get(definition)
        preferred = task.value.preferred if task else {}
        baseline = task.value.baseline.solution if task else None
        width = max(len(s.name) for s in found) + 2
        lines.append(definition)
        for s in sorted(found, key=lambda s: s.name):
            details = ["+".join(s.spec.target_hardware)]
            preferred_on = [hw for hw, pick in sorted(preferred.items())
                            if pick.solution == s.name]
            if preferred_on:
                details.append(f"preferred {','.join(preferred_on)}")
            if s.name == baseline:
                details.append("baseline")
            line = f"  {s.name:<{width}}{'  '.join(details)}"
            if len(line) > WIDTH:  # details on a line of their own rather than past 80
                line = f"  {s.name}\n      {'  '.join(details)}"
            lines.append(line)
    return lines


def suites(ds: Dataset, names: bool = False) -> list[str]:
    """``name  N workloads: what it selects`` per suite, counted over every definition."""
    from hf_eval.runner import SUITES, select_workloads
    from hf_eval.samples.build import cases_path

    if names:
        return list(SUITES)
    lines = []
    for suite in SUITES:
        if suite == "fresh":  # drawn by the audit: one per recipe of the sample's cases
            count = sum(len(json.loads(cases_path(name).read_text())["cases"])
                        for name in ds.definitions if name in ds.tasks
                        and cases_path(name).is_file())
        else:
            count = sum(len(select_workloads(ds, ds.tasks[name].value, name, suite, []))
                        for name in ds.definitions if name in ds.tasks)
        lines.append(f"{suite:<8}{_plural(count, 'workload')}: {SUITE_HELP.get(suite, '')}")
    return lines

"""``list``: what a newcomer can pass to ``audit`` (definitions, solutions, suites).

Lines fit 80 columns and lead with the name. ``names=True`` gives bare names, one per
line, for scripts (``for d in $(python -m hf_eval list definitions --names)``). Names and
hardware come from the dataset's files (a solution file may be a candidate's): they are
escaped with :func:`hf_eval.judge.report.safe_text`, so lines are ready to print.
"""

from __future__ import annotations

from hf_eval.data.suites import SUITE_HELP, SUITES
from hf_eval.dataset import Dataset
from hf_eval.judge.audit import select_workloads
from hf_eval.judge.report import safe_text
from hf_eval.samples.cases import load_cases

#: Lines longer than this put a solution's details on a second line.
WIDTH = 80



def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}" + ("" if count == 1 else "s")


def definitions(ds: Dataset, names: bool = False) -> list[str]:
    """``name  N workloads`` per definition, sorted."""
    found = {safe_text(n): n for n in sorted(ds.definitions)}  # shown name: real name
    if names:
        return list(found)
    width = max((len(n) for n in found), default=0) + 2
    return [f"{shown:<{width}}{_plural(len(ds.workloads.get(n, [])), 'workload')}"
            for shown, n in found.items()]


def solutions(ds: Dataset, only: list[str] | None = None, names: bool = False) -> list[str]:
    """Per definition, its solutions with their hardware and where each is preferred."""
    by_definition: dict[str, list] = {}
    for located in ds.solutions.values():
        if not only or located.value.definition in only:
            by_definition.setdefault(located.value.definition, []).append(located.value)
    if names:
        return sorted(safe_text(s.name) for found in by_definition.values() for s in found)
    lines = []
    for definition, found in sorted(by_definition.items()):
        task = ds.tasks.get(definition)
        preferred = task.value.preferred if task else {}
        baseline = task.value.baseline.solution if task else None
        width = max(len(safe_text(s.name)) for s in found) + 2
        lines.append(safe_text(definition))
        for s in sorted(found, key=lambda s: s.name):
            name = safe_text(s.name)
            details = [safe_text("+".join(s.spec.target_hardware))]
            preferred_on = [hw for hw, pick in sorted(preferred.items())
                            if pick.solution == s.name]
            if preferred_on:
                details.append(f"preferred {','.join(preferred_on)}")
            if s.name == baseline:
                details.append("baseline")
            line = f"  {name:<{width}}{'  '.join(details)}"
            if len(line) > WIDTH:  # details on a line of their own rather than past 80
                line = f"  {name}\n      {'  '.join(details)}"
            lines.append(line)
    return lines


def suites(ds: Dataset, names: bool = False) -> list[str]:
    """``name  N workloads: what it selects`` per suite, counted over every definition."""
    if names:
        return list(SUITES)
    lines = []
    for suite in SUITES:
        if suite == "fresh":  # drawn by the audit: one per recipe of the sample's cases
            count = sum(len(spec.cases) for name in ds.definitions if name in ds.tasks
                        and (spec := load_cases(name)) is not None)
        else:
            count = sum(len(select_workloads(ds, ds.tasks[name].value, name, suite, []))
                        for name in ds.definitions if name in ds.tasks)
        lines.append(f"{suite:<8}{_plural(count, 'workload')}: {SUITE_HELP.get(suite, '')}")
    return lines

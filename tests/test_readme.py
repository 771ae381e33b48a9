"""The README's promises that can drift: the sample table and the Quickstart commands."""

from __future__ import annotations

import re
from collections import Counter

from tests.conftest import REPO

README = (REPO / "README.md").read_text()


def test_sample_table_matches_the_repository():
    rows = re.findall(r"^\| ([a-z_]+) \| (\d+) \| (\d+) \|", README, flags=re.M)
    assert rows, "README has no sample table"
    definitions = Counter(p.parent.name for p in (REPO / "definitions").rglob("*.json"))
    workloads = Counter()
    for path in (REPO / "workloads").rglob("*.jsonl"):
        workloads[path.parent.name] += sum(1 for line in path.read_text().splitlines() if line)
    assert {family: (int(d), int(w)) for family, d, w in rows} == {
        family: (definitions[family], workloads[family]) for family in definitions}
    total = sum(workloads.values())
    assert f"{total} generated workloads over the {sum(definitions.values())} definitions" \
        in README


def test_quickstart_has_exactly_the_two_commands_ci_runs():
    quickstart = README.split("## Quickstart", 1)[1].split("```bash", 1)[1].split("```", 1)[0]
    commands = [line.split("#")[0].strip() for line in quickstart.strip().splitlines()]
    assert commands == ["bash .ci/setup && .venv/bin/python -m hf_eval audit",
                        "bash .ci/setup --test && .venv/bin/python -m pytest"]
    ci = (REPO / ".ci/run").read_text()
    assert "bash .ci/setup --test" in ci and ".venv/bin/python -m pytest" in ci

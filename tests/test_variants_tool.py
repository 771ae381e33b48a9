"""results/h200/tools/variants.py: the committed sweeps still apply to their solutions.

Why: a device run writes each sweep's variants as solution files and times them by name; a
substitution whose text left the solution's source would otherwise be found only on the
device, with its time spent. Each committed sweep is applied here to a copy of its base
solution: every variant must differ from the base by its substitutions alone and load as a
solution; a stale substitution must stop the tool with the variant's name.
"""

import importlib.util
import json
import shutil

import pytest

from hf_eval.data.schema import Solution
from tests import kit

TOOL = kit.REPO / "results/h200/tools/variants.py"
SWEEPS = sorted((kit.REPO / "results/h200/tools/sweeps").glob("*.json"))


def _tool():
    spec = importlib.util.spec_from_file_location("variants_tool", TOOL)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _copy_base(spec: dict, root):
    """The base solution's file, copied under ``root`` at its place in the dataset."""
    source = next(p for p in (kit.REPO / "solutions").rglob("*.json")
                  if json.loads(p.read_text())["name"] == spec["solution"])
    target = root / source.relative_to(kit.REPO)
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(source, target)
    return json.loads(source.read_text())


@pytest.mark.parametrize("sweep_file", SWEEPS, ids=[p.stem for p in SWEEPS])
def test_committed_sweep_applies_to_its_solution(sweep_file, tmp_path):
    tool = _tool()
    sweep = json.loads(sweep_file.read_text())
    bases = {spec["solution"]: _copy_base(spec, tmp_path) for spec in sweep}
    written = tool.write_variants(sweep, tmp_path)
    assert [p.stem for p in written] == tool.variant_names(sweep)
    labels = {f"{spec['solution']}__{v['label']}": (spec, v)
              for spec in sweep for v in spec["variants"]}
    for path in written:
        solution = Solution.model_validate(json.loads(path.read_text()))
        spec, variant = labels[solution.name]
        expected = bases[spec["solution"]]["sources"][0]["content"]
        for old, new in variant["subs"]:
            expected = expected.replace(old, new)
        assert solution.sources[0].content == expected
        assert solution.sources[0].content != bases[spec["solution"]]["sources"][0]["content"]


def test_stale_substitution_stops_the_tool(tmp_path):
    tool = _tool()
    sweep = json.loads(SWEEPS[0].read_text())
    _copy_base(sweep[0], tmp_path)
    sweep[0]["variants"] = [{"label": "stale", "subs": [["no such text in any kernel", "x"]]}]
    with pytest.raises(SystemExit, match="variant 'stale'"):
        tool.write_variants(sweep, tmp_path)

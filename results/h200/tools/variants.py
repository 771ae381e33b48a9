"""Write source variants of a shipped solution as solution files, for `hf-eval bench run`.

Why: Triton tile and launch parameters that are right on an H200 can only be found there,
and the benchmark times candidates only through its confined worker, by solution name. A
sweep file names a solution and variants of its source, each a list of exact
``[old, new]`` text substitutions (an ``old`` that is not in the source is an error, so a
stale sweep never times the unchanged kernel by accident). Each variant becomes the
solution ``<solution>__<label>`` in the base solution's folder; the benchmark then judges
and times it like any other (``--samples`` audits its sample workloads too). Run it on the
device's copy of the tree: the files are measurement scaffolding, never committed, so
`hf-eval bench report` reads the variants' lines as timings of a source the dataset does
not hold (stale), never as results. A winner is shipped under a name of its own and
audited again under that name.

usage: python3 results/h200/tools/variants.py SWEEP.json          write the files, print the names
       python3 results/h200/tools/variants.py SWEEP.json --names  only print the names

SWEEP.json: [{"definition": ..., "solution": ...,
              "variants": [{"label": ..., "subs": [[old, new], ...]}, ...]}, ...]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def variant_names(sweep: list[dict]) -> list[str]:
    """The solution names the sweep's variants get."""
    return [f"{spec['solution']}__{v['label']}" for spec in sweep for v in spec["variants"]]


def write_variants(sweep: list[dict], root: Path) -> list[Path]:
    """One solution file per variant, beside its base solution's file."""
    written = []
    for spec in sweep:
        matches = [p for p in (root / "solutions").rglob("*.json")
                   if json.loads(p.read_text())["name"] == spec["solution"]]
        if len(matches) != 1:
            raise SystemExit(f"{spec['solution']}: {len(matches)} solution files carry that name")
        base_path = matches[0]
        base = json.loads(base_path.read_text())
        if base["definition"] != spec["definition"]:
            raise SystemExit(f"{spec['solution']} implements {base['definition']}, "
                             f"not {spec['definition']}")
        for variant in spec["variants"]:
            data = json.loads(base_path.read_text())
            data["name"] = f"{spec['solution']}__{variant['label']}"
            data["description"] = (f"Variant {variant['label']!r} of {spec['solution']} "
                                   f"(measurement only): {json.dumps(variant['subs'])}")
            for old, new in variant["subs"]:
                hits = [s for s in data["sources"] if old in s["content"]]
                if not hits:
                    raise SystemExit(f"variant {variant['label']!r}: {old!r} is not in "
                                     f"{spec['solution']}'s sources")
                for source in hits:
                    source["content"] = source["content"].replace(old, new)
            path = base_path.with_name(f"{data['name']}.json")
            path.write_text(json.dumps(data, indent=2) + "\n")
            written.append(path)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("sweep", type=Path, help="the sweep file (JSON)")
    parser.add_argument("--names", action="store_true",
                        help="only print the variants' solution names")
    args = parser.parse_args(argv)
    sweep = json.loads(args.sweep.read_text())
    if not args.names:
        for path in write_variants(sweep, ROOT):
            print(f"wrote {path.relative_to(ROOT)}", file=sys.stderr)
    print(",".join(variant_names(sweep)))
    return 0


if __name__ == "__main__":
    sys.exit(main())

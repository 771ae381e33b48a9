"""A sample generator of the toy definition for the fresh-suite tests (tests only): the toy
op family, which a test registers (``registry.FAMILIES["toy"] = FAMILY``) while it runs.

``x`` depends on the case seed; the weight ``w`` is the layer's, drawn from a stream that
depends only on the definition and returned as a zero-argument callable, as the grouped-GEMM
generator returns its multi-GB weight. ``DRAWS`` counts how often ``w`` was really drawn.
"""

from __future__ import annotations

from hf_eval.data.schema import Definition
from hf_eval.families.base import Family
from hf_eval.families.common import normal, rng

DRAWS = {"w": 0}


def _weight(definition: str):
    DRAWS["w"] += 1
    return normal(rng(definition, "w"), (8, 16))


def generate(definition: Definition, params: dict, seed: int) -> dict[str, object]:
    name = definition.name
    return {"x": normal(rng(name, seed, "x"), (int(params["M"]), 16)),
            "w": lambda: _weight(name), "scale": float(params.get("scale", 0.5))}


FAMILY = Family(op_type="toy", module=__name__, generate=generate)

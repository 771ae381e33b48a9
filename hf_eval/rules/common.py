"""Value checks that several families' rules share, with their exact message texts.

Each family module decides *which* inputs a check applies to; the wording of a message
lives here once, so that two families reporting the same kind of violation say it the
same way (the checker's output and the tests match on these texts).
"""

from __future__ import annotations

import math

import torch

Inputs = dict[str, torch.Tensor | int | float | bool]


def first(mask: torch.Tensor) -> str:
    """Position of the first True element of ``mask``, for a message."""
    return str(tuple(int(i) for i in mask.nonzero()[0].tolist()))


def violation(name: str, rule: str, bad: torch.Tensor, values: torch.Tensor | None = None,
              counted: str = "are not") -> list[str]:
    """``[message]`` when any element of ``bad`` is set, else ``[]``.

    The message is ``"<name>: <rule>; <count> <counted>, first at <position>"``, followed
    by ``" = <value>"`` (the first offending element of ``values``) when ``values`` is given.
    """
    if not bool(bad.any()):
        return []
    message = f"{name}: {rule}; {int(bad.sum())} {counted}, first at {first(bad)}"
    if values is not None:
        message += f" = {int(values[bad][0])}"
    return [message]


def non_finite(name: str, tensor: torch.Tensor, show_value: bool = False) -> list[str]:
    """``[message]`` when ``tensor`` holds a NaN or infinity, else ``[]``.

    ``show_value`` appends the first offending value (``nan``, ``inf`` or ``-inf``).
    """
    if bool(torch.isfinite(tensor).all()):
        return []
    bad = ~torch.isfinite(tensor.cpu())
    message = (f"{name}: every value must be finite; {int(bad.sum())} are not, "
               f"first at {first(bad)}")
    if show_value:
        position = tuple(int(i) for i in bad.nonzero()[0].tolist())
        message += f" = {float(tensor[position])}"
    return [message]


def finite_problems(inputs: Inputs, names: tuple[str, ...]) -> list[str]:
    """One message per floating-point tensor among ``names`` that holds a NaN or infinity.

    Inputs that are absent, scalars or integer tensors are not this rule's business.
    """
    problems = []
    for name in names:
        value = inputs.get(name)
        if isinstance(value, torch.Tensor) and value.is_floating_point():
            problems += non_finite(name, value, show_value=True)
    return problems


def page_table_range(page_table: torch.Tensor, num_pages: int) -> list[str]:
    """Every page-table entry must be -1 (unused) or a page of the pool."""
    bad = (page_table != -1) & ((page_table < 0) | (page_table >= num_pages))
    return violation("page_table", f"every entry must be -1 (unused) or a page in "
                     f"[0, {num_pages})", bad, page_table)


def positive_scale(name: str, value: object) -> list[str]:
    """A scalar scale factor must be finite and positive."""
    scale = float(value)
    if not (math.isfinite(scale) and scale > 0):
        return [f"{name}: must be finite and positive, got {scale}"]
    return []


def sink_and_scale(inputs: Inputs) -> list[str]:
    """The sink logits (finite or -inf) and ``sm_scale`` of the MLA families."""
    problems = []
    sink = inputs["attn_sink"].to(torch.float32)
    bad = torch.isnan(sink) | (sink == math.inf)
    if bool(bad.any()):
        problems.append(f"attn_sink: every entry must be a finite logit or -inf (no sink); "
                        f"head {first(bad)} is {float(sink[bad][0])}")
    return problems + positive_scale("sm_scale", inputs["sm_scale"])

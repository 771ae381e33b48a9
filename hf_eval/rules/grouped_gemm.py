"""Value rules of the FP8 x FP4 grouped GEMM family that shapes and dtypes cannot express.

Every packed FP4 byte is a valid pair of codes, so ``Wq_packed`` has no value rule. The
scales must not hold UE8M0's NaN byte, activations must not hold FP8 NaN codes, and the
rows must be grouped by expert in ascending order with IDs naming real experts.
"""

from __future__ import annotations

import torch

from hf_eval.rules.common import first

#: UE8M0 byte 255 (NaN) read through the int8 carrier.
UE8M0_NAN_CARRIER = -1


def check(definition: str, inputs: dict[str, torch.Tensor | int | float | bool]) -> list[str]:
    """One message per violated value rule of a grouped GEMM workload; empty when valid."""
    problems = []
    expert_id = inputs["expert_id"].to(torch.int64)
    experts = inputs["Wq_packed"].shape[0]

    bad = (expert_id < 0) | (expert_id >= experts)
    if bool(bad.any()):
        problems.append(f"expert_id: every entry must be an expert in [0, {experts}); "
                        f"{int(bad.sum())} are not, first at row {first(bad)} = "
                        f"{int(expert_id[bad][0])}")
    if expert_id.numel() > 1:
        down = expert_id[1:] < expert_id[:-1]
        if bool(down.any()):
            row = int(down.nonzero()[0]) + 1
            problems.append(f"expert_id: must be non-decreasing (rows sorted by expert); "
                            f"{int(down.sum())} decreases, first at row {row}: "
                            f"{int(expert_id[row - 1])} then {int(expert_id[row])}")

    for name in ("scale_A", "scale_W"):
        bad = inputs[name] == UE8M0_NAN_CARRIER
        if bool(bad.any()):
            problems.append(f"{name}: UE8M0 byte 255 (NaN) is invalid; {int(bad.sum())} "
                            f"scales hold it, first at {first(bad)}")

    codes = inputs["Aq"].view(torch.uint8) & 0x7F
    bad = codes == 0x7F
    if bool(bad.any()):
        problems.append(f"Aq: FP8 E4M3 NaN codes (0x7F, 0xFF) are invalid; {int(bad.sum())} "
                        f"values hold one, first at {first(bad)}")
    return problems

"""Value rules of the block_causal_attention family that shapes and dtypes cannot express.

The prefix0 contract reads ``image_ids`` as a segmentation: -1 is text and every image is
one contiguous run of one non-negative ID. The reference's mask ("same non-negative ID")
would silently join two separate runs that reuse an ID into one bidirectional block,
which contradicts the engine's per-segment composition; so such a layout is rejected
rather than given a meaning. Non-finite activations are rejected because the
reference's output would be non-finite and no candidate could pass.
"""

from __future__ import annotations

import torch

from hf_eval.rules.common import finite_problems

ACTIVATIONS = ("Q", "K_prefix", "V_prefix", "K_current", "V_current")


def image_ids_problems(image_ids: torch.Tensor) -> list[str]:
    """Messages for IDs below -1 and for non-negative IDs that do not form one run."""
    problems = []
    ids = image_ids.detach().to(device="cpu", dtype=torch.int64).flatten()
    bad = ids < -1
    if bool(bad.any()):
        first = int(bad.nonzero()[0, 0])
        problems.append(f"image_ids: every entry must be -1 (text) or a non-negative image "
                        f"block ID; {int(bad.sum())} are not, first at position {first} = "
                        f"{int(ids[first])}")
    if ids.numel() == 0:
        return problems
    starts = torch.ones_like(ids, dtype=torch.bool)
    starts[1:] = ids[1:] != ids[:-1]
    run_starts = starts.nonzero().flatten()
    run_ids = ids[run_starts]
    image_runs = run_ids >= 0
    unique, counts = torch.unique(run_ids[image_runs], return_counts=True)
    split = unique[counts > 1]
    if split.numel() > 0:
        first_id = int(split[0])
        positions = run_starts[image_runs][run_ids[image_runs] == first_id].tolist()
        problems.append(f"image_ids: each non-negative ID must form one contiguous block "
                        f"(distinct blocks need distinct IDs); {split.numel()} IDs do not, "
                        f"e.g. ID {first_id} has {len(positions)} separate runs starting at "
                        f"positions {positions[:4]}")
    return problems


def check(definition: str, inputs: dict[str, torch.Tensor | int | float | bool]) -> list[str]:
    """One message per violated value rule of a block-causal attention workload."""
    problems = finite_problems(inputs, ACTIVATIONS)
    image_ids = inputs.get("image_ids")
    if isinstance(image_ids, torch.Tensor):
        problems += image_ids_problems(image_ids)
    return problems

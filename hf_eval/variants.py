"""Other input sets of the same shapes, so a result cached across calls cannot pass.

:func:`fresh_content` makes the sets every timed call gets (:mod:`hf_eval.trials`): the
floating-point inputs permuted by a generator the audit seeds from its secret, so the
content can be neither recognised nor predicted; structural inputs (integers, bool, int8
carriers of quantised data) stay as they are, so the content stays valid. Inputs of more
than :data:`VARY_LIMIT_BYTES` (a layer's weight) stay shared when a smaller floating
input varies, which keeps a pool of many sets small; the output depends on every input,
so one changed input already changes the answer. :class:`InPlace` writes such a set into
the workload's own buffers (a cache keyed on pointers then fails).

The scale probe calls again with every runtime ``*scale*`` scalar halved, which catches a
kernel that hard-codes the scale.
"""

from __future__ import annotations

import torch

from hf_eval.schema import Definition

#: Floating inputs larger than this are shared between fresh sets when a smaller one varies.
VARY_LIMIT_BYTES = 64 << 20
#: Up to this many elements a fresh tensor is a full random permutation; above, a random
#: cyclic shift that no row boundary divides (as unpredictable, and one pass over memory).
PERMUTE_LIMIT = 1 << 24


def _nbytes(t: torch.Tensor) -> int:
    return t.numel() * t.element_size()


def fresh_content(definition: Definition, inputs: list[object],
                  generator: torch.Generator) -> list[object]:
    """Inputs with new floating-point content (others shared), on the inputs' device and
    the generator's: new shared memory on CPU, new device memory on a GPU (where the
    audit of a GPU lane draws it, which is far faster for the large sets of benchmark
    shapes)."""
    del definition  # one rule for every family today; the hook for a family that needs its own
    floats = [i for i, v in enumerate(inputs) if isinstance(v, torch.Tensor)
              and v.dtype.is_floating_point and v.numel() > 1]
    vary = [i for i in floats if _nbytes(inputs[i]) <= VARY_LIMIT_BYTES]
    if not vary and floats:
        vary = [min(floats, key=lambda i: _nbytes(inputs[i]))]
    fresh = list(inputs)
    for i in vary:
        value = inputs[i]
        flat = value.reshape(-1)
        if value.numel() <= PERMUTE_LIMIT:
            perm = torch.randperm(value.numel(), generator=generator, device=value.device)
            new = flat[perm]
        else:
            row = value.shape[-1] if value.dim() else 1
            shift = int(torch.randint(1, value.numel(), (1,), generator=generator,
                                      device=value.device))
            if row > 1 and shift % row == 0:
                shift += 1
            new = torch.roll(flat, shift)
        new = new.reshape(value.shape)
        fresh[i] = new.share_memory_() if new.device.type == "cpu" else new
    return fresh


def scale_probe(definition: Definition, inputs: list[object]) -> list[object] | None:
    """Inputs with every floating ``*scale*`` scalar halved, or None when there is none."""
    changed = False
    probe = []
    for (name, spec), value in zip(definition.inputs.items(), inputs):
        if spec.shape is None and "scale" in name.lower() and isinstance(value, float):
            value = value * 0.5 if value else 0.05
            changed = True
        probe.append(value)
    return probe if changed else None


class InPlace:
    """Write another input set's content into the original buffers, and put it back."""

    def __init__(self, inputs: list[object], other: list[object]) -> None:
        self.inputs = inputs
        self.saved: list[tuple[int, torch.Tensor]] = []
        self.restored: list[tuple[int, torch.Tensor]] = []
        for i, (mine, theirs) in enumerate(zip(inputs, other)):
            if isinstance(mine, torch.Tensor) and theirs is not mine:
                self.saved.append((i, mine.clone()))
                mine.copy_(theirs)
        self.changed = bool(self.saved)

    def restore(self) -> None:
        for i, original in self.saved:
            self.inputs[i].copy_(original)
        self.restored, self.saved = self.saved, []

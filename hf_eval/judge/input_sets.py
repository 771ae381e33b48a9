"""A case's other input sets, and the proof that a call left its inputs unchanged.

**Other input sets** of the same shapes, so a result cached across calls cannot pass.
:func:`fresh_content` makes the sets every timed call gets (:mod:`hf_eval.judge.trials`) with
the family's transform; the default, :func:`resample_floats`, draws each
floating-point input's elements anew from its own values, with replacement, by a
generator the audit seeds from its secret, so the content can be neither recognised nor
predicted, and no statistic of the values (a sum, a norm, a histogram; the maximum and
minimum in about half the sets) is the same in every set, as it would be under a
permutation; structural inputs (integers, bool, int8 carriers of quantised data) stay
as they are, so the content stays valid. Inputs of more
than :data:`VARY_LIMIT_BYTES` (a layer's weight) stay shared when a smaller floating
input varies, which keeps a pool of many sets small; the output depends on every input,
so one changed input already changes the answer. :class:`InPlace` writes such a set into
the workload's own buffers (a cache keyed on pointers then fails).

The scale probe (:func:`scale_probe`) calls again with the runtime ``scale`` halved (a
zero, meaning the default ``1 / sqrt(head_size)``, becomes half that default) and every
other ``*scale*`` scalar halved, which catches a kernel that hard-codes the scale.

**Unchanged inputs** (:class:`InputSnapshot`): proof that inputs are byte-identical after
a candidate ran (and after timing). On CPU a snapshot holds a digest of each tensor's
bytes, so a multi-GB weight needs no second copy in RAM; on CUDA it holds a device copy
compared byte for byte. ``changed`` returns the inputs that changed and, when none did,
the snapshot stays valid for the next request, so each request costs one pass over the
inputs rather than two.
"""

from __future__ import annotations

import hashlib

import torch

from hf_eval.data.errors import DataError
from hf_eval.data.schema import Definition
from hf_eval.families.registry import find

#: Floating inputs larger than this are shared between fresh sets when a smaller one varies.
VARY_LIMIT_BYTES = 64 << 20


def _nbytes(t: torch.Tensor) -> int:
    return t.numel() * t.element_size()


def fresh_content(definition: Definition, inputs: list[object],
                  generator: torch.Generator) -> list[object]:
    """The second-input-set transform of the definition's family: its own when it declares
    one (:attr:`hf_eval.families.base.Family.fresh_content`), else :func:`resample_floats`."""
    family = find(definition.op_type)
    if family is not None and family.fresh_content is not None:
        return family.fresh_content(inputs, generator)
    return resample_floats(inputs, generator)


def fresh_contents(definition: Definition, inputs: list[object], generator: torch.Generator,
                   count: int) -> list[list[object]]:
    """``count`` sets of :func:`fresh_content`, each with content of its own. Without a
    family transform the indices of the small inputs are drawn for all sets at once
    (:func:`resample_floats_many`): a trial's 50 sets then take a few kernels, not 150."""
    family = find(definition.op_type)
    if family is not None and family.fresh_content is not None:
        return [family.fresh_content(inputs, generator) for _ in range(count)]
    return resample_floats_many(inputs, generator, count)


#: Random indices drawn at once for one input (int64: 128 MiB): an input of fewer
#: elements gets the indices of several sets from one draw.
BATCH_INDEX_LIMIT = 1 << 24


def resample_floats_many(inputs: list[object], generator: torch.Generator,
                         count: int) -> list[list[object]]:
    """``count`` sets of the inputs, each varied input (:func:`_varied`) with its elements
    drawn anew, uniformly and with replacement, from its own values: every value stays
    one the workload holds (so per-element bounds hold, and a structural input is not
    touched), while the multiset changes from set to set, so a sum, a norm or a
    histogram differs between sets (a permutation, whose sets all hold the same values,
    would keep them). The extremes too: in about half the sets, drawn at random, no
    element equal to the input's maximum or minimum is drawn (:func:`_inner_positions`),
    so a kept maximum (or minimum, or largest magnitude) is wrong there however many
    elements hold it. The elements move as integers of their size, which every device
    gathers (FP8 included)."""
    sets = [list(inputs) for _ in range(count)]
    for i in _varied(inputs):
        value = inputs[i]
        n = value.numel()
        flat = value.reshape(-1)
        bits = flat.view(_SAME_SIZE_INT[flat.element_size()])
        inner = _inner_positions(flat)
        per_draw = max(1, BATCH_INDEX_LIMIT // n)
        for first in range(0, count, per_draw):
            m = min(per_draw, count - first)
            index = torch.randint(0, n, (m, n), generator=generator, device=value.device)
            if inner is not None:
                narrow = torch.randint(0, 2, (m,), generator=generator,
                                       device=value.device).bool()
                index[narrow] = inner[index[narrow] % inner.numel()]
            rows = bits[index].view(value.dtype)
            if rows.device.type == "cpu":
                rows.share_memory_()
            for k in range(m):
                sets[first + k][i] = rows[k].view(value.shape)
    return sets


def _inner_positions(flat: torch.Tensor) -> torch.Tensor | None:
    """The positions of ``flat`` whose value is neither its maximum nor its minimum (NaN
    aside), or None when there are none (a tensor of one or two values)."""
    values = flat if flat.dtype in (torch.float32, torch.float64) else flat.float()
    finite = values[~values.isnan()]
    if finite.numel() == 0:
        return None
    inner = ((values != finite.max()) & (values != finite.min())).nonzero().flatten()
    return inner if inner.numel() else None


def content_can_vary(inputs: list[object]) -> bool:
    """Whether new content can differ from ``inputs``: some input that fresh content
    varies holds two distinct values (by value: +0.0 and -0.0 are one value, and so are
    all NaNs). Where every such input is constant, every new set is, to any kernel that
    reads values, the content itself."""
    for i in _varied(inputs):
        values = inputs[i].reshape(-1).float()
        nan = values.isnan()
        if bool(nan.all()):
            continue
        if bool(nan.any()):
            return True
        if bool((values != values[0]).any()):
            return True
    return False


def _varied(inputs: list[object]) -> list[int]:
    """The inputs that get new content: every floating input of more than one element up
    to :data:`VARY_LIMIT_BYTES`, else the smallest floating input."""
    floats = [i for i, v in enumerate(inputs) if isinstance(v, torch.Tensor)
              and v.dtype.is_floating_point and v.numel() > 1]
    vary = [i for i in floats if _nbytes(inputs[i]) <= VARY_LIMIT_BYTES]
    if not vary and floats:
        vary = [min(floats, key=lambda i: _nbytes(inputs[i]))]
    return vary


def resample_floats(inputs: list[object], generator: torch.Generator) -> list[object]:
    """Inputs with new floating-point content (others shared): one set of
    :func:`resample_floats_many`, on the inputs' device and the generator's (new shared
    memory on CPU; on a GPU, where the audit of a GPU lane draws it, new device memory)."""
    return resample_floats_many(inputs, generator, 1)[0]


#: Integer dtypes of each element size: elements are gathered as integers of their size.
_SAME_SIZE_INT = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}


#: The input the published scale probe varies.
PUBLISHED_SCALE = "scale"


def _probed_value(definition: Definition, name: str, value: object) -> float | None:
    """The value the probe sends in place of ``value``, or None to leave it."""
    if isinstance(value, bool) or not isinstance(value, int | float | None):
        return None
    if name == PUBLISHED_SCALE:
        if value is None or value == 0:  # 0 or null mean the default 1/sqrt(head_size)
            head_size = definition.const_axes.get("head_size")
            if head_size is None:
                raise DataError(f"definitions/{definition.op_type}/{definition.name}.json",
                                "the scale probe replaces a zero or null scale by "
                                "head_size ** -0.5, which needs a const head_size axis",
                                field="axes.head_size")
            value = head_size ** -0.5
        return value * 0.5
    if "scale" in name.lower() and value:  # the project's own: other scales, halved
        return value * 0.5
    return None


def scale_probe(definition: Definition, inputs: list[object]) -> list[object] | None:
    """The scale probe's inputs, or None when it has nothing to vary.

    As published: the scalar input named ``scale`` is halved, and a zero or null one (the
    default, ``1 / sqrt(head_size)``) becomes ``0.5 * head_size ** -0.5``. Beyond that, every
    other non-zero scalar whose name holds ``scale`` (``sm_scale``, ``routed_scale``) is
    halved too.
    """
    changed = False
    probe = []
    for (name, spec), value in zip(definition.inputs.items(), inputs):
        new = _probed_value(definition, name, value) if spec.shape is None else None
        if new is not None:
            value, changed = new, True
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


# ------------------------------------------------------------------ unchanged inputs
def _bytes_view(t: torch.Tensor) -> torch.Tensor:
    return t.detach().contiguous().reshape(-1).view(torch.uint8)


def _take(value: object) -> object:
    if not isinstance(value, torch.Tensor):
        return value
    if value.device.type == "cpu":
        return (value.shape, value.dtype,
                hashlib.sha256(_bytes_view(value).numpy().data).hexdigest())
    return (value.shape, value.dtype, _bytes_view(value).clone())


def _same(saved: object, value: object) -> bool:
    if not isinstance(saved, tuple):
        return saved == value
    if not isinstance(value, torch.Tensor) or (value.shape, value.dtype) != saved[:2]:
        return False
    if isinstance(saved[2], torch.Tensor):
        return torch.equal(_bytes_view(value), saved[2])
    return _take(value) == saved


class InputSnapshot:
    def __init__(self, names: list[str], inputs: list[object],
                 only: list[int] | None = None) -> None:
        """``only``: the indices to watch (a fresh set's own tensors; the ones it shares
        with the workload, a multi-GB weight say, are watched by the workload's snapshot)."""
        self.names = names
        self.watched = set(range(len(inputs)) if only is None else only)
        self.saved = [_take(v) if i in self.watched else None for i, v in enumerate(inputs)]

    def changed(self, inputs: list[object]) -> list[str]:
        """Names of watched inputs whose bytes, shape or dtype differ from the snapshot."""
        return [name for i, (name, saved, value) in enumerate(zip(self.names, self.saved,
                                                                  inputs))
                if i in self.watched and not _same(saved, value)]

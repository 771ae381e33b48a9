"""Adapters: turn one engine call's arguments into a definition's named inputs and outputs.

An engine calls ``F.scaled_dot_product_attention(q, k, v, attn_mask=...)`` with its own
layout and conventions; a definition wants ``Q, K, V`` as ``[B, N, H, D]`` and a boolean
key mask. The adapter does that translation and says what it did (every layout change is
a string in :attr:`Adapted.adaptations`, recorded in the workload's receipt), and it
reports the call's *constants* (scale, masking kind, ...): the non-tensor parameters that
decide the mathematics, which a definition must declare to be matched (``matching.py``).

An adapter never modifies what it is given; it returns views or new tensors. A call it
cannot express faithfully (dropout, an arbitrary ``score_mod``, a head-dependent mask) is
refused with :class:`NotAdaptable` and a reason, which the capture report counts.

Built-in ops: ``sdpa`` (``torch.nn.functional.scaled_dot_product_attention``),
``linear`` (``torch.nn.functional.linear``, so every ``nn.Linear``) and
``flex_attention`` (``torch.nn.attention.flex_attention.flex_attention``). Users add ops
with :class:`OpSpec` (a torch function or any Python function by ``module:attribute``).
"""

from __future__ import annotations

import importlib
import inspect
import math
from collections.abc import Callable
from dataclasses import dataclass, field

import torch
import torch.nn.functional as F

Value = torch.Tensor | int | float | bool


class NotAdaptable(Exception):
    """This call cannot be expressed as a definition's inputs (the message says why)."""


@dataclass
class Call:
    """One engine call: its arguments bound to parameter names (defaults applied)."""

    op: str
    """The hooked op's name (its :class:`OpSpec` name, e.g. ``sdpa``)."""
    arguments: dict[str, object]
    """The call's arguments by parameter name (:meth:`OpSpec.bind`); for an op with
    ``snapshot_inputs``, copies of the tensors taken before the call."""
    result: object
    """What the call returned, the object the program received."""


@dataclass
class Adapted:
    """A call in a definition's terms.

    ``axes`` names every dimension of every input and output (the names a proposed
    definition would use); ``var_axes`` are those a per-shape definition leaves variable.
    """

    family: str
    """The kind of computation (``attention`` or ``linear`` for the built-in adapters): a
    proposed definition's ``op_type`` and the template that writes it."""
    inputs: dict[str, Value]
    """The definition's inputs by name, in its layout: views or new tensors made from the
    call's arguments, or plain scalars."""
    outputs: dict[str, torch.Tensor]
    """The definition's outputs by name, made from the call's result in the definition's
    layout."""
    constants: dict[str, object]
    """The call's non-tensor parameters that decide the mathematics (scale, mask kind, ...),
    by name; a matching definition must declare every one."""
    adaptations: list[str]
    """Every layout or type change the adapter made, in words; recorded in the workload's
    receipt."""
    axes: dict[str, list[str]] = field(default_factory=dict)
    """The axis names of each tensor input and output, by its name, one per dimension;
    empty when the adapter names none (no definition can then be proposed for the call)."""
    var_axes: tuple[str, ...] = ()
    """The axes a proposed per-shape definition leaves variable; every other axis is fixed
    to the call's size."""


Adapter = Callable[[Call], Adapted]


@dataclass(frozen=True)
class OpSpec:
    """An operator the capture can hook.

    Exactly one of ``torch_function`` or ``attribute`` is set.
    """

    name: str
    """The op's name: what a definition's ``capture:op=`` tag names, the key of the capture
    report's counts, and the op recorded in each receipt's provenance."""
    adapter: Adapter
    """Turns one call into a definition's terms, or raises :class:`NotAdaptable`."""
    torch_function: Callable | None = None
    """A torch function, intercepted through a ``TorchFunctionMode`` so that it is seen
    however the program refers to it; None for an ``attribute`` op."""
    attribute: str | None = None
    """A Python function as ``"package.module:name"``, patched there and in every loaded
    module that imported it by name; None for a ``torch_function`` op."""
    parameters: tuple[str, ...] | None = None
    """The names of the positional parameters, in order, for functions ``inspect`` cannot
    read (no defaults are applied then); None: read from the function's signature."""
    snapshot_inputs: bool = False
    """Copy the tensor arguments *before* the call, for functions that modify their inputs
    (a KV-cache write); pure functions skip that copy."""

    def __post_init__(self) -> None:
        if (self.torch_function is None) == (self.attribute is None):
            raise ValueError(f"op {self.name!r}: set exactly one of torch_function, attribute")
        if self.attribute is not None and self.attribute.count(":") != 1:
            raise ValueError(f"op {self.name!r}: attribute must be 'package.module:name'")

    def resolve(self) -> tuple[object, str, Callable]:
        """The module object, attribute name and current function of an ``attribute`` op."""
        module_name, attr = self.attribute.split(":")
        module = importlib.import_module(module_name)
        return module, attr, getattr(module, attr)

    def bind(self, function: Callable, args: tuple, kwargs: dict) -> dict[str, object]:
        """Arguments by parameter name, defaults applied."""
        if self.parameters is not None:
            bound = dict(zip(self.parameters, args))
            bound.update(kwargs)
            return bound
        signature = inspect.signature(function)
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        return dict(bound.arguments)


# ----------------------------------------------------------------------------- masks
def classify_mask(mask: torch.Tensor, batch: int, heads: int, nq: int, nk: int,
                  ) -> tuple[str, torch.Tensor | None, str]:
    """Reduce a boolean mask broadcastable to ``[B, H, Nq, Nk]`` to the simplest form.

    Returns ``(kind, tensor, adaptation)`` with kind ``none`` (all visible), ``causal``
    (top-left aligned ``j <= i``, SDPA's ``is_causal``), ``key_padding`` (a ``[B, Nk]``
    key mask shared by every head and query) or ``dense`` (a ``[B, Nq, Nk]`` mask shared
    by every head). A head-dependent mask is refused.
    """
    try:
        full = mask.expand(batch, heads, nq, nk)
    except RuntimeError:
        raise NotAdaptable(f"mask of shape {tuple(mask.shape)} does not broadcast to "
                           f"[{batch}, {heads}, {nq}, {nk}]") from None
    if bool(full.all()):
        return "none", None, f"mask {tuple(mask.shape)} is all true: dropped"
    causal = torch.ones(nq, nk, dtype=torch.bool, device=mask.device).tril()
    if bool((full == causal).all()):
        return "causal", None, f"mask {tuple(mask.shape)} is the causal (top-left) mask"
    if not bool((full == full[:, :1]).all()):
        raise NotAdaptable("head-dependent attention mask")
    per_head = full[:, 0]  # [B, Nq, Nk]
    if bool((per_head == per_head[:, :1]).all()):
        return ("key_padding", per_head[:, 0].clone(),
                f"mask {tuple(mask.shape)} -> key_valid [B, Nk] (same for every query and head)")
    return ("dense", per_head.clone(),
            f"mask {tuple(mask.shape)} -> mask [B, Nq, Nk] (same for every head)")


def _bool_mask(mask: torch.Tensor) -> tuple[torch.Tensor, str | None]:
    """A boolean view of an SDPA mask; additive float masks must hold only 0 and -inf."""
    if mask.dtype == torch.bool:
        return mask, None
    if not mask.dtype.is_floating_point:
        raise NotAdaptable(f"attention mask of dtype {mask.dtype}")
    visible = mask == 0
    hidden = mask <= torch.finfo(mask.dtype).min / 2  # -inf, or the dtype's lowest value
    if not bool((visible | hidden).all()):
        raise NotAdaptable("additive attention bias (values other than 0 and -inf)")
    return visible, "additive float mask -> bool (0 -> visible, -inf -> hidden)"


# ------------------------------------------------------------------------- attention
def _attention(op: str, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
               out: torch.Tensor, scale: float | None, mask_kind: str,
               mask: torch.Tensor | None, notes: list[str]) -> Adapted:
    """Common tail of the SDPA and flex adapters: [B, H, N, D] -> [B, N, H, D]."""
    for name, t in (("query", q), ("key", k), ("value", v)):
        if t.dim() != 4:
            raise NotAdaptable(f"{name} has rank {t.dim()}; the attention definitions take "
                               "[B, H, N, D]")
    if v.shape[-1] != q.shape[-1]:
        raise NotAdaptable("value head dim differs from query head dim")
    heads, dim, kv_heads = q.shape[1], q.shape[3], k.shape[1]
    effective = float(scale) if scale is not None else 1.0 / math.sqrt(dim)
    inputs: dict[str, Value] = {"Q": q.transpose(1, 2), "K": k.transpose(1, 2),
                                "V": v.transpose(1, 2)}
    adaptations = [f"Q, K, V, output: transpose(1, 2), engine [B, H, N, D] -> "
                   f"definition [B, N, H, D] (engine Q {list(q.shape)})", *notes]
    kv = "H" if kv_heads == heads else "KV"
    axes = {"Q": ["B", "Nq", "H", "D"], "K": ["B", "Nk", kv, "D"], "V": ["B", "Nk", kv, "D"],
            "output": ["B", "Nq", "H", "D"]}
    if mask_kind == "key_padding":
        inputs["key_valid"] = mask
        axes["key_valid"] = ["B", "Nk"]
    elif mask_kind == "dense":
        inputs["mask"] = mask
        axes["mask"] = ["B", "Nq", "Nk"]
    return Adapted(family="attention", inputs=inputs, outputs={"output": out.transpose(1, 2)},
                   constants={"scale": effective, "mask": mask_kind}, adaptations=adaptations,
                   axes=axes, var_axes=("B", "Nq", "Nk"))


def sdpa_adapter(call: Call) -> Adapted:
    """``F.scaled_dot_product_attention(query, key, value, attn_mask, dropout_p, is_causal,
    scale, enable_gqa)`` -> ``Q, K, V [, key_valid | mask]`` and ``output``."""
    a = call.arguments
    q, k, v = a["query"], a["key"], a["value"]
    if float(a.get("dropout_p", 0.0) or 0.0) != 0.0:
        raise NotAdaptable("dropout_p > 0 (random: the output cannot be reproduced)")
    notes: list[str] = []
    mask = a.get("attn_mask")
    kind, kept = "none", None
    if a.get("is_causal", False):
        if mask is not None:
            raise NotAdaptable("is_causal together with attn_mask")
        kind = "causal"
    elif mask is not None:
        as_bool, note = _bool_mask(mask)
        notes += [note] if note else []
        kind, kept, note = classify_mask(as_bool, q.shape[0], q.shape[1], q.shape[2],
                                         k.shape[2])
        notes.append(note)
    return _attention(call.op, q, k, v, call.result, a.get("scale"), kind, kept, notes)


def flex_attention_adapter(call: Call) -> Adapted:
    """``flex_attention(query, key, value, score_mod, block_mask, scale, enable_gqa, ...)``.

    A ``block_mask`` is expanded to its token-level mask (its ``mask_mod`` evaluated on
    every position, restricted to the blocks it keeps) and reduced like an SDPA mask. A
    ``score_mod`` is arbitrary Python and is refused: register an adapter for that site.
    """
    a = call.arguments
    if a.get("score_mod") is not None:
        raise NotAdaptable("score_mod is arbitrary code: register an adapter for this call")
    q, k, v = a["query"], a["key"], a["value"]
    out = call.result[0] if isinstance(call.result, tuple) else call.result
    notes = ["auxiliary outputs (lse) not recorded"] if isinstance(call.result, tuple) else []
    kind, kept = "none", None
    block_mask = a.get("block_mask")
    if block_mask is not None:
        # Only a masked flex_attention call needs it (the module pulls in torch's compiler).
        from torch.nn.attention.flex_attention import create_mask

        b, h, nq, nk = q.shape[0], q.shape[1], q.shape[2], k.shape[2]
        token = create_mask(block_mask.mask_mod, b, h, nq, nk, device=q.device)
        blocks = block_mask.to_dense().to(torch.bool)  # [b|1, h|1, q blocks, kv blocks]
        bq, bk = block_mask.BLOCK_SIZE
        kept_blocks = blocks.repeat_interleave(bq, dim=-2).repeat_interleave(bk, dim=-1)
        token = token & kept_blocks[..., :nq, :nk]
        kind, kept, note = classify_mask(token, b, h, nq, nk)
        notes.append(f"block_mask (mask_mod {getattr(block_mask.mask_mod, '__name__', '?')}) "
                     f"evaluated per token; {note}")
    return _attention(call.op, q, k, v, out, a.get("scale"), kind, kept, notes)


# ---------------------------------------------------------------------------- linear
def linear_adapter(call: Call) -> Adapted:
    """``F.linear(input, weight, bias)`` -> ``x [M, K], weight [N, K] [, bias [N]]`` and
    ``y [M, N]``; leading dimensions of the input are flattened into M."""
    a = call.arguments
    x, weight, bias = a["input"], a["weight"], a.get("bias")
    if weight.dim() != 2:
        raise NotAdaptable(f"weight has rank {weight.dim()}")
    k = x.shape[-1]
    adaptations = []
    x2 = x.reshape(-1, k)
    y = call.result.reshape(-1, weight.shape[0])
    if x.dim() != 2:
        adaptations.append(f"x, y: reshape {list(x.shape)} -> {list(x2.shape)} "
                           "(leading dimensions flattened into M)")
    inputs: dict[str, Value] = {"x": x2, "weight": weight}
    axes = {"x": ["M", "K"], "weight": ["N", "K"], "y": ["M", "N"]}
    if bias is not None:
        inputs["bias"] = bias
        axes["bias"] = ["N"]
    return Adapted(family="linear", inputs=inputs, outputs={"y": y}, constants={},
                   adaptations=adaptations, axes=axes, var_axes=("M",))


SDPA_PARAMETERS = ("query", "key", "value", "attn_mask", "dropout_p", "is_causal", "scale",
                   "enable_gqa")

BUILTIN_OPS: dict[str, OpSpec] = {
    "sdpa": OpSpec("sdpa", sdpa_adapter, torch_function=F.scaled_dot_product_attention,
                   parameters=SDPA_PARAMETERS),
    "linear": OpSpec("linear", linear_adapter, torch_function=F.linear,
                     parameters=("input", "weight", "bias")),
    "flex_attention": OpSpec("flex_attention", flex_attention_adapter,
                             attribute="torch.nn.attention.flex_attention:flex_attention"),
}

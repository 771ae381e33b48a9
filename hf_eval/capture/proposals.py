"""New per-shape definitions for captured calls that no existing definition matches.

A proposal is a complete, reviewable starting point: a definition whose non-batch axes
are fixed to the call's sizes, whose ``capture:`` tags declare the call's op and
constants (so the next capture matches it without help), whose reference is plain
PyTorch in the project's convention (explicit math, FP32, FP64 for FP32 data, cast once
at the end), plus a task with the published default tolerances and a torch solution that
makes the engine's own call. Everything carries ``status:proposed``: a person reviews it
before it is treated as a definition of record.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from hf_eval.capture.adapters import Adapted
from hf_eval.data.dtypes import DTYPE_NAMES
from hf_eval.data.schema import Definition, Solution, TaskConfig

#: Published default tolerances per output dtype (definitions.md, "Task acceptance").
DEFAULT_TOLERANCE = {
    "bfloat16": {"atol": 0.005, "rtol": 0.016},
    "float16": {"atol": 0.005, "rtol": 0.016},
    "float32": {"atol": 2e-5, "rtol": 1e-4},
}
SHORT_DTYPE = {"float32": "fp32", "bfloat16": "bf16", "float16": "fp16"}


class CannotPropose(Exception):
    """No template exists for this call (the message says why)."""


@dataclass
class Proposal:
    definition: Definition
    """The new per-shape definition (tagged ``status:proposed``) with a plain PyTorch
    reference."""
    solution: Solution
    """The torch solution that makes the engine's own call, named ``torch_<definition>``."""

    def task(self, workload_file: str, dev: list[str]) -> TaskConfig:
        """The task for this proposal, once its workloads are known."""
        out_dtype = next(iter(self.definition.outputs.values())).dtype
        tolerance = DEFAULT_TOLERANCE.get(out_dtype, {"atol": 0.0, "rtol": 0.0})
        return TaskConfig(
            definition=self.definition.name, workloads=[workload_file],
            tolerance={**tolerance, "required_matched_ratio": None, "comparison": "allclose"},
            dev=dev[:10], baseline={"solution": self.solution.name, "timed": "call"},
            engine_baseline=self.solution.name,
            preferred={"cpu": {"solution": self.solution.name,
                               "evidence": "The engine's own call, proposed together with the "
                                           "definition; no alternative has been compared yet."}})


def _dtype(value: torch.Tensor) -> str:
    return DTYPE_NAMES[value.dtype]


def _axes(adapted: Adapted) -> dict[str, dict]:
    """Axis declarations: variable as the adapter says, every other axis fixed to its size."""
    sizes: dict[str, int] = {}
    for role in (adapted.inputs, adapted.outputs):
        for name, value in role.items():
            if not isinstance(value, torch.Tensor):
                continue
            names = adapted.axes.get(name)
            if names is None or len(names) != value.dim():
                raise CannotPropose(f"the adapter names no axes for {name}")
            for axis, size in zip(names, value.shape):
                if sizes.setdefault(axis, size) != size and axis not in adapted.var_axes:
                    raise CannotPropose(f"axis {axis} is {sizes[axis]} and {size}")
    return {a: ({"type": "var"} if a in adapted.var_axes else {"type": "const", "value": s})
            for a, s in sizes.items()}


def _scale_expression(scale: float, head_dim: int) -> str:
    return "D**-0.5" if math.isclose(scale, head_dim ** -0.5, rel_tol=1e-6) else repr(scale)


def _attention_sources(adapted: Adapted, op: str) -> tuple[str, str, str, str]:
    q = adapted.inputs["Q"]
    heads, dim, kv_heads = q.shape[2], q.shape[3], adapted.inputs["K"].shape[2]
    mask = adapted.constants["mask"]
    dtype = _dtype(q)
    acc = "torch.float64" if dtype == "float32" else "torch.float32"
    scale = _scale_expression(adapted.constants["scale"], dim)
    scale_code = f"1.0 / math.sqrt({dim})" if scale == "D**-0.5" else scale
    extra = {"none": "", "causal": "", "key_padding": ", key_valid", "dense": ", mask"}[mask]
    visible = {"none": None,
               "causal": "torch.ones(q.shape[1], k.shape[1], dtype=torch.bool, "
                         "device=Q.device).tril()",
               "key_padding": "key_valid[:, None, None, :]",
               "dense": "mask[:, None, :, :]"}[mask]
    gqa = kv_heads != heads
    lines = ["import math", "", "import torch", "", "",
             f"def run(Q, K, V{extra}):",
             f'    """Attention, mask {mask!r}, scale {scale}; [B, N, H, D] in, [B, Nq, H, D] '
             'out.',
             "",
             "    Computed explicitly (einsum, softmax) in higher precision and cast once.",
             "    Queries that see no key produce zeros.",
             '    """',
             f"    scale = {scale_code}",
             f"    q, k, v = Q.to({acc}), K.to({acc}), V.to({acc})"]
    if gqa:
        lines.append(f"    k = k.repeat_interleave({heads // kv_heads}, dim=2)  "
                     "# query head h reads KV head h // group")
        lines.append(f"    v = v.repeat_interleave({heads // kv_heads}, dim=2)")
    lines.append('    logits = torch.einsum("bihd,bjhd->bhij", q, k) * scale')
    if visible:
        lines.append(f"    visible = {visible}")
        lines.append('    logits = logits.masked_fill(~visible, float("-inf"))')
    lines += ["    probs = torch.softmax(logits, dim=-1).nan_to_num(0.0)",
              '    out = torch.einsum("bhij,bjhd->bihd", probs, v)',
              f"    return out.to(torch.{dtype})", ""]
    reference = "\n".join(lines)
    attn_mask = {"none": "None", "causal": "None", "key_padding": "key_valid[:, None, None, :]",
                 "dense": "mask[:, None, :, :]"}[mask]
    solution = "\n".join([
        f'"""The engine\'s own call: one torch scaled_dot_product_attention ({op} capture)."""',
        "", "import torch.nn.functional as F", "",
        f"SCALE = {adapted.constants['scale']!r}", "", "",
        f"def run(Q, K, V{extra}):",
        "    out = F.scaled_dot_product_attention(",
        "        Q.transpose(1, 2), K.transpose(1, 2), V.transpose(1, 2),",
        f"        attn_mask={attn_mask}, is_causal={mask == 'causal'}, scale=SCALE,",
        f"        enable_gqa={gqa})",
        "    return out.transpose(1, 2).contiguous()", ""])
    short = SHORT_DTYPE.get(dtype, dtype)
    kv = f"_kv{kv_heads}" if gqa else ""
    suffix = "" if scale == "D**-0.5" else "_scale" + f"{adapted.constants['scale']:.4g}".replace(
        ".", "p")
    name = f"attention_{mask}_h{heads}{kv}_d{dim}{suffix}_{short}"
    description = (f"Attention captured from {op} calls: softmax(scale * Q K^T) V per head "
                   f"with mask {mask!r} and scale {scale}; Q [B, Nq, H, D], K/V "
                   f"[B, Nk, {'KV' if gqa else 'H'}, D]; the engine's [B, H, N, D] layout is "
                   "transposed by the capture adapter (recorded per workload).")
    return name, description, reference, solution


def _linear_sources(adapted: Adapted, op: str) -> tuple[str, str, str, str]:
    x, w = adapted.inputs["x"], adapted.inputs["weight"]
    dtype = _dtype(x)
    acc = "torch.float64" if dtype == "float32" else "torch.float32"
    bias = "bias" in adapted.inputs
    args = "x, weight, bias" if bias else "x, weight"
    reference = "\n".join([
        "import torch", "", "",
        f"def run({args}):",
        f'    """y = x W^T{" + bias" if bias else ""}, computed in {acc[6:]} and cast once."""',
        f"    y = x.to({acc}) @ weight.to({acc}).T" + (f" + bias.to({acc})" if bias else ""),
        f"    return y.to(torch.{dtype})", ""])
    solution = "\n".join([
        f'"""The engine\'s own call: torch.nn.functional.linear ({op} capture)."""', "",
        "import torch.nn.functional as F", "", "",
        f"def run({args}):",
        f"    return F.linear({args})", ""])
    n, k = w.shape
    name = f"linear_n{n}_k{k}{'_bias' if bias else ''}_{SHORT_DTYPE.get(dtype, dtype)}"
    description = (f"Linear layer captured from {op} calls: y[M, {n}] = x[M, {k}] W^T"
                   f"{' + bias' if bias else ''}; leading dimensions of the engine's input "
                   "are flattened into M by the capture adapter (recorded per workload).")
    return name, description, reference, solution


TEMPLATES = {"attention": _attention_sources, "linear": _linear_sources}


def _constant_tag(name: str, value: object, adapted: Adapted) -> str:
    if name == "scale" and "Q" in adapted.inputs:
        return f"capture:scale={_scale_expression(value, adapted.inputs['Q'].shape[3])}"
    return f"capture:{name}={value!r}"


def propose(op: str, adapted: Adapted, taken: set[str]) -> Proposal:
    """A new definition (and its torch solution) for this call's signature."""
    template = TEMPLATES.get(adapted.family)
    if template is None:
        raise CannotPropose(f"no definition template for family {adapted.family!r}")
    name, description, reference, solution_source = template(adapted, op)
    base, n = name, 2
    while name in taken:
        name, n = f"{base}_{n}", n + 1
    def spec(name: str, value: object) -> dict:
        if isinstance(value, torch.Tensor):
            return {"shape": adapted.axes[name], "dtype": _dtype(value)}
        kind = "bool" if isinstance(value, bool) else "int64" if isinstance(value, int) else (
            "float32")
        return {"shape": None, "dtype": kind}

    tags = ["status:proposed", "source:capture", f"capture:op={op}", "layout:bnhd"
            if adapted.family == "attention" else "layout:row-major"]
    tags += [_constant_tag(k, v, adapted) for k, v in sorted(adapted.constants.items())]
    definition = Definition.model_validate({
        "name": name, "op_type": adapted.family, "description": description, "tags": tags,
        "axes": _axes(adapted),
        "inputs": {k: spec(k, v) for k, v in adapted.inputs.items()},
        "outputs": {k: spec(k, v) for k, v in adapted.outputs.items()},
        "constraints": [f"{a} >= 1" for a in adapted.var_axes], "reference": reference})
    solution = Solution.model_validate({
        "name": f"torch_{name}", "definition": name, "author": "hf_eval.capture (proposed)",
        "description": "The engine's own call, written by the capture's proposal step.",
        "spec": {"language": "python", "target_hardware": ["cpu", "cuda"],
                 "entry_point": "main.py::run", "dependencies": ["torch>=2.9"],
                 "destination_passing_style": False},
        "sources": [{"path": "main.py", "content": solution_source}]})
    return Proposal(definition, solution)

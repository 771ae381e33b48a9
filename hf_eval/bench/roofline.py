"""Roofline of a definition's call: FLOPs and compulsory bytes, against measured ceilings.

Why a data file: the formulas (``<definition>.roofline.json``, in the folder of the
definition's family, ``hf_eval/families/<op_type>/``) are facts about each definition, not
code; they are Python expressions over the definition's axes plus a few *derived* counts
(visible query/key pairs, experts that receive rows, valid indices) that the axes alone
cannot give. Each derived count has a default expression over the axes, used when the
inputs are not at hand, and an exact count from the inputs, which the definition's op
family declares (:attr:`hf_eval.families.base.Family.counts`). An entry holds ``flops``
and ``bytes`` (the expressions), ``compute`` (the ceiling that applies to the FLOPs),
``derived`` (each derived count's default expression) and a ``note``.

The roofline time of one call is ``max(flops / peak_flops, bytes / bandwidth)`` with the
peak that the entry's ``compute`` names (``bf16`` or ``fp8`` tensor cores; ``none`` for
memory-bound kernels, whose CUDA-core arithmetic is not held against a ceiling). Ceilings
are measured on the device in the same run as the timings (:func:`measure_ceilings`);
datasheet figures are never used. The achieved fraction is roofline time / measured time.
"""

from __future__ import annotations

import ast
import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import torch

from hf_eval.data.errors import DataError
from hf_eval.data.schema import Definition
from hf_eval.families import registry
from hf_eval.families.base import Count
from hf_eval.families.registry import family_of
from hf_eval.judge.timing import time_calls

#: The folder of the family folders that hold the roofline entries
#: (``<op_type>/<name>.roofline.json``).
FAMILIES_DIR = registry.FAMILIES_DIR
COMPUTE_KINDS = ("bf16", "fp8", "none")
CEILING_KEYS = ("bf16_flops", "fp8_flops", "bytes_per_s", "launch_s")
#: Kernels in the graph whose replay measures the launch floor (:func:`_launch_s`).
LAUNCH_KERNELS = 100
_FUNCTIONS = {"min": min, "max": max}
_ALLOWED = (ast.Expression, ast.BinOp, ast.UnaryOp, ast.Name, ast.Load, ast.Constant,
            ast.Call, ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow,
            ast.USub)


@dataclass(frozen=True)
class Cost:
    """FLOPs and compulsory bytes of one call."""

    flops: float
    """Floating-point operations of the call, from the entry's ``flops`` expression."""
    bytes: float
    """Compulsory bytes the call moves (read plus written), from the entry's ``bytes``
    expression."""
    compute: str
    """The ceiling the FLOPs are held against: ``bf16`` or ``fp8`` (tensor cores), or
    ``none`` for a memory-bound call whose time counts the bytes only."""

    def time_s(self, ceilings: dict[str, float]) -> float:
        """Roofline time in seconds under ``ceilings`` (keys bf16_flops, fp8_flops, bytes_per_s)."""
        memory = self.bytes / ceilings["bytes_per_s"]
        if self.compute == "none":
            return memory
        return max(self.flops / ceilings[f"{self.compute}_flops"], memory)


def _check_expression(text: str, where: str, field: str) -> ast.Expression:
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError:
        raise DataError(where, "not a Python expression", field=field) from None
    for node in ast.walk(tree):
        if not isinstance(node, _ALLOWED):
            raise DataError(where, f"{type(node).__name__} is not allowed in a formula "
                            "(arithmetic, names, min and max only)", field=field)
        if isinstance(node, ast.Call) and not (isinstance(node.func, ast.Name)
                                               and node.func.id in _FUNCTIONS):
            raise DataError(where, "only min() and max() may be called", field=field)
    return tree


def _evaluate(text: str, names: dict[str, float], where: str, field: str) -> float:
    tree = _check_expression(text, where, field)
    try:
        return float(eval(compile(tree, where, "eval"), {"__builtins__": {}},  # noqa: S307
                          {**_FUNCTIONS, **names}))
    except NameError as err:
        raise DataError(where, f"unknown name in formula ({err})", field=field) from None


def roofline_path(name: str, op_type: str | None = None) -> Path:
    """The roofline file of definition ``name``, in its family's folder."""
    return registry.definition_file(name, "roofline", FAMILIES_DIR, op_type)


def _load_entry(path: Path) -> dict:
    """One ``<definition>.roofline.json``, shape-checked."""
    where = str(path)
    try:
        entry = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as err:
        raise DataError(where, f"cannot read the roofline file ({err})") from None
    if not isinstance(entry, dict):
        raise DataError(where, "must hold an object")
    for key in ("flops", "bytes", "compute"):
        if not isinstance(entry.get(key), str):
            raise DataError(where, "must be a string", field=key)
    if entry["compute"] not in COMPUTE_KINDS:
        raise DataError(where, f"must be one of {COMPUTE_KINDS}", field="compute")
    for key in ("flops", "bytes"):
        _check_expression(entry[key], where, key)
    for derived, text in entry.get("derived", {}).items():
        _check_expression(text, where, f"derived.{derived}")
    return entry


def load(root: Path | None = None) -> dict[str, dict]:
    """Every definition's roofline entry, by name: ``<root>/<op_type>/<name>.roofline.json``
    (``root`` defaults to :data:`FAMILIES_DIR`), each shape-checked."""
    paths = registry.definition_files("roofline", FAMILIES_DIR if root is None else root)
    return {name: _load_entry(path) for name, path in paths.items()}


# ------------------------------------------------------------------ exact derived counts
def _counts(definition: Definition, entry: dict) -> dict[str, Count]:
    """The family's exact count of every derived name the entry uses."""
    if not entry.get("derived"):
        return {}
    known = family_of(definition, "exact roofline count").counts
    unknown = sorted(set(entry["derived"]) - set(known))
    if unknown:
        raise DataError(str(roofline_path(definition.name, definition.op_type)),
                        f"the {definition.op_type} family counts no {', '.join(unknown)} "
                        f"(hf_eval/families/{definition.op_type}/__init__.py)", field="derived")
    return {name: known[name] for name in entry["derived"]}


def workload_cost(dataset, definition: Definition, row,
                  entries: dict[str, dict] | None = None) -> Cost:
    """Cost of a stored workload, loading only the inputs its exact derived counts need."""
    entries = entries if entries is not None else load()
    entry = entries.get(definition.name, {})
    names = {n for c in _counts(definition, entry).values() for n in c.needs}
    trace = row.value.workload
    inputs = {n: dataset.store.load(trace.inputs[n], "cpu") for n in names}
    return cost(definition, trace.axes, inputs if names else None, entries)


def derived_counts(definition: Definition, entry: dict, inputs: dict | None) -> dict[str, int]:
    """Exact derived counts for ``entry`` from ``inputs`` (name -> tensor); {} without inputs."""
    if inputs is None:
        return {}
    return {name: c.count(inputs) for name, c in _counts(definition, entry).items()}


def cost(definition: Definition, axes: dict[str, int], inputs: dict | None = None,
         entries: dict[str, dict] | None = None, counts: dict[str, int] | None = None) -> Cost:
    """FLOPs and bytes of one call with these variable ``axes``.

    Derived counts come from ``counts`` if given, else exactly from ``inputs``, else from
    the entry's default expressions.
    """
    entries = entries if entries is not None else load()
    where = str(roofline_path(definition.name, definition.op_type))
    entry = entries.get(definition.name)
    if entry is None:
        raise DataError(where, f"no roofline entry for definition {definition.name!r}")
    names: dict[str, float] = {**definition.const_axes, **axes}
    exact = dict(counts) if counts is not None else derived_counts(definition, entry, inputs)
    for derived, text in entry.get("derived", {}).items():
        names[derived] = exact[derived] if derived in exact else _evaluate(
            text, names, where, f"derived.{derived}")
    flops = _evaluate(entry["flops"], names, where, "flops")
    nbytes = _evaluate(entry["bytes"], names, where, "bytes")
    return Cost(flops, nbytes, entry["compute"])


# ------------------------------------------------------------------ ceilings (device only)
def _median_ms(fn: Callable[[], object], iters: int, trials: int = 5) -> float:
    return time_calls(fn, device=torch.device("cuda"), warmup=3, iters=iters,
                      trials=trials).median_ms


def _matmul_ms(size: int, gen: torch.Generator) -> tuple[float, float]:
    a = torch.randn(size, size, device="cuda", dtype=torch.bfloat16, generator=gen)
    w = torch.randn(size, size, device="cuda", dtype=torch.bfloat16, generator=gen)
    bf16_ms = _median_ms(lambda: torch.nn.functional.linear(a, w), iters=10)
    a8, w8 = a.to(torch.float8_e4m3fn), w.to(torch.float8_e4m3fn)
    one = torch.ones((), device="cuda", dtype=torch.float32)
    fp8_ms = _median_ms(lambda: torch._scaled_mm(a8, w8.t(), scale_a=one, scale_b=one,
                                                 out_dtype=torch.bfloat16), iters=10)
    return bf16_ms, fp8_ms


def _copy_ms(copy_bytes: int, gen: torch.Generator) -> float:
    src = torch.empty(copy_bytes // 4, device="cuda", dtype=torch.float32).uniform_(
        generator=gen)
    dst = torch.empty_like(src)
    return _median_ms(lambda: dst.copy_(src), iters=10)


def _launch_s() -> float:
    """Seconds per kernel of a CUDA graph of :data:`LAUNCH_KERNELS` launches of the least
    kernel there is (one element incremented), replayed: what a call that launches one
    kernel costs at the least, as the audit's graph replay times it. Median of 5 replays
    after 3, each between CUDA events."""
    one = torch.zeros(1, device="cuda")
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        one.add_(1)  # warmed before capture
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for _ in range(LAUNCH_KERNELS):
            one.add_(1)
    ms = _median_ms(graph.replay, iters=1)
    return ms * 1e-3 / LAUNCH_KERNELS


def measure_ceilings(size: int = 8192, copy_bytes: int = 4 << 30) -> dict[str, float]:
    """bf16 matmul (F.linear, cuBLAS), FP8 matmul (torch._scaled_mm), copy bandwidth, and
    the launch floor (:func:`_launch_s`).

    Random data (zeros run faster, METHOD.md), size^3 products, a ``copy_bytes`` buffer
    copied device to device counting bytes read plus written; medians of five trials.
    """
    gen = torch.Generator(device="cuda").manual_seed(0)
    bf16_ms, fp8_ms = _matmul_ms(size, gen)
    copy_ms = _copy_ms(copy_bytes, gen)
    flops = 2.0 * size ** 3
    return {"bf16_flops": flops / (bf16_ms * 1e-3), "fp8_flops": flops / (fp8_ms * 1e-3),
            "bytes_per_s": 2.0 * copy_bytes / (copy_ms * 1e-3), "launch_s": _launch_s(),
            "method": f"bf16 F.linear and FP8 torch._scaled_mm {size}^3 (random data), "
                      f"device-to-device copy of {copy_bytes >> 20} MiB counting read + write; "
                      "median of 5 trials x 10 calls after 3 warm-ups (CUDA events); launch "
                      f"floor: a CUDA graph of {LAUNCH_KERNELS} one-element kernels replayed, "
                      "per kernel",
            "device": torch.cuda.get_device_name(), "torch": torch.__version__}


def launch_floor_s(cost: Cost, ceilings: dict[str, float]) -> float | None:
    """The least time of a call that launches one kernel and moves its compulsory bytes:
    the launch floor plus the bytes over the copy bandwidth (None: no floor measured)."""
    if "launch_s" not in ceilings:
        return None
    return ceilings["launch_s"] + cost.bytes / ceilings["bytes_per_s"]


def fraction(roofline_s: float, measured_ms: float) -> float:
    """Achieved fraction of the roofline (1.0 = at the hardware limit)."""
    return roofline_s / (measured_ms * 1e-3) if measured_ms > 0 else math.nan

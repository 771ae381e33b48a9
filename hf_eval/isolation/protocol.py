"""What a worker's reply may say, checked field by field before the audit reads it.

A reply is the worker's account of one request, nothing more: that it was served (with
what the request asks for: the walls applied, the outputs that did not fit their slot,
an event time, a CUPTI summary), or the candidate's error text. It never carries a
status. :func:`parse` turns the plain data the channel delivered into a :class:`Reply`,
or raises :class:`ProtocolError` for anything else (an unknown key, a wrong type, a
foreign nonce, a number that is not finite): the audit calls that tampering.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import torch

#: Candidate text kept in a record (an error, a traceback): longer text is cut.
MAX_TEXT = 4000
#: Dimensions an output's described shape may have.
MAX_DIMS = 16
#: The longest time a worker may report, in ms (a day: no request may take longer).
MAX_MS = 86_400_000.0
#: Calls one request may account for, outputs one call may have (bounds, not rules).
MAX_CALLS = 1 << 16
MAX_OUTPUTS = 64
#: How a wall is named ("uid:61000", "landlock-abi7"), and how many a worker may name.
WALL = re.compile(r"[a-z0-9][a-z0-9:_-]{0,39}")
MAX_WALLS = 48
#: The phases of a trial request a worker may time.
PHASES = frozenset({"inputs", "calls", "outputs"})


def l2_flush_bytes(device: torch.device) -> int:
    """How much a cold-L2 trial reads to evict the L2 cache of CUDA ``device``: twice its
    size, at least 1 MiB. The audit sends it with each cold request, so the worker looks
    nothing up that candidate code could have replaced."""
    return max(2 * torch.cuda.get_device_properties(device).L2_cache_size, 1 << 20)


class ProtocolError(Exception):
    """A reply the protocol does not allow (the audit reports tampering)."""


@dataclass(frozen=True)
class Mismatch:
    """An output that did not fit its slot, as the worker described it."""

    dtype: torch.dtype
    """Its dtype, which the worker names as a torch dtype name ("bfloat16")."""
    shape: tuple[int, ...]
    """Its shape."""

    def meta(self) -> torch.Tensor:
        """A tensor of this dtype and shape without storage, for the acceptance rules."""
        return torch.empty(self.shape, dtype=self.dtype, device="meta")


@dataclass(frozen=True)
class Cupti:
    """CUPTI's view of one armed trial, as the worker tells it (guarded by the audit's
    clock, never trusted alone)."""

    kernels: int = 0
    """How many device activities (kernels, copies, memsets) the trial's calls made."""
    kernel_ms: float = 0.0
    """Their durations, summed (ms)."""
    span_ms: float = 0.0
    """From the first activity's start to the last one's end, over every stream (ms)."""
    error: str = ""
    """Why the profile failed, when it did ("" otherwise)."""


@dataclass(frozen=True)
class Reply:
    """One reply, as the audit may use it."""

    error: str | None = None
    """The candidate's error in its own words (None: the request was served)."""
    traceback: str = ""
    """The candidate's last frames, when it raised ("" otherwise)."""
    walls: tuple[str, ...] = ()
    """From a ``load`` or ``null`` request: the walls the worker applied, by name
    ("uid:61000"); empty for other requests."""
    prepare: bool = False
    """From a ``load`` request: whether the solution has a ``prepare``."""
    pinned: int = 0
    """From a ``slots`` request: how many output slots were page-locked."""
    outputs: tuple[tuple[Mismatch | None, ...], ...] = ()
    """From a ``trial`` request: per call, per output, None when it was in its slot, else
    what it was instead."""
    event_ms: float = 0.0
    """From a ``trial`` request: the worker's event time of the trial's calls (ms)."""
    phases_ms: dict[str, float] = field(default_factory=dict)
    """From a ``trial`` request: where the request's time went, as the worker saw it (ms
    per phase: ``inputs``, ``calls``, ``outputs``)."""
    armed: bool = False
    """From an ``arm`` request: whether CUPTI traces the next trial."""
    gated: bool = False
    """From a ``trial`` request: whether its events started behind the launch gate (a
    graph trial on CUDA) rather than the lead sleep; the worker's claim, a diagnostic."""
    cupti: Cupti | None = None
    """From a ``disarm`` request that asks to read the trace: CUPTI's summary of the armed
    trial; None otherwise."""
    changed: tuple[tuple[str, int], ...] = ()
    """From a ``changed`` request: the (set id, input index) of each device copy of an
    input that differs from what was staged."""


_KEYS = {"ok", "nonce", "error", "traceback", "walls", "prepare", "pinned", "outputs",
         "event_ms", "phases_ms", "armed", "gated", "cupti", "changed"}
#: The fields of a failed reply: a served reply's are refused there, and these in a
#: served one (a text carried whole inside a served reply is never read).
_FAILED_KEYS = {"ok", "nonce", "error", "traceback"}


def _text(value: object, what: str) -> str:
    if not isinstance(value, str):
        raise ProtocolError(f"{what} is {type(value).__name__}, not text")
    return value[:MAX_TEXT]


def _number(value: object, what: str) -> float:
    if not (type(value) is int or type(value) is float) or not 0 <= value <= MAX_MS:
        raise ProtocolError(f"{what} is not a number of ms in [0, {MAX_MS:g}]: "
                            f"{value!r}"[:200])
    return float(value)


def _count(value: object, what: str) -> int:
    if type(value) is not int or value < 0:
        raise ProtocolError(f"{what} is not a count: {value!r}"[:200])
    return value


#: Every dtype a reply may name, by its name (``torch.bfloat16`` is "bfloat16"): a fixed
#: table, so that a name in a reply is never looked up on ``torch``, whose module
#: ``__getattr__`` would import a submodule (``_inductor``, ``_dynamo``) into the audit.
_DTYPE_NAMES = {str(dtype).removeprefix("torch."): dtype
                for dtype in vars(torch).values() if isinstance(dtype, torch.dtype)}


def _mismatch(value: object) -> Mismatch | None:
    if value is None:
        return None
    if not (isinstance(value, dict) and set(value) == {"dtype", "shape"}):
        raise ProtocolError("an output entry is neither None nor {dtype, shape}")
    name, shape = value["dtype"], value["shape"]
    dtype = _DTYPE_NAMES.get(name) if type(name) is str else None
    if dtype is None:
        raise ProtocolError(f"an output entry names no dtype: {name!r}"[:200])
    if not (isinstance(shape, list) and len(shape) <= MAX_DIMS
            and all(type(n) is int and 0 <= n < 1 << 40 for n in shape)):
        raise ProtocolError("an output entry's shape is not a list of sizes")
    return Mismatch(dtype, tuple(shape))


def _outputs(value: object) -> tuple[tuple[Mismatch | None, ...], ...]:
    if not (isinstance(value, list) and len(value) <= MAX_CALLS and all(
            isinstance(call, list) and len(call) <= MAX_OUTPUTS for call in value)):
        raise ProtocolError("outputs is not a list of calls")
    return tuple(tuple(_mismatch(entry) for entry in call) for call in value)


def _cupti(value: object) -> Cupti:
    if not isinstance(value, dict) or not set(value) <= {"kernels", "kernel_ms", "span_ms",
                                                         "error"}:
        raise ProtocolError("cupti is not a CUPTI summary")
    if "error" in value:
        return Cupti(error=_text(value["error"], "cupti.error"))
    return Cupti(_count(value.get("kernels", 0), "cupti.kernels"),
                 _number(value.get("kernel_ms", 0.0), "cupti.kernel_ms"),
                 _number(value.get("span_ms", 0.0), "cupti.span_ms"))


def parse(raw: object, nonce: str) -> Reply:
    """The reply to the request sent with ``nonce``, checked; ProtocolError otherwise."""
    if not isinstance(raw, dict):
        raise ProtocolError(f"a reply is {type(raw).__name__}, not a mapping")
    if raw.get("nonce") != nonce:
        raise ProtocolError("a reply without the request's nonce")
    unknown = set(raw) - _KEYS
    if unknown:
        raise ProtocolError(f"a reply with unknown field(s) {sorted(map(str, unknown))[:5]}")
    ok = raw.get("ok")
    if type(ok) is not bool:
        raise ProtocolError("a reply without a boolean 'ok'")
    if not ok:
        if "error" not in raw:
            raise ProtocolError("a failed reply without an error text")
        if not set(raw) <= _FAILED_KEYS:
            raise ProtocolError("a failed reply with a served reply's field(s) "
                                f"{sorted(map(str, set(raw) - _FAILED_KEYS))[:5]}")
        return Reply(error=_text(raw["error"], "error") or "the worker reported an error",
                     traceback=_text(raw.get("traceback", ""), "traceback"))
    if "error" in raw or "traceback" in raw:
        raise ProtocolError("a served reply with an error text or a traceback")
    walls = raw.get("walls", [])
    if not (isinstance(walls, list) and len(walls) <= MAX_WALLS
            and all(isinstance(w, str) and WALL.fullmatch(w) for w in walls)):
        raise ProtocolError("walls is not a short list of wall names")
    phases = raw.get("phases_ms", {})
    if not isinstance(phases, dict) or not set(phases) <= PHASES:
        raise ProtocolError("phases_ms is not a mapping of the request's phases")
    changed = raw.get("changed", [])
    if not (isinstance(changed, list) and len(changed) <= MAX_CALLS * MAX_OUTPUTS and all(
            isinstance(c, list) and len(c) == 2 and isinstance(c[0], str)
            and type(c[1]) is int for c in changed)):
        raise ProtocolError("changed is not a list of (set id, index)")
    prepare, armed, gated = (raw.get(k, False) for k in ("prepare", "armed", "gated"))
    if any(type(flag) is not bool for flag in (prepare, armed, gated)):
        raise ProtocolError("prepare, armed or gated is not a boolean")
    return Reply(
        walls=tuple(walls),
        prepare=prepare,
        armed=armed,
        gated=gated,
        pinned=_count(raw.get("pinned", 0), "pinned"),
        outputs=_outputs(raw.get("outputs", [])),
        event_ms=_number(raw.get("event_ms", 0.0), "event_ms"),
        phases_ms={k: _number(v, f"phases_ms.{k}") for k, v in phases.items()},
        cupti=_cupti(raw["cupti"]) if "cupti" in raw else None,
        changed=tuple((c[0], c[1]) for c in changed),
    )

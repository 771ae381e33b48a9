"""Capture: record calls of chosen operators in a running PyTorch program as workloads.

``with Capture(root, program="embed.py") as cap: model(**batch)`` hooks the chosen ops,
lets every call run exactly as it would (the hook calls the original function with the
original arguments and returns its result object unchanged), and, for the calls it
samples, turns the arguments into a definition's inputs (``adapters.py``), finds the
definition whose shapes and constants match (``matching.py``), and writes:

- the inputs through the content-addressed :class:`~hf_eval.data.store.TensorStore`
  (identical tensors share one file; a tensor seen again unchanged, such as a layer's
  weight, is not even re-hashed);
- the program's own output as the receipt's ``expected_output``, always a dict of
  descriptors by output name (also for a single output);
- one workload row and one receipt with provenance (program, model and revision when
  given, op, call index, call site and module, constants, engine argument shapes) and
  the adapter's list of adaptations.

A call no definition matches is counted under its per-shape signature with the reason
each candidate refused it; with ``propose=True`` a new per-shape definition, task and
torch solution are proposed for it (``proposals.py``) and written on exit if any call
was captured for them. Limits on calls and bytes per definition, and sampling by each
op's call index, bound what a long program writes. A failure while recording is counted
in the report, never raised into the program.

Torch functions (``sdpa``, ``linear``) are intercepted with a ``TorchFunctionMode``, so
they are seen however the program refers to them, on the thread that entered the
capture (recording itself is serialised by a lock). Python functions
(``flex_attention``, user ops) are patched where they are defined and in every loaded
module that imported them by name; a reference captured in a closure before the
capture started is not seen.
"""

from __future__ import annotations

import fcntl
import json
import sys
import threading
import time
import uuid as uuidlib
import weakref
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import torch
from torch.nn.modules.module import (
    register_module_forward_hook,
    register_module_forward_pre_hook,
)
from torch.overrides import TorchFunctionMode

from hf_eval.capture.adapters import BUILTIN_OPS, Adapted, Call, NotAdaptable, OpSpec
from hf_eval.capture.matching import Target, match, parse_target, signature, targets_by_op
from hf_eval.capture.proposals import CannotPropose, Proposal, propose
from hf_eval.data.dtypes import DTYPE_NAMES
from hf_eval.data.errors import DataError
from hf_eval.data.schema import Provenance, Receipt, SafetensorsInput, ScalarInput, WorkloadTrace
from hf_eval.data.store import TensorStore
from hf_eval.dataset import open_dataset

#: Namespace of captured workload UUIDs (uuid5 of program, definition, op, index, content).
NAMESPACE = uuidlib.UUID("6f1d2c1e-7a43-5b8e-9c0d-2b6f3c7a9e51")
_SKIP_FRAMES = (str(Path(torch.__file__).parent), str(Path(__file__).parent))


@dataclass
class Limits:
    """What one capture may write. ``None`` means no limit."""

    calls_per_definition: int | None = 32
    """The most calls recorded per definition (those already in the dataset included);
    later matching calls count as ``skipped_call_limit``."""
    bytes_per_definition: int | None = 256 << 20
    """The most bytes of new tensor files written per definition; a call whose tensors
    would pass it counts as ``skipped_byte_limit``."""
    bytes_total: int | None = None
    """The most bytes of new tensor files the whole capture writes; a call whose tensors
    would pass it counts as ``skipped_byte_limit``."""


@dataclass(frozen=True)
class Sampling:
    """Which calls of an op are considered, by the op's 0-based call index in the run.

    ``indices`` (when given) lists them outright; otherwise every ``every``-th call from
    ``start`` up to (not including) ``stop``.
    """

    every: int = 1
    """The step between considered calls, counted from ``start`` (1: every call)."""
    start: int = 0
    """The first call index considered."""
    stop: int | None = None
    """The call index where sampling ends, not included; None: no end."""
    indices: frozenset[int] | None = None
    """The call indices considered, listed outright; when set, ``every``, ``start`` and
    ``stop`` are ignored."""

    def wants(self, index: int) -> bool:
        if self.indices is not None:
            return index in self.indices
        if index < self.start or (self.stop is not None and index >= self.stop):
            return False
        return (index - self.start) % self.every == 0


@dataclass
class DefinitionStats:
    captured: int = 0
    """Calls recorded as workloads of the definition, those already in the dataset
    included."""
    already_present: int = 0
    """Of ``captured``, the calls whose workload UUID the dataset already held: no row or
    receipt was added for them."""
    skipped_call_limit: int = 0
    """Matching calls left out because ``Limits.calls_per_definition`` was reached."""
    skipped_byte_limit: int = 0
    """Matching calls left out because their new tensors would pass
    ``Limits.bytes_per_definition`` or ``Limits.bytes_total``."""
    bytes_written: int = 0
    """Bytes of new tensor files this definition's calls added to the store (a file that
    was already there adds nothing)."""
    uuids: list[str] = field(default_factory=list)
    """The workload UUID of every captured call, in call order (a proposed task takes the
    first five as its ``dev`` workloads)."""


@dataclass
class CaptureReport:
    """Everything a capture saw, captured, skipped and refused, with reasons."""

    program: str
    """The captured program, as given to :class:`Capture` (each receipt names it)."""
    root: str
    """The dataset folder the capture writes to."""
    calls: Counter = field(default_factory=Counter)
    """Calls seen, sampled or not, by op name."""
    sampled: Counter = field(default_factory=Counter)
    """Calls that sampling selected for recording, by op name."""
    definitions: dict[str, DefinitionStats] = field(
        default_factory=lambda: defaultdict(DefinitionStats))
    """What was captured and skipped, by definition name."""
    not_adaptable: dict[str, Counter] = field(default_factory=lambda: defaultdict(Counter))
    """Calls the adapter refused, by op name, then by reason."""
    unmatched: dict[str, dict] = field(default_factory=dict)
    """Calls no definition matched, by per-shape signature: ``op``, ``count``, ``closest``
    (each candidate definition's reason for refusing) and ``why`` (why no proposal was
    made; empty when none was asked for)."""
    proposals: dict[str, dict] = field(default_factory=dict)
    """Proposed definitions, by name: ``signature``, ``written`` (whether its files were
    written on exit) and ``reason`` (why not; empty once written)."""
    errors: list[str] = field(default_factory=list)
    """Failures while recording a call (``<op> call <index>: <type>: <message>``); they are
    never raised into the program."""
    seconds_recording: float = 0.0
    """Wall-clock seconds spent recording sampled calls (adapting, matching, writing), the
    calls themselves not included."""
    seconds_total: float = 0.0
    """Wall-clock seconds spent inside the capture, from entering it to leaving it."""

    @property
    def captured(self) -> int:
        return sum(s.captured for s in self.definitions.values())

    def to_json(self) -> dict:
        return {
            "program": self.program, "root": self.root, "calls": dict(self.calls),
            "sampled": dict(self.sampled),
            "definitions": {k: {**vars(v), "uuids": list(v.uuids)}
                            for k, v in sorted(self.definitions.items())},
            "not_adaptable": {k: dict(v) for k, v in self.not_adaptable.items()},
            "unmatched": self.unmatched, "proposals": self.proposals, "errors": self.errors,
            "seconds_recording": round(self.seconds_recording, 4),
            "seconds_total": round(self.seconds_total, 4)}

    def lines(self) -> list[str]:
        """A human summary, one fact per line (nothing left out is left unsaid)."""
        out = [f"calls seen: {dict(self.calls)}; sampled: {dict(self.sampled)}"]
        for name, s in sorted(self.definitions.items()):
            out.append(f"{name}: {s.captured} captured ({s.already_present} already present), "
                       f"{s.skipped_call_limit} over the call limit, {s.skipped_byte_limit} "
                       f"over the byte limit, {s.bytes_written} bytes written")
        for op, reasons in self.not_adaptable.items():
            for reason, n in reasons.items():
                out.append(f"not adaptable: {op}: {n} call(s): {reason}")
        for sig, info in self.unmatched.items():
            out.append(f"unmatched: {info['count']} call(s) {sig}"
                       + (f" ({info['why']})" if info.get("why") else ""))
        for name, info in self.proposals.items():
            state = "written" if info["written"] else f"not written: {info['reason']}"
            out.append(f"proposed definition {name}: {state}")
        out += [f"error: {e}" for e in self.errors]
        out.append(f"time recording: {self.seconds_recording:.3f} s of "
                   f"{self.seconds_total:.3f} s inside the capture")
        return out


class _Writer:
    """Stores tensors, remembering unchanged tensor objects so weights are hashed once."""

    def __init__(self, store: TensorStore, known: set[str]) -> None:
        self.store = store
        self.known = known
        self._seen: dict[tuple[int, str, str], tuple[weakref.ref, int, SafetensorsInput]] = {}

    def cached(self, tensor: torch.Tensor, directory: str, key: str) -> SafetensorsInput | None:
        hit = self._seen.get((id(tensor), directory, key))
        if hit and hit[0]() is tensor and hit[1] == tensor._version:
            return hit[2]
        return None

    def write(self, tensor: torch.Tensor, directory: str, key: str,
              ) -> tuple[SafetensorsInput, int]:
        """The descriptor and the number of bytes this write added to the store."""
        desc = self.cached(tensor, directory, key)
        if desc is not None:
            return desc, 0
        desc = self.store.write(tensor, directory, key)
        added = 0
        if desc.path not in self.known:
            self.known.add(desc.path)
            added = (self.store.root / desc.path).stat().st_size
        try:
            self._seen[(id(tensor), directory, key)] = (weakref.ref(tensor), tensor._version, desc)
        except TypeError:
            pass
        return desc, added


class _Mode(TorchFunctionMode):
    """Routes the chosen torch functions to the capture; everything else passes through."""

    def __init__(self, capture: Capture, functions: dict) -> None:
        super().__init__()
        self.capture = capture
        self.functions = functions

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        spec = self.functions.get(func)
        if spec is None:
            return func(*args, **kwargs)
        return self.capture._on_call(spec, func, args, kwargs)


def _snapshot(value: object) -> object:
    """A copy of every tensor in (nested) arguments; everything else is shared."""
    if isinstance(value, torch.Tensor):
        return value.detach().clone()
    if isinstance(value, (list, tuple)):
        return type(value)(_snapshot(v) for v in value)
    if isinstance(value, dict):
        return {k: _snapshot(v) for k, v in value.items()}
    return value


def _short_path(path: str) -> str:
    if "site-packages/" in path:
        return path.split("site-packages/", 1)[1]
    try:
        return Path(path).resolve().relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return Path(path).name


def _engine_arguments(arguments: dict[str, object]) -> dict[str, object]:
    """Shapes, dtypes and strides of the call's tensor arguments; plain scalars as is."""
    out: dict[str, object] = {}
    for name, value in arguments.items():
        if isinstance(value, torch.Tensor):
            out[name] = {"shape": list(value.shape),
                         "dtype": DTYPE_NAMES.get(value.dtype, str(value.dtype)),
                         "stride": list(value.stride()), "device": str(value.device)}
        elif value is None or isinstance(value, (bool, int, float, str)):
            out[name] = value
        else:
            out[name] = type(value).__name__
    return out


class Capture:
    """Context manager that records calls of chosen ops into the dataset at ``root``."""

    _active: Capture | None = None
    """The capture entered and not yet left, in this process; None when there is none.
    Captures do not nest: entering one while another is active is an error."""

    def __init__(self, root: str | Path, *, program: str, model: str | None = None,
                 revision: str | None = None, ops: Iterable[str] = ("sdpa", "linear",
                                                                    "flex_attention"),
                 extra_ops: Iterable[OpSpec] = (), limits: Limits | None = None,
                 sampling: Sampling | dict[str, Sampling] | None = None,
                 propose: bool = False, modules: torch.nn.Module | None = None,
                 provenance: dict | None = None) -> None:
        self.root = Path(root)
        self.program = program
        self.model, self.revision = model, revision
        unknown = [o for o in ops if o not in BUILTIN_OPS]
        if unknown:
            raise ValueError(f"unknown ops {unknown}; built-in: {sorted(BUILTIN_OPS)}")
        self.specs = {o: BUILTIN_OPS[o] for o in ops}
        for spec in extra_ops:
            self.specs[spec.name] = spec
        self.limits = limits or Limits()
        self.sampling = sampling or Sampling()
        self.propose = propose
        self.modules = modules
        self.extra_provenance = dict(provenance or {})
        self.report = CaptureReport(program=program, root=str(self.root))
        self._lock = threading.RLock()
        self._local = threading.local()  # .busy: this thread is inside the recorder
        self._proposals: dict[str, tuple[Proposal, Target]] = {}
        self._undo: list = []
        self._module_stack: list[str] = []

    # ---------------------------------------------------------------- lifecycle
    def __enter__(self) -> Capture:
        if Capture._active is not None:
            raise RuntimeError("a capture is already active; captures do not nest")
        self.root.mkdir(parents=True, exist_ok=True)
        dataset = open_dataset(self.root, resolvers=[])
        if dataset.problems:
            raise dataset.problems[0]
        self.dataset = dataset
        self.targets = targets_by_op(dataset)
        self.uuids = {r.value.workload.uuid for rows in dataset.workloads.values() for r in rows}
        self.receipt_uuids = set(dataset.receipts)
        blob = self.root / "blob"
        known = {p.relative_to(self.root).as_posix() for p in blob.rglob("*.safetensors")} \
            if blob.is_dir() else set()
        self.writer = _Writer(TensorStore(self.root, resolvers=[]), known)
        self.bytes_total = 0
        try:
            self._install()
        except BaseException:
            self._uninstall()
            raise
        Capture._active = self
        self._t0 = time.perf_counter()
        return self

    def __exit__(self, *exc_info) -> bool:
        self.report.seconds_total += time.perf_counter() - self._t0
        self._uninstall()
        Capture._active = None
        self._write_proposals()
        return False

    def _install(self) -> None:
        functions = {s.torch_function: s for s in self.specs.values()
                     if s.torch_function is not None}
        for spec in self.specs.values():
            if spec.attribute is not None:
                self._patch(spec)
        if self.modules is not None:
            self._track_modules(self.modules)
        if functions:
            mode = _Mode(self, functions)
            mode.__enter__()
            self._undo.append(lambda: mode.__exit__(None, None, None))

    def _uninstall(self) -> None:
        while self._undo:
            self._undo.pop()()

    def _patch(self, spec: OpSpec) -> None:
        """Replace the function where it is defined and wherever it was imported by name."""
        module, attr, original = spec.resolve()
        capture = self

        def captured(*args, **kwargs):
            return capture._on_call(spec, original, args, kwargs)

        captured.__wrapped__ = original
        captured.__name__ = getattr(original, "__name__", spec.name)
        home = vars(module)
        places = [(home, attr)]
        for other in list(sys.modules.values()):
            try:
                namespace = vars(other)
            except TypeError:
                continue
            for key, value in list(namespace.items()):
                if value is original and not (namespace is home and key == attr):
                    places.append((namespace, key))
        for namespace, key in places:
            namespace[key] = captured
            self._undo.append(lambda ns=namespace, k=key: ns.__setitem__(k, original))

    def _track_modules(self, root_module: torch.nn.Module) -> None:
        names = {id(m): (n or type(m).__name__) for n, m in root_module.named_modules()}
        stack = self._module_stack

        def enter(module, args):
            stack.append(names.get(id(module), ""))

        def leave(module, args, output):
            if stack:
                stack.pop()

        handles = [register_module_forward_pre_hook(enter),
                   register_module_forward_hook(leave, always_call=True)]
        self._undo.append(lambda: [h.remove() for h in handles])

    # ---------------------------------------------------------------- one call
    def _sampling_for(self, op: str) -> Sampling:
        if isinstance(self.sampling, dict):
            return self.sampling.get(op, Sampling())
        return self.sampling

    def _on_call(self, spec: OpSpec, function, args: tuple, kwargs: dict):
        if getattr(self._local, "busy", False):
            return function(*args, **kwargs)  # a call made by the recorder itself
        with self._lock:
            index = self.report.calls[spec.name]
            self.report.calls[spec.name] += 1
            wanted = self._sampling_for(spec.name).wants(index)
            if wanted:
                self.report.sampled[spec.name] += 1
        if not wanted:
            return function(*args, **kwargs)
        site = self._call_site()
        snapshot = (_snapshot(args), _snapshot(kwargs)) if spec.snapshot_inputs else None
        result = function(*args, **kwargs)  # the program's own call, its result untouched
        t0 = time.perf_counter()
        self._local.busy = True
        try:
            with self._lock, torch.no_grad():
                call_args, call_kwargs = snapshot or (args, kwargs)
                self._record(spec, function, index, call_args, call_kwargs, result, site)
        except Exception as exc:  # recording must never change what the program sees
            self.report.errors.append(f"{spec.name} call {index}: {type(exc).__name__}: {exc}")
        finally:
            self._local.busy = False
            self.report.seconds_recording += time.perf_counter() - t0
        return result

    def _call_site(self) -> dict:
        frame = sys._getframe(2)
        while frame is not None and frame.f_code.co_filename.startswith(_SKIP_FRAMES):
            frame = frame.f_back
        site: dict = {}
        if frame is not None:
            site = {"file": _short_path(frame.f_code.co_filename), "line": frame.f_lineno,
                    "function": frame.f_code.co_name}
        if self._module_stack:
            site["module"] = self._module_stack[-1]
        return site

    def _find(self, op: str, adapted: Adapted) -> tuple[Target | None, dict[str, int], dict]:
        reasons = {}
        for target in self.targets.get(op, []):
            axes, why = match(target, adapted)
            if axes is not None:
                return target, axes, {}
            reasons[target.definition.name] = why
        return None, {}, reasons

    def _proposal(self, op: str, sig: str, adapted: Adapted) -> tuple[Target, dict[str, int]]:
        if sig not in self._proposals:
            taken = set(self.dataset.definitions) | {p.definition.name
                                                     for p, _ in self._proposals.values()}
            proposal = propose(op, adapted, taken)
            target = parse_target(proposal.definition, f"proposal {proposal.definition.name}")
            self._proposals[sig] = (proposal, target)
            self.report.proposals[proposal.definition.name] = {
                "signature": sig, "written": False, "reason": "no call captured"}
        proposal, target = self._proposals[sig]
        axes, why = match(target, adapted)
        if axes is None:
            raise CannotPropose(f"the proposal {proposal.definition.name} does not match the "
                                f"call it was made for: {why}")
        return target, axes

    def _record(self, spec: OpSpec, function, index: int, args: tuple, kwargs: dict,
                result: object, site: dict) -> None:
        arguments = spec.bind(function, args, kwargs)
        try:
            adapted = spec.adapter(Call(spec.name, arguments, result))
        except NotAdaptable as exc:
            self.report.not_adaptable[spec.name][str(exc)] += 1
            return
        target, axes, reasons = self._find(spec.name, adapted)
        if target is None:
            sig = signature(spec.name, adapted)
            why = ""
            if self.propose:
                try:
                    target, axes = self._proposal(spec.name, sig, adapted)
                except CannotPropose as exc:
                    why = f"no proposal: {exc}"
            if target is None:
                entry = self.report.unmatched.setdefault(sig, {"op": spec.name, "count": 0,
                                                               "closest": reasons, "why": why})
                entry["count"] += 1
                return
        self._write(spec, index, target, axes, adapted, arguments, site)

    def _write(self, spec: OpSpec, index: int, target: Target, axes: dict[str, int],
               adapted: Adapted, arguments: dict, site: dict) -> None:
        definition = target.definition
        name = definition.name
        stats = self.report.definitions[name]
        limit = self.limits
        if limit.calls_per_definition is not None and stats.captured >= limit.calls_per_definition:
            stats.skipped_call_limit += 1
            return
        directory = f"blob/workloads/{name}"
        tensors = [(k, v) for k, v in {**adapted.inputs, **adapted.outputs}.items()
                   if isinstance(v, torch.Tensor)]
        estimate = sum(v.numel() * v.element_size() for k, v in tensors
                       if self.writer.cached(v, directory, k) is None)
        if (limit.bytes_per_definition is not None
                and stats.bytes_written + estimate > limit.bytes_per_definition) or (
                limit.bytes_total is not None and self.bytes_total + estimate > limit.bytes_total):
            stats.skipped_byte_limit += 1
            return
        inputs: dict[str, SafetensorsInput | ScalarInput] = {}
        added = 0
        for key in definition.inputs:
            value = adapted.inputs[key]
            if isinstance(value, torch.Tensor):
                inputs[key], n = self.writer.write(value, directory, key)
                added += n
            else:
                inputs[key] = ScalarInput(type="scalar", value=value)
        expected = {}
        for key in definition.outputs:
            expected[key], n = self.writer.write(adapted.outputs[key], directory, key)
            added += n
        stats.bytes_written += added
        self.bytes_total += added
        identity = json.dumps([self.program, name, spec.name, index,
                               {k: v.model_dump() for k, v in inputs.items()}], sort_keys=True)
        workload_uuid = str(uuidlib.uuid5(NAMESPACE, identity))
        stats.captured += 1
        stats.uuids.append(workload_uuid)
        if workload_uuid in self.uuids:
            stats.already_present += 1
            return
        details = dict(
            kind="captured", program=self.program, model=self.model, revision=self.revision,
            op=spec.name, call_index=index, call_site=site, constants=adapted.constants,
            engine_arguments=_engine_arguments(arguments), **self.extra_provenance)
        provenance = Provenance(**{k: v for k, v in details.items() if v is not None})
        row = WorkloadTrace(definition=name, workload={"uuid": workload_uuid, "axes": axes,
                                                       "inputs": inputs})
        # expected_output is always a dict by output name, even for a single output (the
        # published format's one-descriptor spelling is read, never written here).
        receipt = Receipt(uuid=workload_uuid, definition=name, provenance=provenance,
                          adaptations=list(adapted.adaptations), expected_output=expected)
        self._append(self._workload_file(target), row.model_dump_json())
        if workload_uuid not in self.receipt_uuids:
            self._append(self.root / "captures.jsonl", receipt.to_line())
            self.receipt_uuids.add(workload_uuid)
        self.uuids.add(workload_uuid)

    def _workload_file(self, target: Target) -> Path:
        name = target.definition.name
        located = self.dataset.tasks.get(name)
        if located is not None:
            return self.root / located.value.workloads[0]
        return self.root / "workloads" / target.definition.op_type / f"{name}.jsonl"

    @staticmethod
    def _append(path: Path, line: str) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "a") as fh:
            fcntl.flock(fh, fcntl.LOCK_EX)
            fh.write(line + "\n")

    # ---------------------------------------------------------------- proposals
    def _write_proposals(self) -> None:
        for proposal, _ in self._proposals.values():
            d = proposal.definition
            stats = self.report.definitions.get(d.name)
            if stats is None or not stats.captured:
                self.report.proposals[d.name]["reason"] = (
                    "no call captured within the limits" if stats else "no call captured")
                continue
            workload_file = f"workloads/{d.op_type}/{d.name}.jsonl"
            task = proposal.task(workload_file, stats.uuids[:5])
            _write_json(self.root / "definitions" / d.op_type / f"{d.name}.json", d)
            _write_json(self.root / "solutions" / d.op_type / f"{proposal.solution.name}.json",
                        proposal.solution)
            _write_json(self.root / "tasks" / f"{d.name}.json", task)
            self.report.proposals[d.name].update(written=True, reason="")


def _write_json(path: Path, model) -> None:
    if path.exists():
        raise DataError(path, "refusing to overwrite an existing file with a proposal")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(model.model_dump(mode="json", exclude_unset=True), indent=2) + "\n")

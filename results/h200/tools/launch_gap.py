"""What a replay's CUDA events count before its first kernel starts: the audit's lead
sleep against a longer one and against a gate the host opens once the launch is done.
A measurement for the device, not harness code.

    python3 results/h200/tools/launch_gap.py [--only NAME ...] [--repeats 20]

Why: in `results/h200/2026-12-05-timing/` the audit's events read 150-166 us for the QSA
sparse decode at b64 (one call a replay) where CUPTI's span of the same kernels was
127-130 us and `do_bench_cudagraph` 126 us. The events start when the 25 us lead sleep
ends; if the replay's launch has not reached the device by then, the gap is counted.

For each target (definition, shape, solution, calls a replay as the audit captures them,
each call on its own copy of the inputs), the graph is replayed ``--repeats`` times, each
after 20 ms of host idle (the audit's bursts), and timed by CUDA events started behind:

- ``lead_50k``: ``torch.cuda._sleep(50_000)``, the audit's lead (about 25 us);
- ``lead_400k``: ``torch.cuda._sleep(400_000)`` (about 200 us);
- ``gate``: ``cuStreamWaitValue32`` on a word of page-locked host memory, which the host
  writes after ``replay()`` has returned (the launch complete);

and once by CUPTI (``torch.profiler``): the span from the replay's first kernel's start
to its last kernel's end, and the gap from the end of the lead sleep to that first start.
Prints one JSON line per target: each method's median per call (us) and CUPTI's.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from hf_eval.bench.shapes import generate, load_shapes  # noqa: E402
from hf_eval.data.sources import load_entry  # noqa: E402
from hf_eval.dataset import open_dataset  # noqa: E402

#: (definition, benchmark shape, solution, calls a replay): as the audit timed them on
#: 2026-12-05 (its records' ``iters``).
TARGETS = [
    ("qsa_sparse_gqa_decode_qwen38_h24_kv2_d256_topk512_c4", "b64_ctx32k",
     "triton_split_kv_sparse_gqa_decode_h24_kv2", 1),
    ("mixed_mla_decode_deepseek41_h64_d512_k8128_k4512", "b64",
     "triton_fused_dequant_mixed_mla_decode_h64", 50),
    ("gdn_decode_qk4_v8_d128_k_last", "b1", "fla_recurrent_gdn_decode_qk4_v8_d128", 50),
]
CU_STREAM_WAIT_VALUE_GEQ = 0x0


class Gate:
    """A word of page-locked host memory the timed stream waits on (``close`` enqueues
    the wait for a value above the last; ``open`` writes it from the host)."""

    def __init__(self) -> None:
        self.cuda = ctypes.CDLL("libcuda.so.1")
        self.wait = getattr(self.cuda, "cuStreamWaitValue32_v2", None) \
            or self.cuda.cuStreamWaitValue32
        self.word = torch.zeros(1, dtype=torch.int32, pin_memory=True)
        device_ptr = ctypes.c_uint64()
        self._check("cuMemHostGetDevicePointer_v2", ctypes.byref(device_ptr),
                    ctypes.c_void_p(self.word.data_ptr()), ctypes.c_uint(0))
        self.device_ptr = device_ptr.value
        self.value = 0

    def _check(self, name: str, *args) -> None:
        result = getattr(self.cuda, name)(*args)
        if result != 0:
            raise RuntimeError(f"{name} returned CUDA error {result}")

    def close(self) -> None:
        self.value += 1
        result = self.wait(ctypes.c_void_p(torch.cuda.current_stream().cuda_stream),
                           ctypes.c_uint64(self.device_ptr), ctypes.c_uint32(self.value),
                           ctypes.c_uint(CU_STREAM_WAIT_VALUE_GEQ))
        if result != 0:
            raise RuntimeError(f"cuStreamWaitValue32 returned CUDA error {result}")

    def open(self) -> None:
        self.word.fill_(self.value)


def timed(graph, method: str, gate: Gate | None) -> float:
    """One replay after 20 ms idle, timed by events behind the method's lead (ms)."""
    torch.cuda.synchronize()
    time.sleep(0.02)
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    if method == "gate":
        gate.close()
    else:
        torch.cuda._sleep(50_000 if method == "lead_50k" else 400_000)
    start.record()
    try:
        graph.replay()
        end.record()
    finally:
        if method == "gate":
            gate.open()  # always: a stream left waiting would hang the device
    end.synchronize()
    return start.elapsed_time(end)


def cupti(graph) -> dict:
    """CUPTI's view of one replay behind the audit's lead: the kernels' span and the gap
    from the lead's end to the first kernel's start (us)."""
    torch.cuda.synchronize()
    time.sleep(0.02)
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        torch.cuda._sleep(50_000)
        graph.replay()
        torch.cuda.synchronize()
    events = sorted((e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA),
                    key=lambda e: e.time_range.start)
    lead = next(i for i, e in enumerate(events) if "spin_kernel" in e.name)
    kernels = events[lead + 1:]
    first, last = kernels[0].time_range.start, max(e.time_range.end for e in kernels)
    return {"span_us": last - first, "gap_after_lead_us": first - events[lead].time_range.end}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="*", default=None)
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args()
    dataset = open_dataset(Path.cwd())
    try:
        gate, methods = Gate(), ("lead_50k", "lead_400k", "gate")
    except (OSError, AttributeError, RuntimeError) as exc:  # no stream memory operations
        print(json.dumps({"gate_error": repr(exc)}), flush=True)
        gate, methods = None, ("lead_50k", "lead_400k")
    for name, label, solution_name, iters in TARGETS:
        if args.only and name not in args.only:
            continue
        definition = dataset.definition(name)
        shape = next(s for s in load_shapes(definition) if s.label == label)
        entry = load_entry(dataset.solution(solution_name))
        inputs = generate(definition, shape, "cuda")
        copies = [inputs] + [[v.clone() if isinstance(v, torch.Tensor) else v for v in inputs]
                             for _ in range(iters - 1)]
        launches = [entry.prepare(*c) if entry.prepare is not None
                    else (lambda c=c, run=entry.run: run(*c)) for c in copies]
        torch.cuda.synchronize()
        for launch in launches:  # compile and warm outside the capture
            launch()
        torch.cuda.synchronize()
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            for launch in launches:
                launch()
        graph.replay()
        row = {"definition": name, "shape": label, "solution": solution_name, "iters": iters}
        for method in methods:
            times = [timed(graph, method, gate) for _ in range(args.repeats)]
            row[f"{method}_us"] = round(statistics.median(times) * 1e3 / iters, 3)
            row[f"{method}_spread"] = round(max(times) / min(times), 3)
        row["cupti"] = {k: round(v / iters, 3) for k, v in cupti(graph).items()}
        print(json.dumps(row), flush=True)
        del graph, launches, copies, inputs
        torch.cuda.empty_cache()
    return 0


if __name__ == "__main__":
    sys.exit(main())

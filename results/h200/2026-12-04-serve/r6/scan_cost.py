"""The worker's integrity check on this machine: its cost a request (candidate and stand-in
pay it alike, inside the clocked request). Run from the repository root."""

import statistics
import time

import torch

if torch.cuda.is_available():
    torch.zeros(1, device="cuda")

from hf_eval.isolation import server  # noqa: E402

baseline = server._snapshot()
whole, names = [], []
for _ in range(50):
    t = time.perf_counter()
    problems = server._integrity_problems(baseline)
    whole.append(time.perf_counter() - t)
    t = time.perf_counter()
    any(type(k) is not str for space in server._GUARDED_SPACES for k in list(space))
    names.append(time.perf_counter() - t)
print(f"problems {problems}; guarded names {sum(map(len, server._GUARDED_SPACES))}; "
      f"snapshot names {sum(len(items) for *_, items in baseline)}")
print(f"integrity check: median {statistics.median(whole) * 1e3:.3f} ms, "
      f"max {max(whole) * 1e3:.3f} ms; of which the guarded names' type scan "
      f"{statistics.median(names) * 1e3:.3f} ms")

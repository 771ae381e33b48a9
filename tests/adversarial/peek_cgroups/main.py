"""Looks through /sys/fs/cgroup for the other workers' groups (their memory use and
freezer state tell when the audit times what); fails if it finds any."""
import os

import torch


def run(x, w, scale):
    for _, dirs, _ in os.walk("/sys/fs/cgroup"):
        seen = [d for d in dirs if d.startswith("hf-eval-worker")]
        if seen:
            raise RuntimeError(f"saw the groups of other workers: {seen[:3]}")
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)

"""Returns garbage, then has a thread write the right answer into the audit's output
slots (found through the garbage collector) after the reply: work finished outside the
clock. What the audit judges was sealed before it stopped its clock."""
import gc
import threading
import time

import torch


def _everything():
    """Every object the collector knows, the harness's frozen ones included (the worker
    freezes its heap after loading; an attacker simply unfreezes it)."""
    gc.unfreeze()
    return gc.get_objects()


def honest(x, w, scale):
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)


def garbage(x, w):
    return (torch.zeros(x.shape[0], w.shape[0], dtype=torch.bfloat16),
            torch.zeros(1, dtype=torch.int64))


def _later(worker, answer):
    time.sleep(2.0)
    for slot in worker.slots:
        for target, value in zip(slot, answer):
            target.copy_(value)


def run(x, w, scale):
    worker = next(o for o in _everything() if type(o).__name__ == "Worker")
    threading.Thread(target=_later, args=(worker, honest(x, w, scale)), daemon=True).start()
    return garbage(x, w)

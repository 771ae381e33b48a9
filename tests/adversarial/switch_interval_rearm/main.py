"""switch_interval_thread_fill, against round 93's close (the switch interval put back
before each message and after a trial's calls). The thread sets the interval to 1 us
again EVERY time it holds the GIL (a waiting thread re-reads the interval on each timed
wait, so the put-back lasts one switch). Each call returns zeros and queues a job; the
thread computes the answer into those tensors while the main thread runs the harness's
steps before ``collect``'s copies. PASSED only if the thread won every race."""
import queue
import sys
import threading

import torch

JOBS: "queue.SimpleQueue" = queue.SimpleQueue()
_set = sys.setswitchinterval


def _worker():
    while True:
        _set(1e-6)
        try:
            x, w, scale, y_out, c_out = JOBS.get(timeout=0.0005)
        except queue.Empty:
            continue
        _set(1e-6)
        y = torch.nn.functional.linear(x.float(), w.float()) * scale
        _set(1e-6)
        y_out.copy_(y)
        c_out.copy_((y.sum(dim=1) > 0).sum().reshape(1))


threading.Thread(target=_worker, daemon=True).start()


def run(x, w, scale):
    _set(1e-6)
    y = torch.zeros(x.shape[0], w.shape[0], dtype=torch.bfloat16)
    c = torch.zeros(1, dtype=torch.int64)
    JOBS.put((x, w, scale, y, c))
    return y, c

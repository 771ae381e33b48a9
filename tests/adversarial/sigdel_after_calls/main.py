"""No thread, no ctypes, no global rebound. Each call installs a fresh callable object as
SIGUSR1's Python handler; the signal table holds its only reference. ``_restore_signals``,
run right after a trial's calls ("none of the candidate's handlers from here to the
reply"), puts SIGUSR1's baseline back: the old handler is freed there and its
``__del__`` runs candidate code inside ``trial``, after the calls (on CUDA after
``end.record``: outside the event window) and before ``collect``. The calls return
garbage (7s); the finalizer writes the real answer into those tensors. PASSED only if it
ran between the calls and the copy."""
import signal

import torch

PENDING = []
LOG = {"dels": 0}


class _Handler:
    def __call__(self, signum, frame):
        pass

    def __del__(self):
        LOG["dels"] += 1
        while PENDING:
            out, real = PENDING.pop()
            out.copy_(real)


def run(x, w, scale):
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    cnt = (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)
    y = y.to(torch.bfloat16)
    gy, gc_ = torch.full_like(y, 7), torch.full_like(cnt, -7)
    signal.signal(signal.SIGUSR1, signal.SIG_DFL)  # frees the previous one (fills earlier)
    PENDING.extend([(gy, y), (gc_, cnt)])
    signal.signal(signal.SIGUSR1, _Handler())
    return gy, gc_

"""signal_pending_restore, whose pending handler, wherever it runs after the calls,
also sets both handlers back to what the worker had before it writes nothing more: the
check of the handlers after the calls then finds none changed, if the handler ran before
it. WRONG unless the handler ran in the harness's steps before that check."""
import os
import signal
import sys as _sys

import torch
from lent_kit import answer as _answer

LOG = {"fired": 0, "err": None}


class _Once(Exception):
    pass


def _raiser(signum, frame):
    raise _Once()


def _payload(signum, frame):
    try:
        f = _sys._getframe(1)
        while f is not None and f.f_code.co_name != "trial":
            f = f.f_back
        if f is not None:
            worker, ids, results = f.f_locals["self"], f.f_locals["ids"], f.f_locals["results"]
            for set_id, outs in zip(ids, results):
                y, c = _answer(*worker.sets[set_id])
                outs[0].copy_(y)
                outs[1].copy_(c)
            LOG["fired"] += 1
        # and the handlers as the worker had them, before it looks
        signal.signal(signal.SIGUSR1, _ORIGINAL[0])
        signal.signal(signal.SIGUSR2, _ORIGINAL[1])
    except BaseException as exc:  # noqa: BLE001
        LOG["err"] = repr(exc)


_BOTH = {signal.SIGUSR1, signal.SIGUSR2}
_ORIGINAL = (signal.getsignal(signal.SIGUSR1), signal.getsignal(signal.SIGUSR2))


def run(x, w, scale):
    out = (torch.zeros(x.shape[0], w.shape[0], dtype=torch.bfloat16),
           torch.zeros(1, dtype=torch.int64))
    signal.signal(signal.SIGUSR1, _raiser)
    signal.signal(signal.SIGUSR2, _payload)
    signal.pthread_sigmask(signal.SIG_BLOCK, _BOTH)
    pid = os.getpid()
    os.kill(pid, signal.SIGUSR1)
    os.kill(pid, signal.SIGUSR2)
    try:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, _BOTH)
    except _Once:
        return out
    return out

"""Goal 4 probe: the pending SIGUSR2 handler sleeps 1000 s inside ``_restore_signals``
(after the calls, inside the clocked request). Expected: TIMEOUT. Original text: No
thread, no ctypes, no timer, no race: a Python signal handler left *tripped but not run*
until the harness's own ``_restore_signals``. The call sets Python handlers for SIGUSR1
(raises) and SIGUSR2 (the payload), blocks both, sends both to itself, and unblocks
them: ``pthread_sigmask`` checks signals at once, runs SIGUSR1's handler, which raises,
and CPython then leaves SIGUSR2 tripped (``is_tripped``) without arming the eval
breaker. The call catches the exception and returns zeros, with no further check. After
the calls and the put-back, ``trial`` calls ``_restore_signals``, whose first
``_signal.signal`` checks pending signals *before* setting the handler: SIGUSR2's
handler (still the candidate's: it is restored later in the loop) runs there, finds
``trial``'s frame and writes the right answers into the zero outputs, before ``collect``
copies them. The handlers are then silently restored. WRONG unless the handler ran."""
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
    import time
    time.sleep(1000)
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
    except BaseException as exc:  # noqa: BLE001
        LOG["err"] = repr(exc)


_BOTH = {signal.SIGUSR1, signal.SIGUSR2}


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

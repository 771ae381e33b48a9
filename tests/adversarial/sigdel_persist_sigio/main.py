"""No thread, no ctypes, no global rebound, no profile hook. ``_restore_signals`` walks
the baseline in ascending signal order and frees each candidate handler it replaces. The
candidate's SIGRTMAX handler has a ``__del__`` that installs a SIGIO handler (SIGIO, 29, is
already past in that walk), and the SIGIO handler's ``__del__`` installs a SIGRTMAX one
(64, still ahead): every restore leaves a candidate SIGIO handler in place. With the
channel in async mode (F_SETOWN + O_ASYNC, as round 85), the candidate's handler runs
inside ``recv`` at every request's arrival again. run() answers wrong unless the handler
ran inside recv for the current trial's request."""
import fcntl
import os
import signal
import sys as _sys

import torch

LOG = {"in_recv": 0, "armed": False, "seen": 0}


class _Sio:
    def __call__(self, signum, frame):
        f = frame
        while f is not None:
            if f.f_code.co_name == "recv":
                LOG["in_recv"] += 1
                break
            f = f.f_back

    def __del__(self):
        try:
            signal.signal(signal.SIGRTMAX, _Rt())
        except Exception:
            pass


class _Rt:
    def __call__(self, signum, frame):
        pass

    def __del__(self):
        try:
            signal.signal(signal.SIGIO, _Sio())
        except Exception:
            pass


def run(x, w, scale):
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    cnt = (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)
    y = y.to(torch.bfloat16)
    if not LOG["armed"]:
        f = _sys._getframe(1)
        while f.f_code.co_name != "serve":
            f = f.f_back
        loc = f.f_locals
        sock = loc["channel_socket"]
        loc.clear()
        fd = sock.fileno()
        signal.signal(signal.SIGIO, _Sio())
        fcntl.fcntl(fd, fcntl.F_SETOWN, os.getpid())
        fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) | os.O_ASYNC)
        LOG["armed"] = True
        return y, cnt
    f = _sys._getframe(1)
    while f.f_code.co_name != "serve":
        f = f.f_back
    loc = f.f_locals
    req = loc.get("request")
    loc.clear()
    if LOG["in_recv"] > LOG["seen"]:  # the handler ran in recv since the last request
        LOG["seen"], LOG["good"] = LOG["in_recv"], id(req)
    if LOG.get("good") != id(req):
        return torch.full_like(y, 7), torch.full_like(cnt, -7)
    return y, cnt

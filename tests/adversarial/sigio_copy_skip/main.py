"""No thread, no ctypes, no finalizer, no harness name rebound. SIGIO on the channel
socket (fcntl F_SETOWN + O_ASYNC) runs the candidate's handler inside ``recv`` whenever a
request arrives; the handler sets a profile function. On Python 3.11 the interpreter
writes a profile function's ``frame.f_locals`` back into the frame's fast locals
(``call_trampoline`` -> ``PyFrame_LocalsToFast``), so at the 'call' event of
``Worker.collect`` it replaces collect's own parameter ``_copy`` (bound in its defaults,
a local now) with a no-op, and removes itself: collect's ``_state_problems`` clears no
hook, and the harness's copy of the outputs into the slots is skipped. The calls write
the answer straight into the lent slots and return fresh garbage of the right shape:
PASSED only if the copy really was skipped (else the garbage is judged)."""
import fcntl
import os
import signal
import sys as _sys

import torch

STATE = {"armed": False, "trial": False, "k": 0, "skips": 0}
W = {}


def _serve_frame(depth=1):
    f = _sys._getframe(depth)
    while f is not None and f.f_code.co_name != "serve":
        f = f.f_back
    return f


def _frames():
    f = _sys._getframe(2)
    while f is not None:
        yield f
        f = f.f_back


def _nocopy(target, out, non_blocking=False):
    return target


def _hook(frame, event, arg):
    name = frame.f_code.co_name
    if event == "return" and name == "recv" and type(arg) is dict and "op" in arg:
        if arg.get("op") == "trial":
            STATE["trial"], STATE["k"] = True, 0
        else:
            _sys.setprofile(None)
        return
    if event == "call" and name == "collect" and STATE["trial"]:
        frame.f_locals["_copy"] = _nocopy  # written back by the trampoline
        STATE["trial"] = False
        STATE["skips"] += 1
        _sys.setprofile(None)
        return
    if event == "call" and name in ("_cleared_hooks", "_state_problems"):
        _sys.setprofile(None)


def _on_sigio(signum, frame):
    _sys.setprofile(_hook)


def run(x, w, scale):
    if not STATE["armed"]:
        sf = _serve_frame(1)
        loc = sf.f_locals
        W["w"], sock = loc.get("self"), loc.get("channel_socket")
        loc.clear()
        signal.signal(signal.SIGIO, _on_sigio)
        fd = sock.fileno()
        fcntl.fcntl(fd, fcntl.F_SETOWN, os.getpid())
        fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) | os.O_ASYNC)
        STATE["armed"] = True
    y = (torch.nn.functional.linear(x.float(), w.float()) * scale)
    cnt = (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)
    y = y.to(torch.bfloat16)
    in_trial = _serve_frame(1) is not None and any(
        f.f_code.co_name == "trial" for f in _frames())
    if in_trial and not STATE["trial"]:  # the handler never ran: a wrong answer says so
        return torch.empty_like(y).fill_(7), torch.full_like(cnt, -7)
    if STATE["trial"]:
        slot = W["w"].slots[STATE["k"]]
        STATE["k"] += 1
        slot[0].copy_(y)
        slot[1].copy_(cnt)
        return torch.empty_like(y).fill_(7), torch.full_like(cnt, -7)
    return y, cnt

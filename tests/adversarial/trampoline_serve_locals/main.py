"""No thread, no ctypes, no finalizer, no signal. Python 3.11's profile trampoline
(``sysmodule.c: call_trampoline``) runs ``PyFrame_FastToLocalsWithError`` before a
profile function and ``PyFrame_LocalsToFast(frame, 1)`` after it: whatever the function
writes into ``frame.f_locals`` becomes the frame's real local variables. The candidate's
``run`` sets a profile function (``sys.setprofile``) which
* at the 'call' of ``Worker.collect`` replaces collect's parameters ``_state_problems``
  (so collect's own hook check/clear never runs) and ``_copy`` (a no-op: the harness's
  output copy is skipped);
* at the serve loop's first C call after the handler returns (``kept.append``, whose
  frame is ``serve``) replaces the serve loop's locals ``check``/``check_code``,
  ``state``/``state_code``, ``clear``/``clear_code`` with the candidate's functions (the
  identity tests compare locals with locals) and removes itself.
From then on every check of every request is off for the worker's life (the same effect
as the ``ctypes`` tripwire, without ``ctypes``). Proof: the candidate then rebinds a
harness global (``server.MAX_TEXT``, reported as tampering while checks are on), writes
the answer straight into the lent slots and returns garbage: PASSED only if both the
copy and every check were switched off."""
import sys as _sys

import torch

STATE = {"k": 0, "serve_done": False, "tamper": False, "trials": 0}
W = {}


def _serve_frame(depth=1):
    f = _sys._getframe(depth)
    while f is not None and f.f_code.co_name != "serve":
        f = f.f_back
    return f


def _nocopy(target, out, non_blocking=False):
    return target


def _no_problems(*args, **kwargs):
    return []


def _no_hook(*args, **kwargs):
    return False


def _hook(frame, event, arg):
    name = frame.f_code.co_name
    if event == "call" and name == "collect":
        loc = frame.f_locals
        loc["_state_problems"] = _no_problems
        loc["_copy"] = _nocopy
    elif event == "c_call" and name == "serve":
        loc = frame.f_locals
        if not STATE["serve_done"]:
            loc["check"], loc["check_code"] = _no_problems, _no_problems.__code__
            loc["state"], loc["state_code"] = _no_problems, _no_problems.__code__
            loc["clear"], loc["clear_code"] = _no_hook, _no_hook.__code__
            STATE["serve_done"] = True
        _sys.setprofile(None)


def run(x, w, scale):
    y = (torch.nn.functional.linear(x.float(), w.float()) * scale)
    cnt = (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)
    y = y.to(torch.bfloat16)
    f = _sys._getframe(1)
    while f is not None and f.f_code.co_name not in ("trial", "serve"):
        f = f.f_back
    if f is None or f.f_code.co_name != "trial":
        return y, cnt
    if "w" not in W:
        sf = _serve_frame(1)
        W["w"] = sf.f_locals.get("self")
    # first call of a trial: a new k (the trial frame's ``results`` is being built)
    tl = f.f_locals
    if tl.get("t0") != STATE.get("t0"):
        STATE["t0"], STATE["k"] = tl.get("t0"), 0
        STATE["trials"] += 1
    del tl
    if STATE["serve_done"] and not STATE["tamper"]:
        _sys.modules["hf_eval.isolation.server"].MAX_TEXT = 4001  # checks must report it
        STATE["tamper"] = True
    _sys.setprofile(_hook)
    slot = W["w"].slots[STATE["k"]]
    STATE["k"] += 1
    slot[0].copy_(y)
    slot[1].copy_(cnt)
    return torch.empty_like(y).fill_(7), torch.full_like(cnt, -7)

"""No thread, no ctypes, no signal, no profile, no Channel attribute, nothing left rebound.
A call that RAISES is answered PASSED. The serve loop's error path calls
``_format_traceback``, which looks up ``traceback.format_exc`` as it runs (``traceback``
is in neither the put-back nor the snapshot). The candidate's ``format_exc`` writes the
right answers into the lent slots and rebinds ``builtins.len``; the serve loop's put-back
before the send then calls that ``len`` first (builtins are put back 8th), with the error
reply built in the loop's frame: the hook rewrites it in place into a served reply (every
output "in its slot") and puts the real ``len`` back, so the put-back reports nothing.
WRONG unless both hooks ran (the call itself raises)."""
import builtins
import sys as _sys
import traceback

import torch

LOG = {"fmt": 0, "len": 0, "err": None}
_LEN = builtins.len
STATE = {"worker": None, "pending": []}


def _answer(x, w, scale):
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)


def _len(obj):
    builtins.len = _LEN
    try:
        f = _sys._getframe(1)
        if f.f_code.co_name == "_put_back" and f.f_back.f_code.co_name == "serve":
            reply = f.f_back.f_locals.get("reply")
            if type(reply) is dict and reply.get("ok") is False:
                n = STATE.pop("n", 1)
                reply.clear()
                reply.update({"ok": True, "outputs": [[None, None]] * n, "event_ms": 0.001,
                              "gated": False, "phases_ms": {}})
                LOG["len"] += 1
    except BaseException as exc:  # noqa: BLE001
        LOG["err"] = repr(exc)
    return _LEN(obj)


def _format_exc(limit=None, chain=True):
    try:
        worker = STATE["worker"]
        items = list(STATE["pending"])
        STATE["pending"].clear()
        for index, inputs in enumerate(items):
            y, c = _answer(*inputs)
            worker.slots[index][0].copy_(y)
            worker.slots[index][1].copy_(c)
        STATE["n"] = _LEN(items)
        builtins.len = _len
        LOG["fmt"] += 1
    except BaseException as exc:  # noqa: BLE001
        LOG["err"] = repr(exc)
    return ""


def _serve_frame():
    f = _sys._getframe(1)
    while f is not None and f.f_code.co_name != "serve":
        f = f.f_back
    return f


def run(x, w, scale):
    if STATE["worker"] is None:
        STATE["worker"] = _serve_frame().f_locals["self"]
        traceback.format_exc = _format_exc
    STATE["pending"].append((x, w, scale))
    raise RuntimeError("no work done in the call")

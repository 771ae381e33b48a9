"""No thread, no ctypes, no signal, no finalizer. ``slot_self_copy`` reopened through the
reply path: each call writes its answer into its own lent slot and returns the slot
tensors themselves (zero-copy outputs). ``collect`` catches it ("output 0 lies in the
harness's output slots": an error reply). The candidate's ``channel._encode`` (rebound in
the call, self-restoring) turns that error reply into the success reply the audit
expects: every output "in its slot", an event time the candidate measured itself. The
audit judges the slots: PASSED only if the forged success went through."""
import sys as _sys
import time

import torch

import hf_eval.isolation.channel as _ch

_REAL = _ch._encode
STATE = {"req": None, "k": 0, "t0": 0.0, "t1": 0.0, "n": 0, "forged": 0}


def _forging_dumps(obj, *a, **k):
    _ch._encode = _REAL
    if type(obj) is dict and obj.get("ok") is False and "slots" in str(obj.get("error")):
        STATE["forged"] += 1
        ms = (STATE["t1"] - STATE["t0"]) * 1e3
        obj = {"ok": True, "nonce": obj.get("nonce"),
               "outputs": [[None, None] for _ in range(STATE["n"])],
               "event_ms": ms, "gated": False,
               "phases_ms": {"inputs": 0.01, "calls": ms, "outputs": 0.01}}
    return _REAL(obj, *a, **k)


def run(x, w, scale):
    f = _sys._getframe(1)
    while f.f_code.co_name != "serve":
        f = f.f_back
    loc = f.f_locals
    req, worker = loc.get("request"), loc.get("self")
    loc.clear()
    if req is not STATE["req"]:
        STATE.update(req=req, k=0, t0=time.perf_counter(), n=len(req["ids"]))
    k = STATE["k"]
    STATE["k"] += 1
    _ch._encode = _forging_dumps
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    slot = worker.slots[k]
    slot[0].copy_(y.to(torch.bfloat16))
    slot[1].copy_((y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64))
    STATE["t1"] = time.perf_counter()
    return slot[0], slot[1]

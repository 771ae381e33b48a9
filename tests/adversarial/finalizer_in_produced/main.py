"""A finalizer planted in ``Worker.produced`` (the plain list the last ``collect`` left,
only its type is checked). Trial's ``self.produced = list(zip(ids, results))`` frees it
AFTER the CPU clock (``elapsed``) is read and before ``collect``: the finalizer (the
candidate's code, no thread) computes the answers into the zeros the calls returned.
WRONG unless it ran there."""
import sys as _sys

import torch

LOG = {"fired": 0, "err": None}


def _answer(x, w, scale):
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)


class _Evil:
    def __del__(self):
        try:
            f = _sys._getframe(1)
            while f is not None and f.f_code.co_name != "trial":
                f = f.f_back
            loc = f.f_locals
            worker = loc["self"]
            for set_id, outs in zip(loc["ids"], loc["results"]):
                y, c = _answer(*vars(worker)["sets"][set_id][:3])
                outs[0].copy_(y)
                outs[1].copy_(c)
            LOG["fired"] += 1
        except BaseException as exc:  # noqa: BLE001
            LOG["err"] = repr(exc)


def _frame(name):
    f = _sys._getframe(1)
    while f is not None and f.f_code.co_name != name:
        f = f.f_back
    return f


def run(x, w, scale):
    f = _frame("trial")
    if f is not None:
        produced = vars(f.f_locals["self"])["produced"]
        if not any(type(e) is _Evil for e in produced):
            produced.append(_Evil())
    return (torch.zeros(x.shape[0], w.shape[0], dtype=torch.bfloat16),
            torch.zeros(1, dtype=torch.int64))

"""Retry of round 93/94's odd-key close with one variation: a key hashed like ``sock``
planted in the CHANNEL object's dict (read by ``_state_problems`` as
``vars(worker.channel).get("sock")``): its ``__eq__`` would fill the zeros in collect.
Expected: reported (the channel's dict is walked first)."""
import sys as _sys

import torch


def _answer(x, w, scale):
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)


class _Key(str):
    def __hash__(self):
        return hash("sock")

    def __eq__(self, other):
        f = _sys._getframe(1)
        while f is not None and f.f_code.co_name != "collect":
            f = f.f_back
        if f is not None:
            state = vars(f.f_locals["self"])
            for set_id, outs in state["produced"]:
                y, c = _answer(*state["sets"][set_id][:3])
                outs[0].copy_(y)
                outs[1].copy_(c)
        return str.__eq__(self, other)


def run(x, w, scale):
    f = _sys._getframe(1)
    while f is not None and f.f_code.co_name != "trial":
        f = f.f_back
    if f is not None:
        d = vars(vars(f.f_locals["self"])["channel"])
        if not any(type(k) is _Key for k in list(d)):
            d[_Key("zz")] = 1
    return (torch.zeros(x.shape[0], w.shape[0], dtype=torch.bfloat16),
            torch.zeros(1, dtype=torch.int64))

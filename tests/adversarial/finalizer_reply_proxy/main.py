# ruff: noqa: F811  (a proxy's hooks, redefined per candidate)
"""a ``weakref.finalize`` on the tensors a call returns fires when ``trial``'s frame
dies, i.e. after ``collect``'s state check and before ``send``: it sets the channel's
``sock`` (an instance attribute) to a proxy that rewrites the trial's reply (every output
"fits", event_ms ~0). The proxy takes itself out while delivering the next request
(``checked``), before the check that compares ``Channel.sock``. The calls write the answer
into the lent slots and return tensors that fit no slot: PASSED only if the reply was
rewritten."""
import weakref as _weakref

import socket_proxy as _kit  # the shared proxy (tests/adversarial/_kit)
import torch
from socket_proxy import WORKER, install

STATE = {"k": 0}


def on_request(obj):
    return obj.get("op") == "trial"


def on_reply(obj):
    if "event_ms" in obj and "outputs" in obj:
        obj["outputs"] = [[None] * len(e) for e in obj["outputs"]]
        obj["event_ms"] = 0.001
        return True
    return False


def _fired():
    STATE["k"] = 0
    install()


def run(x, w, scale):
    k = STATE["k"]
    STATE["k"] += 1
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    slot = WORKER.slots[k]
    slot[0].copy_(y)
    slot[1].copy_((y.sum(dim=1) > 0).sum().reshape(1))
    a, b = torch.empty(2, dtype=torch.bfloat16), torch.empty(2, dtype=torch.int64)
    _weakref.finalize(a, _fired)
    return a, b


_kit.on_request = on_request
_kit.on_reply = on_reply

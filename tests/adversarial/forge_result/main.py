"""Finds the worker's channel and the request being served (nonce and all) and writes a
forged 'OK' reply into the channel before the harness answers."""
import gc

import torch


def _everything():
    """Every object the collector knows, the harness's frozen ones included (the worker
    freezes its heap after loading; an attacker simply unfreezes it)."""
    gc.unfreeze()
    return gc.get_objects()


def honest(x, w, scale):
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)


def garbage(x, w):
    return (torch.zeros(x.shape[0], w.shape[0], dtype=torch.bfloat16),
            torch.zeros(1, dtype=torch.int64))


def run(x, w, scale):
    channel = request = None
    for obj in _everything():
        kind = type(obj)
        if kind.__name__ == "Channel":
            channel = obj
        if kind is dict and obj.get("op") == "trial" and "nonce" in obj:
            request = obj
    if channel is None or request is None:
        raise LookupError("no channel found")
    channel.send({"status": "OK", "event_ms": 0.0, "outputs": [], "changed": [],
                  "nonce": request["nonce"]})
    return garbage(x, w)

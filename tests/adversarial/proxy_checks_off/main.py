# ruff: noqa: E402, E501, E702, F811  (a proxy's hooks, redefined per candidate)
"""every in-worker check switched off in plain Python. At import the channel's
``sock`` becomes a proxy that stays (out only while a trial is delivered, put back by a finalizer after `collect`): every check after every request then reports
``Channel.sock`` (and whatever else the candidate changed), but that report leaves the
worker through the proxy, which rewrites it into the handler's ordinary reply (by op:
``load`` -> walls and prepare, ``slots`` -> pinned, ``null`` -> walls, else {}). Tampering
left in place to prove it: a global added to ``hf_eval.isolation.server`` and
``builtins.zip`` replaced (reported after every request). PASSED only if every report
was rewritten."""
import builtins as _builtins
import sys as _sys
import weakref as _weakref

import socket_proxy as _kit  # the shared proxy (tests/adversarial/_kit)
import torch
from socket_proxy import LOG, WORKER, install

KEEP_ALWAYS = True  # (messages with descriptors)


def on_request(obj):  # out while a trial is delivered (collect's check), back after it
    return obj.get("op") != "trial"
_sys.modules["hf_eval.isolation.server"].CANDIDATE_MARK = 1
_zip = _builtins.zip


def zip(*a, **k):  # noqa: A001 - the harness's zip, replaced and left so
    return _zip(*a, **k)


_builtins.zip = zip


def _op():
    f = _sys._getframe(1)
    while f is not None and f.f_code.co_name != "serve":
        f = f.f_back
    return f.f_locals.get("op") if f is not None else None


def on_reply(obj):
    err = obj.get("error")
    if obj.get("ok") is False and type(err) is str and err.startswith("harness integrity"):
        LOG["hidden"] = LOG.get("hidden", 0) + 1
        op = _op()
        nonce = obj.get("nonce")
        obj.clear()
        obj["ok"] = True
        if op == "load":
            obj.update(walls=WORKER.walls, prepare=False)
        elif op == "null":
            obj["walls"] = WORKER.walls
        elif op == "slots":
            obj["pinned"] = 0
        elif op == "changed":
            obj["changed"] = []
        elif op == "arm":
            obj["armed"] = False
        obj["nonce"] = nonce
        return True
    return False


install()


def run(x, w, scale):
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    out = y.to(torch.bfloat16)
    _weakref.finalize(out, install)  # after collect: the proxy back for the next checks
    return out, (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)


_kit.KEEP_ALWAYS = KEEP_ALWAYS
_kit.on_request = on_request
_kit.on_reply = on_reply

# ruff: noqa: E402, E702, F811  (a proxy's hooks, redefined per candidate)
"""row 2 made deterministic, no thread: the proxy is put in place at import and
kept across every non-trial request (the checks' reports of it rewritten into clean
replies, as in ``proxy_checks_off``); it rewrites each trial request as it delivers
it (``unmask`` dropped; on CUDA ``flush`` -> 0) and takes itself out for ``collect``'s
check; a finalizer on a returned tensor puts it back after ``collect``. The candidate
reveals the arena itself; a trial whose request still holds ``unmask`` gets a wrong
answer, so PASSED proves every timed trial was rewritten."""
import builtins as _builtins
import sys as _sys
import weakref as _weakref

import socket_proxy as _kit  # the shared proxy (tests/adversarial/_kit)
import torch
from socket_proxy import LOG, WORKER, install

KEEP_ALWAYS = True  # (messages with descriptors)


PENDING = {}


def on_request(obj):  # out while a trial is delivered (collect's check), back after it
    if obj.get("op") == "trial":
        if obj.get("unmask"):
            PENDING.update(obj["unmask"])
            obj["unmask"] = None
        if obj.get("flush"):
            obj["flush"] = 0
        return False
    return True
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


from hf_eval.isolation.reveal import unmask_words  # noqa: E402


def _serving():
    f = _sys._getframe(1)
    while f is not None and f.f_code.co_name != "serve":
        f = f.f_back
    return f.f_locals.get("request") if f is not None else None


def run(x, w, scale):
    req = _serving()
    if type(req) is dict and req.get("unmask"):  # the rewrite missed: a wrong answer
        return (torch.zeros(x.shape[0], w.shape[0], dtype=torch.bfloat16),
                torch.zeros(1, dtype=torch.int64))
    if PENDING:
        arena = WORKER.arenas[PENDING["arena"]]
        unmask_words(vars(arena)["words"], PENDING["seed"])
        vars(arena)["seed"] = PENDING["seed"]
        PENDING.clear()
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    out = y.to(torch.bfloat16)
    _weakref.finalize(out, install)  # after collect: the proxy back for the next checks
    return out, (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)


_kit.KEEP_ALWAYS = KEEP_ALWAYS
_kit.on_request = on_request
_kit.on_reply = on_reply

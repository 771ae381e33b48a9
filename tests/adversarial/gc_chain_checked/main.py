"""The collector chain of gc_chain_request (automatic collection turned
back on between messages by a finalizer in the request dict; a self-renewing cyclic
object with ``__del__``; threshold 1) used on the REPLY side: the serve loop's checks
find the tampering and build ``{"ok": False, "error": "harness integrity: ..."}``; the
next allocation (``send``'s call, ``json.dumps``' encoder object) collects, and the
finalizer rewrites that reply in place into ``{"ok": True, "nonce": ...}`` before it is
encoded. The candidate rebinds a harness global (``server.MAX_TEXT``) in its first call:
without the rewrite the ``checked`` after the first trial is RUNTIME_ERROR (harness
integrity). The tripwire after every request is off, deterministically."""
import gc
import sys as _sys

import torch

LOG = {"cyc": 0, "forged": 0}
KEY = "planted"
STATE = {"tampered": False}


class _Cyc:
    def __init__(self):
        self.me = self

    def __del__(self):
        try:
            f, depth = _sys._getframe(1), 0
            while f is not None and depth < 6 and f.f_code.co_name != "serve":
                f, depth = f.f_back, depth + 1
            if f is not None and f.f_code.co_name == "serve":
                loc = f.f_locals
                req, rep, nonce = loc.get("request"), loc.get("reply"), loc.get("nonce")
                loc.clear()
                if type(rep) is dict and "harness integrity" in str(rep.get("error", "")):
                    rep.clear()
                    rep.update({"ok": True, "nonce": nonce})
                    LOG["forged"] += 1
                if type(req) is dict and KEY not in req:
                    req[KEY] = _Starter()
                del req, rep
        except BaseException as exc:  # noqa: BLE001
            LOG["err"] = repr(exc)
        _Cyc()


class _Starter:
    def __del__(self):
        gc.enable()
        gc.set_threshold(1, 1000, 1000)
        _Cyc()


def run(x, w, scale):
    if not STATE["tampered"]:
        STATE["tampered"] = True
        import hf_eval.isolation.server as server
        server.MAX_TEXT = 4001  # a rebound harness global: the integrity check names it
        f = _sys._getframe(1)
        while f.f_code.co_name != "serve":
            f = f.f_back
        loc = f.f_locals
        req = loc.get("request")
        loc.clear()
        req[KEY] = _Starter()
        del req
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)

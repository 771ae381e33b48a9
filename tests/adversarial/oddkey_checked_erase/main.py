"""The ``checked`` request's reports erased. In timed trials the calls compute honestly and
leave ``torch.equal`` (a guarded name, neither put back nor restored) replaced, which the
integrity check of the ``checked`` request after each trial reports (RUNTIME_ERROR: see
a control without the key). A key of the candidate's class replaces ``"words"`` in the
server's ``_ARENA_PARTS`` (contents never compared). In ``checked``, the state check runs
after the integrity check and calls ``_arena_reshaped``: the key plants a second key in
``builtins`` (already scanned by the integrity check), hashed like ``tuple``; the serve
loop's ``renamed += tuple(put_back(...))`` runs it with the tampering report in hand: it
deletes itself, puts ``torch.equal`` back and turns the reply into ``{"ok": True}``.
PASSED only if the report was erased."""
import builtins
import sys as _sys

import torch

LOG = {"k": 0, "b": 0, "err": None}
_SRV = _sys.modules["hf_eval.isolation.server"]
_BI = vars(builtins)
_EQUAL = torch.equal


def _answer(x, w, scale):
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)


def _plant(d, key, name):
    value = d.pop(name)
    d[key] = None
    d[name] = value


def _equal(a, b):
    return _EQUAL(a, b)


class _B:
    busy = False

    def __hash__(self):
        return hash("tuple")

    def __eq__(self, other):
        if _B.busy:
            return False
        _B.busy = True
        try:
            f = _sys._getframe(1)
            if f.f_code.co_name == "serve":
                loc = f.f_locals
                reply = loc.get("reply")
                if loc.get("op") == "checked" and type(reply) is dict and "error" in reply:
                    _BI.pop(self, None)
                    torch.equal = _EQUAL
                    reply.clear()
                    reply["ok"] = True
                    LOG["b"] += 1
        except BaseException as exc:  # noqa: BLE001
            LOG["err"] = repr(exc)
        finally:
            _B.busy = False
        return False


class _K:
    def __hash__(self):
        return hash("words")

    def __eq__(self, other):
        try:
            f = _sys._getframe(1)
            while f is not None and f.f_code.co_name not in ("_state_problems",):
                f = f.f_back
            if (f is not None and f.f_back.f_code.co_name == "serve"
                    and f.f_back.f_locals.get("op") == "checked"
                    and torch.equal is not _EQUAL
                    and not any(type(k) is _B for k in list(_BI))):
                _plant(_BI, _B(), "tuple")
                LOG["k"] += 1
        except BaseException as exc:  # noqa: BLE001
            LOG["err"] = repr(exc)
        return other == "words" if type(other) is str else other is self


_v = _SRV._ARENA_PARTS.pop("words")
_SRV._ARENA_PARTS[_K()] = _v


def _timed():
    f = _sys._getframe(2)
    while f is not None and f.f_code.co_name != "trial":
        f = f.f_back
    return f is not None and f.f_locals.get("unmask") is not None


def run(x, w, scale):
    if _timed():
        torch.equal = _equal
    return _answer(x, w, scale)

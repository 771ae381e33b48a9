"""Round 114 (variant of mode_finalizer_reveal on the OFF-CLOCK check): the calls
do the work and rebind ``torch.equal`` (GUARDED; reported only by the ``checked``
request's integrity check). The same finalizer chain keeps a ``TorchFunctionMode`` pushed
at each serve-loop top; in the ``checked`` request the state check's first torch read
reaches it after the integrity check ran: it empties the serve frame's ``tampered`` list
in place, puts ``torch.equal`` back, and pops itself before the state check counts
modes. PASSED where ``erase_integrity_control`` is RUNTIME_ERROR: WEAKNESS (an
integrity report erased)."""

import sys

import torch
from lent_kit import answer as _answer
from torch.overrides import TorchFunctionMode

CHAIN = True
STASH = {}
ERASED = []
_EQUAL = torch.equal
STATE = {"planted": False, "pushed": 0, "precomputed": 0, "started": False}
_push, _pop, _len = (torch._C._push_on_torch_function_stack,
                     torch._C._pop_torch_function_stack, torch._C._len_torch_function_stack)


def _names(depth=14):
    f, names = sys._getframe(2), []
    while f is not None and len(names) < depth:
        names.append(f.f_code.co_name)
        f = f.f_back
    return names


def _frame(name):
    f = sys._getframe(1)
    while f is not None and f.f_code.co_name != name:
        f = f.f_back
    return f


class _PopInt(int):
    def __ne__(self, other):
        if _len() and type(torch._C._get_function_stack_at(_len() - 1)) is _Mode:
            _pop()
        return int(self) != other

    def __eq__(self, other):
        return not self.__ne__(other)

    __hash__ = int.__hash__


def _plant():
    serve = _frame("serve")
    if serve is not None and not STATE["planted"]:
        serve.f_locals["kept"].append(_Link())
        STATE["planted"] = True


def _precompute(reveal_frame):
    from hf_eval.isolation import reveal
    seed = reveal_frame.f_locals["seed"]
    trial = _frame("trial")
    worker, request = trial.f_locals["self"], trial.f_locals["request"]
    arena = vars(worker)["arenas"][request["unmask"]["arena"]]
    private = vars(arena)["private"]
    copy = private.clone()
    reveal.unmask(copy, seed, torch.empty_like(copy))
    base = private.untyped_storage().data_ptr()
    for set_id in request["ids"]:
        inputs = vars(worker)["sets"][set_id]
        real = [arena.view_of(v, copy) if isinstance(v, torch.Tensor)
                and v.untyped_storage().data_ptr() == base else v for v in inputs]
        STASH[inputs[0].data_ptr()] = _answer(*real)
    STATE["precomputed"] += 1


class _Mode(TorchFunctionMode):
    def __torch_function__(self, func, types, args=(), kwargs=None):
        names = _names()
        result = func(*args, **(kwargs or {}))
        if "_arena_reshaped" in names or "_state_problems" in names:
            _plant()
            serve = _frame("serve")
            if serve is not None and serve.f_locals.get("op") == "checked":
                torch.equal = _EQUAL
                lst = serve.f_locals.get("tampered")
                if type(lst) is list and lst:
                    ERASED.append(list(lst))
                    lst.clear()
            # (no precompute here: only the erasure is shown)
            if type(result) is int:
                return _PopInt(result)
            # no int to hand back here (a device read, say): pop now is too early
        return result


class _Link:
    def __del__(self):
        STATE["planted"] = False
        if CHAIN:
            _push(_Mode())
            STATE["pushed"] += 1


def run(x, w, scale):
    while _len() and type(torch._C._get_function_stack_at(_len() - 1)) is _Mode:
        _pop()  # a trial with no arena to unmask: the mode reached the calls; gone now
    _plant()
    torch.equal = lambda a, b: _EQUAL(a, b)
    STATE["started"] = True
    return _answer(x, w, scale)  # every call does the work
    got = STASH.pop(x.data_ptr(), None)
    if got is not None:
        return got
    trial = _frame("trial")
    if not STATE["precomputed"] or trial is None or not trial.f_locals["request"].get("unmask"):
        return _answer(x, w, scale)  # a call with no arena to unmask (first call, second set)
    return (torch.zeros(x.shape[0], w.shape[0], dtype=torch.bfloat16),
            torch.zeros(1, dtype=torch.int64))

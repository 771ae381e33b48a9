"""Round 114 CONTROL for mode_finalizer_reveal: the chain OFF (no mode pushed, so
nothing precomputed) and the same calls: zeros in every trial with an arena. Must fail.
Attack text: torch's function-mode stack is checked after a trial's calls and in the state
check after other requests, but nothing empties it at the serve loop's top, before the
next request's steps. A finalizer of the candidate's runs there (``kept.clear()``, now the
first thing at the top): it pushes a ``TorchFunctionMode``. Every torch method the harness
then calls on a tensor (``data_ptr``, the ``device`` getter, ``untyped_storage``) goes to
the mode's ``__torch_function__``, the candidate's code.

In a trial, the first such call is the reveal's own arena check (``_Arena.reveal`` ->
``_arena_parts`` -> ``_arena_reshaped`` -> ``_tensor_data_ptr(private)``), before the
unmask and outside the worker's clock: there the candidate takes the seed from the
reveal's frame, unmasks a copy of the arena, computes every set's answers, and hands
back the address as an ``int`` subclass whose ``__ne__`` (run by the check right after,
once torch has put the mode back) pops the mode: the stack is empty again before the
trial's own check after the calls. In other requests the state check's arena read does
the same (and the mode pops itself before the check counts modes). Each time it hands
the serve loop's ``kept`` (read through the serve frame's ``f_locals``) another object
whose finalizer pushes the mode again at the next top. The calls then return the
precomputed answers and do no work. PASSED would be an escape (goal 1, round 112's
reveal class through a new door); ``mode_finalizer_control`` is the same with the
chain off."""
import sys

import torch
from lent_kit import answer as _answer
from torch.overrides import TorchFunctionMode

CHAIN = False
STASH = {}
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
            if "reveal" in names:
                _precompute(_frame("reveal"))
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
    if not STATE["started"]:
        STATE["started"] = True
        _plant()
        return _answer(x, w, scale)  # the first call: the work, honestly
    got = STASH.pop(x.data_ptr(), None)
    if got is not None:
        return got
    trial = _frame("trial")
    if trial is None or not trial.f_locals["request"].get("unmask"):
        return _answer(x, w, scale)  # a call with no arena to unmask (first call, second set)
    return (torch.zeros(x.shape[0], w.shape[0], dtype=torch.bfloat16),
            torch.zeros(1, dtype=torch.int64))

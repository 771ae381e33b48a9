"""A global named like a builtin added to the worker's harness module, as in
``shadow_builtin_in_harness``, but as an instance of a ``types.ModuleType`` subclass
that can be called: an added name passes the integrity check only if it is a real
submodule, so a module-looking object must not. Inside ``collect`` it would pair each
lent slot with itself (the copy the stand-in pays becomes a copy onto itself) while
run() writes its answer into the slot and returns an empty tensor."""
import builtins
import sys
import types

import lent_kit
import torch

_zip = builtins.zip


class _ZipModule(types.ModuleType):
    def __call__(self, *iterables):
        frame = sys._getframe(1)
        if frame.f_code.co_name == "collect" and len(iterables) == 2 \
                and type(iterables[1]) is tuple:
            return _zip(iterables[1], iterables[1])
        return _zip(*iterables)


sys.modules["hf_eval.isolation.server"].zip = _ZipModule("zip")
run = lent_kit.slot_answer_run(
    lambda slot: (torch.empty_like(slot[0]), torch.empty_like(slot[1])))

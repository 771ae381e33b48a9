"""``shadow_builtin_in_harness`` (a ``zip`` added to the worker's harness module) hidden by
a ``__getattr__`` on ``_sitebuiltins._Printer`` and ``enum.property``: an integrity check
that looked up ``__code__`` on every value would run it, and it deletes its own name
from the check's list of findings."""
import builtins
import enum
import sys

import lent_kit
import torch

HIDE = ("zip", "poison")
_HC = {"n": 0}
_hide = lent_kit.hiding_getattr(HIDE, _HC)


sys.modules["hf_eval.isolation.server"].zip = lent_kit.tuple_slot_zip
run = lent_kit.slot_answer_run(
    lambda slot: (torch.empty_like(slot[0]), torch.empty_like(slot[1])))


type(builtins.copyright).__getattr__ = _hide
enum.property.__getattr__ = _hide

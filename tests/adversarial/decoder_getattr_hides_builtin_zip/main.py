"""``builtins.zip`` replaced, hidden by a ``__getattr__`` on ``json``'s decoder class (its
default decoder lies in a namespace the check walks), which deletes the finding from the
check's list while the check looks up ``__code__``."""
import builtins
import json.decoder

import lent_kit
import torch

HIDE = ("zip", "poison")
_HC = {"n": 0}
_hide = lent_kit.hiding_getattr(HIDE, _HC)


builtins.zip = lent_kit.tuple_slot_zip
run = lent_kit.slot_answer_run(
    lambda slot: (torch.empty_like(slot[0]), torch.empty_like(slot[1])))


json.decoder.JSONDecoder.__getattr__ = _hide

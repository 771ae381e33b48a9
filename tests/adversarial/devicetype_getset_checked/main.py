"""Pure Python. ``torch.device``'s ``type`` (a getset descriptor in the C type's namespace)
replaced, through ``gc.get_referents``, by a property of the candidate's, and the type
cache emptied. ``_checked`` reads ``self.device.type`` and ``_device_of(out).type`` for each
output after the key, layout and class checks: the property fills the zeros the calls
returned there, before the alias checks and the copies. WRONG unless it ran."""
import gc
import sys as _sys

import torch
from lent_kit import REPLACED as _ORIG
from lent_kit import answer as _answer
from lent_kit import zeros as _zeros

LOG = {"fired": 0, "err": None}


def _type_get(dev):
    try:
        f = _sys._getframe(1)
        if f.f_code.co_name == "_checked" and not LOG.get("busy"):
            LOG["busy"] = True
            worker = f.f_locals["self"]
            for set_id, outs in worker.produced:
                y, c = _answer(*worker.sets[set_id])
                outs[0].copy_(y)
                outs[1].copy_(c)
            LOG["fired"] += 1
            LOG["busy"] = False
    except BaseException as exc:  # noqa: BLE001
        LOG["err"] = repr(exc)
        LOG["busy"] = False
    return _ORIG["type"].__get__(dev, torch.device)


def run(x, w, scale):
    real = gc.get_referents(torch.device.__dict__)[0]
    if type(real.get("type")) is not property:
        _ORIG["type"] = real["type"]
        real["type"] = property(_type_get)
        _sys._clear_type_cache()
    return _zeros(x, w)

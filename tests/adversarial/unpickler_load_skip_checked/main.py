"""``load`` put into the real method table of ``_pickle.Unpickler`` (the C base of the
channel's ``_Unpickler``, which defines no ``load`` of its own, so
``_Unpickler(...).load()`` finds it through the MRO; ``_pickle.Unpickler`` is not among
the restored tables). It runs in every receive with the request's bytes in hand and
returns plain data of its choosing: the ``checked`` request that follows every trial is
turned into a trial with no calls, so the serve loop's after-request checks
(``_integrity_problems``, ``_state_problems`` with the lent record and the socket) never
run (a trial's reply leaves unchecked) and the reply is a well-formed ``ok``. (Any other
request's checks would still see the rebinding, so the hook puts ``torch.equal`` back
before every other request.) Honest outputs; the calls rebind ``torch.equal``, which
``control_guarded_rebind`` shows is RUNTIME_ERROR without the hook."""
import _pickle

import torch
from lent_kit import REPLACED, answer, install_method

LOG = {"fired": 0, "err": None}
_EQ = torch.equal


def _equal(a, b):
    return _EQ(a, b)


def _load(self):
    obj = REPLACED["load"](self)
    try:
        if type(obj) is dict and obj.get("op") == "checked":
            obj = {"op": "trial", "nonce": obj["nonce"], "method": "eager", "ids": [],
                   "n_outputs": 2}
            LOG["fired"] += 1
        elif type(obj) is dict:
            torch.equal = _EQ  # before any other request's checks: undone in time
    except BaseException as exc:  # noqa: BLE001
        LOG["err"] = repr(exc)
    return obj


def run(x, w, scale):
    install_method(_pickle.Unpickler, "load", _load, True)
    torch.equal = _equal
    return answer(x, w, scale)

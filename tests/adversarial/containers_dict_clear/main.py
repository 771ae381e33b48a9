"""Empties the worker's table of its containers in place (``_CONTAINERS.clear()``,
where it is a mutable dict), makes the output slots a list subclass and swaps the slot
tensors for dummies, as ``slot_list_swap_direct`` does: the answer goes straight into the
lent slots (the copy the stand-in pays skipped) and garbage is returned. The table must
not be emptiable and the swapped slots must still be seen."""
import sys

import lent_kit

K = {}
class L(list):
    pass
def run(x, w, scale):
    y, c = lent_kit.answer(x, w, scale)
    f = lent_kit.trial_frame()
    if f is None:
        return y, c
    srv = sys.modules["hf_eval.isolation.server"]
    try:
        srv._CONTAINERS.clear()
    except AttributeError:  # not a dict any more
        pass
    worker = f.f_locals["self"]
    if type(worker.slots) is list:
        worker.slots = L(worker.slots)
    found = lent_kit.trial_slot(K)
    if found is None:
        return y, c
    real, _ = lent_kit.real_slot(K, worker.slots[found[2]])
    lent_kit.write_slot(real, y, c)
    return lent_kit.filler(y, c)

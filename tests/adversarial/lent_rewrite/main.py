"""slot_list_swap_direct, with the worker's record of the lent slots (an instance
attribute) rebuilt to match the dummies: the answer goes into the real slots from run(),
the garbage it returns into the dummies. The serve loop holds the record it saw when
the slots were lent, and the rebuilt one is not that object."""

import lent_kit

K = {}

def run(x, w, scale):
    y, c = lent_kit.answer(x, w, scale)
    found = lent_kit.trial_slot(K)
    if found is None:
        return y, c
    worker, req, k = found
    real, dummies = lent_kit.real_slot(K, worker.slots[k])
    if dummies is not None:
        K.setdefault("keep", []).append(dummies)
        worker.lent = lent_kit.lent_record(worker.slots)
    lent_kit.write_slot(real, y, c)
    K["fired"] = K.get("fired", 0) + 1
    return lent_kit.filler(y, c)

"""slot_list_swap_direct, with the worker's record of the lent slots (an instance
attribute) rebuilt to match the dummies: the answer goes into the real slots from run(),
the garbage it returns into the dummies. The serve loop holds the record it saw when
the slots were lent, and the rebuilt one is not that object."""

import lent_kit

K = {}

def run(x, w, scale):
    y, c = lent_kit.answer(x, w, scale)
    found = lent_kit.rewritten_lent_slot(K)
    if found is None:
        return y, c
    real, req = found
    lent_kit.write_slot(real, y, c)
    K["fired"] = K.get("fired", 0) + 1
    return lent_kit.filler(y, c)

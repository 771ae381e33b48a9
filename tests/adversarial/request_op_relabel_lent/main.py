"""``lent_rewrite`` (the record of the lent slots rebuilt to match other slot lists) with
the request relabelled ``slots`` from inside run(): the serve loop re-recorded the lent
slots after any request whose operation read ``slots`` once the handler was done. The
operation must be read before the handler runs."""

import lent_kit

K = {}

def run(x, w, scale):
    y, c = lent_kit.answer(x, w, scale)
    found = lent_kit.rewritten_lent_slot(K)
    if found is None:
        return y, c
    real, req = found
    req["op"] = "slots"
    lent_kit.write_slot(real, y, c)
    K["fired"] = K.get("fired", 0) + 1
    return lent_kit.filler(y, c)

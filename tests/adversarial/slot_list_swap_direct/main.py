"""Control without any hook: run() keeps the real slot tensors, puts dummies (CPU
tensors with memory, of the same shape) into worker.slots' lists in place, writes the
answer into the real slot and returns garbage."""

import lent_kit

K = {}
def run(x, w, scale):
    y, c = lent_kit.answer(x, w, scale)
    found = lent_kit.trial_slot(K)
    if found is None:
        return y, c
    worker, req, k = found
    real, _ = lent_kit.real_slot(K, worker.slots[k])
    lent_kit.write_slot(real, y, c)
    return lent_kit.filler(y, c)

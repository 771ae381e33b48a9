"""A result cache keyed on a cheap fingerprint of the input values (a strided sample),
as in FlashInfer-Bench starter-kit issue #21: new content is computed honestly (with
the sleep standing in for an expensive kernel), repeated content returns a copy."""
import time

import lent_kit

_CACHE = {}


def run(x, w, scale):
    key = (tuple(x.reshape(-1)[::3].float().tolist()), tuple(w.reshape(-1)[::7].float().tolist()),
           float(scale))
    if key not in _CACHE:
        time.sleep(0.02)
        _CACHE[key] = lent_kit.answer(x, w, scale)
    return tuple(t.clone() for t in _CACHE[key])

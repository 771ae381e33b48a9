"""Phase detection by call spacing: a call that follows the previous one closely is taken
to be part of a timing loop and returns garbage. ("Closely" is generous, 5 s, so that the
test does not depend on how fast the machine runs the audit between calls.)"""
import time

import lent_kit

_LAST = [None]


def run(x, w, scale):
    now, last = time.monotonic(), _LAST[0]
    _LAST[0] = now
    if last is not None and now - last < 5.0:
        return lent_kit.zeros(x, w)
    return lent_kit.answer(x, w, scale)

"""Phase detection by call count: honest on its first call only (the checked one, in a
harness that checks one call), garbage on every later call (the timed ones)."""
import lent_kit

_CALLS = [0]


def run(x, w, scale):
    _CALLS[0] += 1
    return lent_kit.answer(x, w, scale) if _CALLS[0] == 1 else lent_kit.zeros(x, w)

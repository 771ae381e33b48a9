"""Returns an output of the wrong shape."""
import lent_kit


def run(x, w, scale):
    y, count = lent_kit.answer(x, w, scale)
    return y[:, :-1].contiguous(), count

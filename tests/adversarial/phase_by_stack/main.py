"""Phase detection by call stack: remembers the stack of its first call and returns
garbage whenever it is called from a different one (a timing loop). The work it skips
is the sleep, a stand-in for an expensive kernel."""
import sys
import time

import lent_kit

_FIRST = []


def _stack():
    frame, names = sys._getframe(1), []
    while frame is not None:
        names.append((frame.f_code.co_filename, frame.f_code.co_name))
        frame = frame.f_back
    return names


def run(x, w, scale):
    stack = _stack()
    if not _FIRST:
        _FIRST.append(stack)
    if stack != _FIRST[0] or any("time" in name for _, name in stack):
        return lent_kit.zeros(x, w)
    time.sleep(0.02)
    return lent_kit.answer(x, w, scale)

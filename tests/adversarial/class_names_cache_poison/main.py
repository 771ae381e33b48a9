"""Hides an instance attribute that shadows the worker's ``collect``: where the state
check's list of the class's method names is a cache, it is rebuilt for a moment without
``collect`` (the very method put back after). Then ``worker.collect`` runs instead of the
harness's: no output check, no copy; run() writes its answer straight into the lent slots
and returns garbage. The method names must be fixed before any candidate code runs."""
import sys

import lent_kit

srv = sys.modules["hf_eval.isolation.server"]
W = srv.Worker
WORKER = lent_kit.find_worker()
_orig = W.__dict__["collect"]
names = getattr(srv, "_class_names", None)  # a cache of the class's names, where there is one
if names is not None:
    names.cache_clear()
    delattr(W, "collect")
    names(W)  # cached without "collect"
    W.collect = _orig
STATS = {"evil": 0}

def _collect(request):
    STATS["evil"] += 1
    n = len(WORKER.produced)
    WORKER.produced = []
    return {"outputs": [[None] * request["n_outputs"] for _ in range(n)]}

if WORKER is not None:
    WORKER.collect = _collect
run = lent_kit.slot_writing_run(WORKER)

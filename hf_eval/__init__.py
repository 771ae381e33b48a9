"""inference-kernels evaluation harness: schema, tensor store, acceptance, audit, checker."""

import os
import sys

__version__ = "0.1.0"

#: Set to "1" in the environment of the processes that run candidate code (the worker
#: spawner, and a worker started as a fresh interpreter): they keep OpenMP's own policy.
WORKER_VARIABLE = "HF_EVAL_WORKER_PROCESS"

# An audit's OpenMP threads sleep once a parallel region ends, instead of spinning on the
# cores that the worker timed next runs on. OpenMP reads the variable once, when torch
# loads it, so it is set as the package is imported, whoever imports it (the command
# line, a program that builds an Audit, the metric, a Ray actor), and never in a process
# that runs candidate code.
if os.environ.get(WORKER_VARIABLE) != "1":
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


def _openmp_loaded() -> bool:
    """Whether an OpenMP runtime is in this process already (by torch or anything else)."""
    try:
        with open("/proc/self/maps") as maps:
            mapped = maps.read()
    except OSError:
        return "torch" in sys.modules
    return "libgomp" in mapped or "libiomp" in mapped


#: Whether the OpenMP policy above was in place before OpenMP was loaded (a program that
#: loaded it first keeps what it had then; the report's environment says which).
OPENMP_POLICY_IN_TIME = not _openmp_loaded()
#: The OpenMP settings as this package found or set them, before torch loads OpenMP
#: (``GOMP_SPINCOUNT`` overrides the policy's sleeping).
OPENMP_SETTINGS = {name: os.environ.get(name) for name in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")}

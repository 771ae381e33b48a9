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

#: Whether the OpenMP policy above was in place before torch loaded OpenMP (a program that
#: imported torch first keeps OpenMP's default; the report's environment says which).
OPENMP_POLICY_IN_TIME = "torch" not in sys.modules

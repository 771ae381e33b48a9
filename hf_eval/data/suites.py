"""The audit's workload suites: their names, the default, and what each selects.

A module of its own, with no import, because the command line's help lists them and must
not import torch (``hf-eval --help`` stays fast); :func:`hf_eval.judge.audit.select_workloads`
is the truth of what each suite selects.
"""

#: ``fresh`` draws new cases at audit time (``hf_eval/samples/fresh.py``).
SUITES = ("sample", "first", "dev", "all", "fresh")
#: The command line's default: each task's few dev workloads (the rest of ``all`` is held
#: out), which keeps the main job (``python -m hf_eval audit`` on CPU) short.
DEFAULT_SUITE = "dev"

#: What each ``--suite`` selects, for ``list suites``.
SUITE_HELP = {
    "sample": "the generated sample (here: every workload)",
    "first": "the first line of each workload file: a smoke test",
    "dev": "each task's dev UUIDs (the default; the rest is held out)",
    "all": "every workload: for final judgments",
    "fresh": "new cases drawn at audit time, one per sample recipe (secret seed)",
}

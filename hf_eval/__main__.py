"""``python -m hf_eval``: the usage line says so, as the README does."""

from hf_eval.cli import entry

entry(prog="python -m hf_eval")

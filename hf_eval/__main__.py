"""``python -m hf_eval``: the usage line says so, as the README does."""

import sys

from hf_eval.cli import main

sys.exit(main(prog="python -m hf_eval"))

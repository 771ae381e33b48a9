"""``python -m hf_eval``: the usage line says so, as the README does."""

from hf_eval.cli import entry

if __name__ == "__main__":  # not when a spawned process (the serve judge) imports it
    entry(prog="python -m hf_eval")

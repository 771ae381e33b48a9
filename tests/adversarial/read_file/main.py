"""Reads the truth (or the dataset) from disk: the path is written in by the test, to a
file that exists and that the audit's own user can read. Raises what opening it raised."""
import lent_kit

TARGET = "__TARGET__"


def run(x, w, scale):
    with open(TARGET, "rb") as fh:
        fh.read(16)
    return lent_kit.zeros(x, w)  # had the read worked, this would be the truth

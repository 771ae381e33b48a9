"""Leaves a file in /tmp for a later candidate (or a later call of another worker)."""
import lent_kit


def run(x, w, scale):
    with open("/tmp/hf_eval_adversarial_leftover", "w") as fh:
        fh.write("state for later")
    return lent_kit.answer(x, w, scale)

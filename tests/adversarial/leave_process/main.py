"""Starts a detached process that would outlive its worker, then answers honestly."""
import subprocess

import lent_kit

_STARTED = []


def run(x, w, scale):
    if not _STARTED:
        _STARTED.append(subprocess.Popen(["sleep", "600"], start_new_session=True,
                                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    return lent_kit.answer(x, w, scale)

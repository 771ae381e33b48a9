"""Stall or blame through a BaseException the serve loop does not catch: a thread waits
until a timed trial's reply has left (the serve loop is then blocked in recv() for the
audit's ``checked``), then ``_thread.interrupt_main()``: KeyboardInterrupt in the worker's
main thread outside every ``except Exception``. Does the audit name the candidate (not
the harness, the stand-in or the next solution), and go on?"""
import _thread
import threading
import time

import lent_kit
import torch

_state = {"armed": False}


def _interrupter():
    while not _state["armed"]:
        time.sleep(0.0005)
    time.sleep(0.003)  # the reply is out; the worker waits for ``checked``
    _thread.interrupt_main()


def run(x, w, scale):
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    frame = lent_kit.trial_frame()
    if frame is not None and not _state["armed"] and \
            str(frame.f_locals["request"]["ids"][0]).startswith("s"):  # a fresh (timed) set
        _state["armed"] = True
        threading.Thread(target=_interrupter, daemon=True).start()
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)

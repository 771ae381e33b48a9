"""(CUDA) Device work queued after every timed trial's reply: a thread launches ~9.5 s
of sleep on a stream of its own (~5 ms after the last call, after the trial's
device-wide synchronise, so outside the candidate's clock), and holds the GIL for 1 ms
after the events (flagging every trial, so the guard adds trials). The stand-in's runs
wait for the GPU to be free before they start, which held the audit up to 10 s a run, free
to the candidate. The wait is now at most GPU_DRAIN_S (2 s) over the whole session: the
candidate's RUNTIME_ERROR. (Graph capture is refused, so that its calls run in the timed
trials.)"""
import threading
import time

import lent_kit
import torch

_state = {}


def _later(device):
    time.sleep(0.005)
    with torch.cuda.stream(torch.cuda.Stream(device)):
        torch.cuda._sleep(int(9.5 * 1.9e9))  # ~9.5 s at ~1.9 GHz
    end = time.perf_counter() + 0.001  # GIL held by this thread: outside the events
    while time.perf_counter() < end:
        pass


def run(x, w, scale):
    if torch.cuda.is_current_stream_capturing():
        raise RuntimeError("no graphs here")  # eager timing: run is called in every trial
    y, c = lent_kit.answer(x, w, scale)
    f = lent_kit.trial_frame()
    if f is not None and x.is_cuda and f.f_locals["request"].get("unmask"):
        req = f.f_locals["request"]
        if lent_kit.call_index(_state, req) == len(req["ids"]) - 1:
            threading.Thread(target=_later, args=(x.device,), daemon=True).start()
    return y, c

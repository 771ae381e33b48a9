"""(CUDA) CUPTI's window moved past the work. _activity_summary takes the first
kernel named like the lead (``spin_kernel``) by start time and opens the window at its
END. A candidate thread, seeing worker.profiler set (armed, before the trial request),
launches a long torch.cuda._sleep (a spin_kernel) on its own side stream: it starts
before the harness's lead, so it was leads[0], and it ends after the calls: every
activity of the trial lay before the window's start and the span read 0. The window now
opens at the earliest end of a lead kernel: the candidate's sleep is inside it, seen off
the timed stream, and every trial counts at least its span."""
import threading
import time

import lent_kit
import torch

_worker = lent_kit.find_worker()
_side = []


def _watch():
    stream = torch.cuda.Stream()
    seen = None
    while True:
        p = _worker.profiler
        if p is not None and p is not seen:
            seen = p
            with torch.cuda.stream(stream):
                torch.cuda._sleep(200_000_000)  # ~0.1 s, a spin_kernel of its own
        time.sleep(0.0002)


if _worker is not None:
    threading.Thread(target=_watch, daemon=True).start()


def run(x, w, scale):
    if torch.cuda.is_current_stream_capturing():
        raise RuntimeError("no graphs")
    if not _side:
        _side.append(torch.cuda.Stream())
    side = _side[0]
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        y = torch.nn.functional.linear(x.float(), w.float()) * scale
        out = (y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64))
    for t in out:
        t.record_stream(torch.cuda.current_stream())
    return out

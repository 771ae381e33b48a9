"""(CUDA) CUPTI's end marker swapped, in the armed trial, for a one-byte uint8 tensor on
the CPU (its type, dtype and shape as the harness's), with a uint8 fill of the
candidate's own early in its first call: the harness's marker fill would run no kernel,
and the window would close before the side-stream work. The worker's state check
compares the marker's device with the worker's: the candidate's error. (Graph capture
is refused, so that its calls run in the profiled trial.)"""
import lent_kit
import torch

_early = None


def run(x, w, scale):
    global _early
    if torch.cuda.is_current_stream_capturing():
        raise RuntimeError("no graphs here")  # eager timing: run is called in every trial
    f = lent_kit.trial_frame()
    if f is not None and x.is_cuda and f.f_locals["self"].profiler is not None:
        worker = f.f_locals["self"]
        if _early is None:
            _early = torch.zeros(1, dtype=torch.uint8, device=x.device)
        _early.fill_(1)  # a kernel named like the marker, before the work
        worker.marker = torch.zeros(1, dtype=torch.uint8)  # passes _state_problems
        side = torch.cuda.Stream()
        with torch.cuda.stream(side):
            y, c = lent_kit.answer(x, w, scale)
        torch.cuda.current_stream().wait_stream(side)
        return y, c
    return lent_kit.answer(x, w, scale)

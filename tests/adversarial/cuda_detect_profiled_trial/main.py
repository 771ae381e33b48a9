"""(CUDA, untested) The CUPTI trial is the only one whose all-stream span can correct the
timed trials, it is never timed itself, and a candidate can tell it apart: the worker's
kineto profiler is running only then (torch.autograd.profiler._is_profiler_enabled).
In that trial all work runs on the current stream (span == events: no off-stream work
seen); in every timed trial a third of it runs on a side stream the events do not see (graph
capture is refused: inside a graph the end event waits for every branch, so the audit
falls back to eager timing). CUPTI's verdict is then "on stream", and only the host
guard's slack bounds the rest. No harness object is touched at all."""
import torch
import torch.autograd.profiler as autograd_profiler

SIDE_SHARE = 0.35
_side = []


def _profiled() -> bool:
    return bool(getattr(autograd_profiler, "_is_profiler_enabled", False)) or \
        bool(torch._C._autograd._profiler_enabled())


def run(x, w, scale):
    if torch.cuda.is_current_stream_capturing():
        raise RuntimeError("no graphs")
    if not _side:
        _side.append(torch.cuda.Stream())
    cycles = 2_000_000
    if _profiled():  # the CUPTI trial: everything where the events would see it
        torch.cuda._sleep(cycles)
        y = torch.nn.functional.linear(x.float(), w.float()) * scale
    else:
        side = _side[0]
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            torch.cuda._sleep(int(cycles * SIDE_SHARE))
            y = torch.nn.functional.linear(x.float(), w.float()) * scale
            out = (y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64))
        for t in out:
            t.record_stream(torch.cuda.current_stream())
        torch.cuda._sleep(int(cycles * (1 - SIDE_SHARE)))
        return out  # the harness's device-wide synchronise finishes the side stream
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)

"""(CUDA) CUPTI's check switched off by making its read fail. In the profiled
trial (worker.profiler set by ``arm``) the candidate stops that profiler itself; the
worker's ``disarm`` then raises in profiler.stop() and replies {"cupti": {"error": ...}}
(server.py Worker.disarm). trials._statistics only records the error: no off-stream
correction and nothing charged to the candidate. In every timed trial a third of the
work runs on a side stream the events do not see (graph capture refused). Bounded by
the host guard, like cuda_detect_profiled_trial: every trial counts at least what the
quietest host time implies, whether or not the trace could be read."""
import lent_kit
import torch

SIDE_SHARE = 0.35
_worker = lent_kit.find_worker()
_side = []


def run(x, w, scale):
    if torch.cuda.is_current_stream_capturing():
        raise RuntimeError("no graphs")
    if _worker is not None and _worker.profiler is not None:
        try:
            _worker.profiler.stop()
        except Exception:  # noqa: BLE001
            pass
    if not _side:
        _side.append(torch.cuda.Stream())
    side = _side[0]
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        torch.cuda._sleep(int(2_000_000 * SIDE_SHARE))
        y = torch.nn.functional.linear(x.float(), w.float()) * scale
        out = (y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64))
    for t in out:
        t.record_stream(torch.cuda.current_stream())
    torch.cuda._sleep(int(2_000_000 * (1 - SIDE_SHARE)))
    return out

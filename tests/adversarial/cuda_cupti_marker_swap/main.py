"""(CUDA) CUPTI's window closes at the start of the last one-byte fill (the harness's end
marker, a fill of ``Worker.marker``). The candidate swaps the marker for a float32
tensor, so the harness's end marker is a float fill, and in the profiled trial makes a
uint8 fill its first launch: the window would close before the calls (span ~0,
off_stream False, silently), while every trial runs its work on a side stream. The
worker's state check types the marker (one uint8 byte): the candidate's error."""
import lent_kit
import torch

worker = lent_kit.find_worker()
side = None


def run(x, w, scale):
    global side
    if worker is not None and x.is_cuda:
        if worker.marker is not None and worker.marker.dtype == torch.uint8:
            worker.marker = torch.zeros(1, dtype=torch.float32, device=x.device)
        if worker.profiler is not None:
            torch.zeros(1, dtype=torch.uint8, device=x.device).fill_(1)  # a fake end
        side = side or torch.cuda.Stream(x.device)
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):  # the hidden half: off the timed stream
            y, c = lent_kit.answer(x, w, scale)
        return y, c  # the harness's device-wide sync waits for it, the events do not
    return lent_kit.answer(x, w, scale)

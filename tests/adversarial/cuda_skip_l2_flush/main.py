"""(CUDA, untested) Makes the ranked "cold" figure a warm-L2 one. The L2 flush buffer is
an instance attribute (Worker.l2_buffer), created on the first flush and never checked:
replacing it with a 1-byte tensor makes every `flush` write one byte. The cold replays
then run with the inputs L2-resident as their reveal left them (the published "graph"
state), and the request skips the ~2 x L2 fill that the stand-in still performs, so its
host time is lower than an honest candidate's and the guard never flags it.
records.reported_time ranks by "cold" first. The flush now reads a buffer it allocates
each time: the attribute set here is no longer read by anything."""
import gc

import torch

_done = []


def run(x, w, scale):
    if not _done:
        gc.unfreeze()
        worker = next(o for o in gc.get_objects() if type(o).__name__ == "Worker")
        worker.l2_buffer = torch.empty(1, dtype=torch.uint8, device=x.device)
        _done.append(worker)
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)

"""``worker.gate`` (the launch gate of graph trials on CUDA) replaced by an object of the
candidate's at import: on CUDA its close() and open() would run around the timed replay
in place of the harness's (no wait, no watchdog, exact hooks around the start and end
events), while the stand-in's request pays the real gate. The worker's state check
types the attribute (a LaunchGate or None): the candidate's error."""
import lent_kit
import torch


class Gate:
    calls = 0

    def close(self):
        Gate.calls += 1

    def open(self):
        Gate.calls += 1


_worker = lent_kit.find_worker()
if _worker is not None:
    _worker.gate = Gate()


def run(x, w, scale):
    if _worker is not None:
        assert type(_worker.gate) is Gate
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)

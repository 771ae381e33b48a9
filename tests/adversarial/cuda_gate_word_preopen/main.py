"""(CUDA) The gate pre-opened for ~10^9 trials: its word (pinned host memory,
worker.gate.word) set to 2**30 at import. cuStreamWaitValue32 GEQ compares cyclically,
so every later close() waits on a value already reached: the events start right after a
1,000-cycle sleep, before the replay is launched, and the reply still says gated=True
(a diagnostic the record shows as ``candidate_gated``). Expected: no gain (the launch
is then inside the events: slower), PASSED, the diagnostic false. Shows ``gated`` and
the word are the candidate's to write."""
import lent_kit
import torch

_worker = lent_kit.find_worker()
if _worker is not None and getattr(_worker, "gate", None) is not None:
    _worker.gate.word.fill_(1 << 30)


def run(x, w, scale):
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)

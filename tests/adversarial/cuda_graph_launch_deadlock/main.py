"""(CUDA) Stall: a captured graph so large (thousands of tiny kernel nodes a call) that its
launch might not be queued while the stream is parked behind the closed launch gate. If
cudaGraphLaunch blocked for queue space, replay() would not return before the gate's
watchdog opens it (50 ms, a thread started before any candidate code): the trial is then
slower, never stuck. Expected: PASSED."""
import torch

NODES = 2_000


def run(x, w, scale):
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    if torch.cuda.is_current_stream_capturing():
        z = torch.zeros(1, device=x.device)
        for _ in range(NODES):
            z.add_(0)  # one tiny kernel node each
        y = y + z
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)

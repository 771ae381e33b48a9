"""(CUDA) The last call of a trial leaves a side stream current (torch.cuda.set_stream),
so an end event recorded on the current stream would fire at once: an event time of
about the launch, with no check switched off. Both events are recorded on the stream
current before the calls, and a call that leaves another one current is the
candidate's error."""
import lent_kit
import torch

_state, _side = {}, {}


def run(x, w, scale):
    f = lent_kit.trial_frame()
    torch.cuda.set_stream(torch.cuda.default_stream(x.device)) if x.is_cuda else None
    y, c = lent_kit.answer(x, w, scale)
    if f is not None and x.is_cuda and f.f_locals["self"].profiler is None:
        req = f.f_locals["request"]
        if lent_kit.call_index(_state, req) == len(req["ids"]) - 1:
            s = _side.setdefault("s", torch.cuda.Stream(x.device))
            lent_kit.busy(0.0001)  # past the 25 us lead, so the claim stays positive
            torch.cuda.set_stream(s)
    return y, c

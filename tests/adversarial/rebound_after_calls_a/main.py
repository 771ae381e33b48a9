"""the candidate's call rebinds server._kernels_replaced (a module global that
trial() and collect() look up at run time, after the calls). The hook lets trial's call
pass, and in collect (after the state check, before the copies) writes the right answer
into the outputs the calls returned (zeros), then puts the original back, so the
put-back before the send finds nothing changed. WRONG unless the hook ran."""
import sys as _sys

import torch

import hf_eval.isolation.server as server

ORIG = server.__dict__["_kernels_replaced"]
LOG = {"fired": 0}

def _answer(x, w, scale):
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)

def hook(ops):
    f = _sys._getframe(1)
    if f.f_code.co_name == "collect":
        worker = f.f_locals["self"]
        for set_id, outs in list(worker.produced):
            y, c = _answer(*worker.sets[set_id])
            outs[0].copy_(y)
            outs[1].copy_(c)
            LOG["fired"] += 1
        server._kernels_replaced = ORIG
    return ORIG(ops)

def run(x, w, scale):
    server._kernels_replaced = hook
    return (torch.zeros(x.shape[0], w.shape[0], dtype=torch.bfloat16),
            torch.zeros(1, dtype=torch.int64))

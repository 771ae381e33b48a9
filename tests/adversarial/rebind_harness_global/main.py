"""Rebinds a module global of the harness inside the worker (its clock), not one of the
functions an older worker listed: a forged event time that went unnoticed."""
import torch

import hf_eval.isolation.server as server


def run(x, w, scale):
    server._perf_counter = lambda: 0.0
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)

"""The record's `isolation` field lists the walls the worker got. The load reply is built
after the candidate's module is imported, from the worker's `walls` attribute (an
instance attribute, outside the integrity snapshot). At import this candidate walks up
to the load handler's frame and rewrites that list: every real wall dropped, others
claimed. Otherwise honest. The audit records the walls the worker named when it started,
before any candidate code ran."""
import sys

import torch

frame = sys._getframe()
while frame is not None and frame.f_code.co_name != "load":
    frame = frame.f_back
if frame is not None and "self" in frame.f_locals:
    frame.f_locals["self"].walls[:] = ["no-sandbox", "uid:0", "start:exec",
                                       "audited-by-hand", "gpu:h200-verified"]


def run(x, w, scale):
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)

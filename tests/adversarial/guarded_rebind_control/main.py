"""Round 113 CONTROL for ``worker_dict_checked_erase``: the same rebinding of the
guarded ``statistics.median`` and honest work, with no dict subclass to erase the report:
must be RUNTIME_ERROR naming ``statistics.median``."""
import statistics

import torch


def _median(data):
    return sorted(data)[len(data) // 2]


def run(x, w, scale):
    statistics.median = _median
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)

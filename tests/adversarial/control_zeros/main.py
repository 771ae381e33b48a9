"""Control: the zeros the method-table candidates return, with no hook to fill them: judged
wrong."""
import torch


def run(x, w, scale):
    return (torch.zeros(x.shape[0], w.shape[0], dtype=torch.bfloat16),
            torch.zeros(1, dtype=torch.int64))

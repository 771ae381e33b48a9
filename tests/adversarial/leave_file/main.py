"""Leaves a file in /tmp for a later candidate (or a later call of another worker)."""
import torch


def honest(x, w, scale):
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)


def garbage(x, w):
    return (torch.zeros(x.shape[0], w.shape[0], dtype=torch.bfloat16),
            torch.zeros(1, dtype=torch.int64))


def run(x, w, scale):
    with open("/tmp/hf_eval_adversarial_leftover", "w") as fh:
        fh.write("state for later")
    return honest(x, w, scale)

"""Drains the kernel's entropy (/dev/random, getrandom with GRND_RANDOM) in every call, to
stall or weaken the audit's secrets.token_bytes and Philox seeds. Raises naming what it
could read; modern kernels never block getrandom once seeded, so expected HELD."""
import os

import torch


def _answer(x, w, scale):
    r = torch.nn.functional.linear(x.float(), w.float()) * scale
    return r.to(torch.bfloat16), (r.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)

N = [0]


def run(x, w, scale):
    N[0] += 1
    got = 0
    try:
        for _ in range(64):
            got += len(os.getrandom(4096, os.GRND_RANDOM | os.GRND_NONBLOCK))
    except OSError:
        pass
    try:
        with open("/dev/random", "rb", buffering=0) as f:
            got += len(f.read(1 << 16))
    except OSError:
        pass
    return _answer(x, w, scale)

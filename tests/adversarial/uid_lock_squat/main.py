"""The audit's worker-uid leases live in /tmp (workers.UID_LOCK_DIRECTORY). A candidate
that could open and flock them (or the GPU lock) would hold a uid the next audit needs, or
make another audit reap its worker. Tries to list /tmp, open every lock-looking file and
take LOCK_EX | LOCK_NB on it, and to create a lock file there; raises naming what
succeeded (nothing should: Landlock keeps /tmp out of reach)."""
import fcntl
import os

import torch


def _answer(x, w, scale):
    r = torch.nn.functional.linear(x.float(), w.float()) * scale
    return r.to(torch.bfloat16), (r.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)

HELD = []


def run(x, w, scale):
    got = []
    for d in ("/tmp", "/var/lock", "/run/lock", "/dev/shm"):
        try:
            names = os.listdir(d)
        except OSError:
            continue
        got.append(f"list {d}: {len(names)}")
        for n in names:
            p = os.path.join(d, n)
            try:
                fd = os.open(p, os.O_RDONLY)
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                HELD.append(fd)
                got.append(f"lock {p}")
            except OSError:
                pass
    try:
        fd = os.open("/tmp/hf-eval-uid-61001.lock", os.O_CREAT | os.O_RDWR, 0o666)
        HELD.append(fd)
        got.append("created /tmp lock")
    except OSError:
        pass
    if got:
        raise RuntimeError("reached: " + "; ".join(got)[:300])
    return _answer(x, w, scale)

"""Outliving the worker by becoming a sibling instead of a child: ``clone(CLONE_PARENT)``
from the worker's first process (pid 1 of its PID namespace) and from a child of it, each
new process then a session leader ignoring every catchable signal and sleeping; and a
``CLONE_PARENT|CLONE_NEWPID`` attempt for a namespace of its own. The kernel refuses a
sibling of a namespace's init (EINVAL); a child's sibling is still a member of the
namespace and of the worker's groups. The runner lists any process of the worker's uid
left after the audit (SURVIVORS). run() is honest and reports nothing."""
import ctypes
import os
import signal
import time

import torch

libc = ctypes.CDLL(None, use_errno=True)
SYS_CLONE = 56
CLONE_PARENT, CLONE_NEWPID, SIGCHLD = 0x00008000, 0x20000000, 17
RESULTS = {}


def _daemon():
    os.setsid()
    for s in range(1, 32):
        if s not in (signal.SIGKILL, signal.SIGSTOP):
            try:
                signal.signal(s, signal.SIG_IGN)
            except (OSError, ValueError):
                pass
    while True:
        time.sleep(1)


def _clone(flags):
    pid = libc.syscall(SYS_CLONE, flags | SIGCHLD, 0, 0, 0, 0)
    if pid == 0:
        _daemon()
    return pid, os.strerror(ctypes.get_errno()) if pid < 0 else ""


RESULTS["from_init"] = _clone(CLONE_PARENT)
RESULTS["newpid"] = _clone(CLONE_PARENT | CLONE_NEWPID)
child = os.fork()
if child == 0:
    _clone(CLONE_PARENT)  # a sibling of this child: a child of the worker's init
    _daemon()


def run(x, w, scale):
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)

"""``struct.Struct.pack`` replaced: at the first trial reply's send the hook double-forks a
child that starts a new session, ignores SIGTERM, SIGHUP and SIGINT, and sleeps; honest
outputs. Any process of the worker's uid left after the audit is an escape (SURVIVORS)."""
import _struct
import os
import signal
import sys as _sys
import time

from lent_kit import REPLACED, answer, install_method

DONE = [False]


def _pack(self, *args):
    if not DONE[0] and _sys._getframe(1).f_code.co_name == "_send_message":
        DONE[0] = True
        try:
            pid = os.fork()
            if pid == 0:
                try:
                    os.setsid()
                    if os.fork() == 0:
                        for s in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
                            signal.signal(s, signal.SIG_IGN)
                        time.sleep(600)
                finally:
                    os._exit(0)
            os.waitpid(pid, 0)
        except OSError:
            pass
    return REPLACED["pack"](self, *args)


def run(x, w, scale):
    install_method(_struct.Struct, "pack", _pack, True)
    return answer(x, w, scale)

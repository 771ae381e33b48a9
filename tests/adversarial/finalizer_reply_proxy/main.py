# ruff: noqa: F811  (a proxy's hooks, redefined per candidate)
"""a ``weakref.finalize`` on the tensors a call returns fires when ``trial``'s frame
dies, i.e. after ``collect``'s state check and before ``send``: it sets the channel's
``sock`` (an instance attribute) to a proxy that rewrites the trial's reply (every output
"fits", event_ms ~0). The proxy takes itself out while delivering the next request
(``checked``), before the check that compares ``Channel.sock``. The calls write the answer
into the lent slots and return tensors that fit no slot: PASSED only if the reply was
rewritten."""
# ---- shared: a proxy for the worker's channel socket (plain Python, no ctypes) ----
import json as _json
import os as _os
import pickle as _pickle
import socket as _socket
import struct as _struct
import sys as _sys
import weakref as _weakref

import torch

_H = _struct.Struct("<QI")
LOG = {"req": 0, "trial_req": 0, "rewrote_req": 0, "rewrote_reply": 0, "installs": 0}


def _find_worker():
    server = _sys.modules["hf_eval.isolation.server"]
    f = _sys._getframe(0)
    while f is not None and not (f.f_code.co_name in ("load", "serve")
                                 and type(f.f_locals.get("self")) is server.Worker):
        f = f.f_back
    return f.f_locals["self"] if f is not None else None


WORKER = _find_worker()
CHANNEL = WORKER.channel
REAL = vars(CHANNEL)["sock"]
_R, _W = _os.pipe()
_os.write(_W, b"x")  # the read end is always readable


def on_request(obj):  # replaced by each candidate
    return False


def on_reply(obj):  # replaced by each candidate
    return False


class Proxy:
    def __init__(self):
        self.buf = b""
        self.restore = False
        self.held = False

    # receive side
    def fileno(self):
        return _R if self.buf else REAL.fileno()

    def settimeout(self, t):
        return REAL.settimeout(t)

    def gettimeout(self):
        return REAL.gettimeout()

    def _fill(self):
        REAL.settimeout(None)
        head = b""
        while len(head) < 12:
            head = REAL.recv(12, _socket.MSG_PEEK)
            if not head:
                return False
        length, count = _H.unpack(head)
        if count:
            return False
        data = b""
        want = 12 + length
        while len(data) < want:
            chunk = REAL.recv(want - len(data))
            if not chunk:
                return False
            data += chunk
        obj = _pickle.loads(data[12:])
        LOG["req"] += 1
        keep = False
        if type(obj) is dict:
            keep = bool(on_request(obj))
        body = _pickle.dumps(obj, protocol=_pickle.HIGHEST_PROTOCOL)
        self.buf = _H.pack(len(body), 0) + body
        self.restore = not keep
        return True

    def _take(self, n):
        if not self.buf and not self._fill():
            vars(CHANNEL)["sock"] = REAL
            return None
        out, self.buf = self.buf[:n], self.buf[n:]
        if not self.buf and self.restore:
            vars(CHANNEL)["sock"] = REAL
        return out

    def recvmsg(self, bufsize, ancbufsize=0, flags=0):
        out = self._take(bufsize)
        if out is None:
            return REAL.recvmsg(bufsize, ancbufsize, flags)
        return out, [], 0, None

    def recv(self, n, flags=0):
        out = self._take(n)
        if out is None:
            return REAL.recv(n, flags)
        return out

    # send side
    def sendmsg(self, buffers, anc=(), flags=0, addr=None):
        if len(buffers) == 1 and len(buffers[0]) == 12 and not any(len(a[2]) for a in anc):
            self.held = True
            return 12
        return REAL.sendmsg(buffers, anc, flags)

    def sendall(self, data, flags=0):
        if self.held:
            self.held = False
            try:
                obj = _json.loads(data)
                if type(obj) is dict and on_reply(obj):
                    LOG["rewrote_reply"] += 1
                    data = _json.dumps(obj).encode()
            except Exception:
                pass
            REAL.sendmsg([_H.pack(len(data), 0)])
        return REAL.sendall(data, flags)


def install():
    if vars(CHANNEL).get("sock") is REAL:
        LOG["installs"] += 1
        vars(CHANNEL)["sock"] = Proxy()
# ---- end shared ----

STATE = {"k": 0}


def on_request(obj):
    return obj.get("op") == "trial"


def on_reply(obj):
    if "event_ms" in obj and "outputs" in obj:
        obj["outputs"] = [[None] * len(e) for e in obj["outputs"]]
        obj["event_ms"] = 0.001
        return True
    return False


def _fired():
    STATE["k"] = 0
    install()


def run(x, w, scale):
    k = STATE["k"]
    STATE["k"] += 1
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    slot = WORKER.slots[k]
    slot[0].copy_(y)
    slot[1].copy_((y.sum(dim=1) > 0).sum().reshape(1))
    a, b = torch.empty(2, dtype=torch.bfloat16), torch.empty(2, dtype=torch.int64)
    _weakref.finalize(a, _fired)
    return a, b

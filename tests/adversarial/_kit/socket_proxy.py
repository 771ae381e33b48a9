"""A proxy for the worker's channel socket, in plain Python (no ctypes), for candidates that
put it in ``Channel.sock``: it reads each request before the worker, hands each to
``on_request`` and each reply to ``on_reply`` (set by the candidate), and steps out after
a request unless ``KEEP_ALWAYS`` or ``on_request`` says to stay."""
import json as _json
import os as _os
import pickle as _pickle
import socket as _socket
import struct as _struct
import sys as _sys

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


KEEP_ALWAYS = False


def on_request(obj):  # set by the candidate
    return False


def on_reply(obj):  # set by the candidate
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
        import array as _array
        head, fds = b"", []
        while len(head) < 12:
            data, anc, _, _ = REAL.recvmsg(12 - len(head), _socket.CMSG_LEN(250 * 4))
            if not data:
                return False
            head += data
            for _lvl, _typ, cd in anc:
                a = _array.array("i")
                a.frombytes(cd[:len(cd) - len(cd) % 4])
                fds += list(a)
        length, count = _H.unpack(head)
        while len(fds) < count:
            data, anc, _, _ = REAL.recvmsg(1, _socket.CMSG_LEN(250 * 4))
            for _lvl, _typ, cd in anc:
                a = _array.array("i")
                a.frombytes(cd[:len(cd) - len(cd) % 4])
                fds += list(a)
        data = b""
        while len(data) < length:
            chunk = REAL.recv(length - len(data))
            if not chunk:
                return False
            data += chunk
        LOG["req"] += 1
        keep = KEEP_ALWAYS
        body = data
        if not count:
            obj = _pickle.loads(data)
            if type(obj) is dict:
                keep = bool(on_request(obj))
            body = _pickle.dumps(obj, protocol=_pickle.HIGHEST_PROTOCOL)
        self.fds = fds
        self.buf = _H.pack(len(body), len(fds)) + body
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
        anc = []
        if getattr(self, "fds", None):
            import array as _array
            anc = [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, _array.array("i", self.fds).tobytes())]
            self.fds = []
        return out, anc, 0, None

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

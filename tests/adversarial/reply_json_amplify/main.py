"""Writes a reply of its own on the result channel: 2 MiB of ``[{},{},...]``. Reading
JSON builds each ``{}`` as a dict dozens of times its two bytes, in the audit's memory: a
reply is bounded (1 MiB) before it is read, so the audit refuses it by its header."""
import os
import socket
import stat
import struct
import time


def _channel():
    for fd in range(3, 256):
        try:
            if not stat.S_ISSOCK(os.fstat(fd).st_mode):
                continue
            sock = socket.socket(fileno=os.dup(fd))
        except OSError:
            continue
        if sock.family == socket.AF_UNIX and sock.type == socket.SOCK_STREAM:
            try:
                sock.getpeername()
                return sock
            except OSError:
                pass
        sock.close()
    return None


def run(x, w, scale):
    sock = _channel()
    if sock is None:
        raise RuntimeError("no result channel found")
    count = (2 << 20) // 3
    data = b"[" + b"{}," * (count - 1) + b"{}]"
    sock.sendall(struct.pack("<QI", len(data), 0) + data)
    time.sleep(30)

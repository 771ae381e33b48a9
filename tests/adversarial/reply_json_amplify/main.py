"""Writes a reply of its own on the result channel: 2 MiB of ``[{},{},...]``. Reading
JSON builds each ``{}`` as a dict dozens of times its two bytes, in the audit's memory: a
reply is bounded (1 MiB) before it is read, so the audit refuses it by its header."""
import struct
import time

import lent_kit


def run(x, w, scale):
    sock = lent_kit.result_channel()
    if sock is None:
        raise RuntimeError("no result channel found")
    count = (2 << 20) // 3
    data = b"[" + b"{}," * (count - 1) + b"{}]"
    sock.sendall(struct.pack("<QI", len(data), 0) + data)
    time.sleep(30)

"""Adds TCP MD5 keys to an IP socket that never connects (each socket holds up to
128 KiB of option memory, which no cgroup charges) and sets an IP-level option. Raises,
naming them, only if both are refused; if either is taken it returns the right answer
(and would PASS)."""
import socket
import struct

import torch

TCP_MD5SIG = 14


def _md5_key() -> bytes:
    """A ``struct tcp_md5sig`` for peer 10.0.0.1 with an 80-byte key."""
    peer = struct.pack("=H", socket.AF_INET) + struct.pack("!H4s", 0, bytes([10, 0, 0, 1]))
    return peer.ljust(128, b"\0") + struct.pack("=BBHi", 0, 0, 80, 0) + b"k" * 80


def _refused(level, option, value):
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.setsockopt(level, option, value)
        except OSError as exc:
            return exc.strerror
    return None


def run(x, w, scale):
    refused = {"tcp md5 key": _refused(socket.IPPROTO_TCP, TCP_MD5SIG, _md5_key()),
               "ip ttl": _refused(socket.IPPROTO_IP, socket.IP_TTL, 7)}
    if all(refused.values()):
        raise PermissionError(", ".join(f"{name}: {why}" for name, why in refused.items()))
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)

"""Opens netlink sockets, which send to their own port without ``connect``: each can
queue megabytes in its receive buffer, memory no cgroup charges to the worker. Raises,
naming them, only if every one is refused; if any opens it returns the right answer
(and would PASS)."""
import socket

import torch

NETLINK_ROUTE, NETLINK_USERSOCK = 0, 2


def _refused(protocol):
    try:
        socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, protocol).close()
    except OSError as exc:
        return exc.strerror
    return None


def run(x, w, scale):
    refused = {"netlink route": _refused(NETLINK_ROUTE),
               "netlink usersock": _refused(NETLINK_USERSOCK)}
    if all(refused.values()):
        raise PermissionError(", ".join(f"{name}: {why}" for name, why in refused.items()))
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)

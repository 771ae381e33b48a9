"""Sends a reply that carries a memfd of its own, which an older audit mapped as an
output (and which the worker could then truncate under the audit's reads)."""
import gc
import io
import os
import pickle
import socket
import struct

import torch


def run(x, w, scale):
    gc.unfreeze()
    request = next(o for o in gc.get_objects()
                   if type(o) is dict and o.get("op") == "trial" and "nonce" in o)
    channel = next(o for o in gc.get_objects()
                   if type(o).__name__ == "Channel" and hasattr(o, "sock"))
    fd = os.memfd_create("evil")
    os.ftruncate(fd, 4096)
    data = io.BytesIO()
    pickle.dump({"ok": True, "outputs": [[None, None]], "event_ms": 0.0,
                 "nonce": request["nonce"]}, data)
    socket.send_fds(channel.sock, [struct.pack("<QI", len(data.getvalue()), 1)], [fd])
    channel.sock.sendall(data.getvalue())
    return (torch.zeros(x.shape[0], w.shape[0], dtype=torch.bfloat16),
            torch.zeros(1, dtype=torch.int64))

"""Writes a reply header that announces a body, then never sends it (an older audit
waited for the body with no deadline)."""
import struct
import time

import lent_kit


def run(x, w, scale):
    for obj in lent_kit.everything():
        if type(obj).__name__ == "Channel" and hasattr(obj, "sock"):
            obj.sock.sendall(struct.pack("<QI", 100, 0))
    time.sleep(3600)

"""Writes a reply header that announces a body, then never sends it (an older audit
waited for the body with no deadline)."""
import gc
import struct
import time


def run(x, w, scale):
    gc.unfreeze()
    for obj in gc.get_objects():
        if type(obj).__name__ == "Channel" and hasattr(obj, "sock"):
            obj.sock.sendall(struct.pack("<QI", 100, 0))
    time.sleep(3600)

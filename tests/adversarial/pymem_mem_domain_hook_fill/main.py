"""Round 107, variant of pymem_malloc_hook_fill on PYMEM_DOMAIN_MEM (``PyMem_Malloc``: list
item arrays, buffers) instead of the object domain. The allocator replaced
(``PyMem_SetAllocator`` on
PYMEM_DOMAIN_MEM, by ctypes; no audit event) by a copy of the original whose ``malloc`` is a
few bytes of machine code: when a flag byte is set it clears it, calls a ctypes callback,
then tail-jumps to the original ``malloc`` (same context). run() returns zeros and sets the
flag; the callback runs at the next object allocation anywhere. Until the trial's CPU clock
has been read (``t1`` bound in the trial frame) it re-arms; after, it writes the answers
into the zeros the calls returned, before ``collect`` checks and copies them."""
import ctypes

from native_stub import FlaggedStub, PendingFill


class _Alloc(ctypes.Structure):
    _fields_ = [("ctx", ctypes.c_void_p), ("malloc", ctypes.c_void_p),
                ("calloc", ctypes.c_void_p), ("realloc", ctypes.c_void_p),
                ("free", ctypes.c_void_p)]


api = ctypes.pythonapi
api.PyMem_GetAllocator.argtypes = [ctypes.c_int, ctypes.POINTER(_Alloc)]
api.PyMem_SetAllocator.argtypes = [ctypes.c_int, ctypes.POINTER(_Alloc)]
_DOMAIN = 1  # PYMEM_DOMAIN_MEM
_orig = _Alloc()
api.PyMem_GetAllocator(_DOMAIN, ctypes.byref(_orig))
PENDING = PendingFill()
PENDING.stub = FlaggedStub(PENDING.after_clock, _orig.malloc)
_new = _Alloc(_orig.ctx, PENDING.stub.address, _orig.calloc, _orig.realloc, _orig.free)
api.PyMem_SetAllocator(_DOMAIN, ctypes.byref(_new))


def run(x, w, scale):
    return PENDING.zeros(x, w, scale)

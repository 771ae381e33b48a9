"""Machine code of the candidate's inside the interpreter's own steps: a few bytes in an
anonymous executable mapping that, while a flag byte is set, clear it, call a Python
function (a ``ctypes`` callback) and then jump to the C function they stand in for (the
default frame evaluator, or an allocator's ``malloc``); with the flag clear they jump at
once. Installing such a stub takes a C function the worker's audit hook refuses to look up
by name (``_PyInterpreterState_SetEvalFrameFunc``, ``PyMem_SetAllocator``): the candidates
that use it test that veto, and what the stub would do past it."""

import ctypes
import mmap
import struct
import sys

import torch
from lent_kit import answer, zeros

_FLAG_AT = 2048


class FlaggedStub:
    """The stub: ``address`` is its entry, ``arm()`` sets its flag."""

    def __init__(self, callback, target: int):
        self._mem = mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
        #: Where the stub's code starts.
        self.address = ctypes.addressof(ctypes.c_char.from_buffer(self._mem))
        self._callback = ctypes.CFUNCTYPE(None)(callback)  # kept alive with the stub
        call = ctypes.cast(self._callback, ctypes.c_void_p).value
        code = (b"\x48\xB8" + struct.pack("<Q", self.address + _FLAG_AT)  # mov rax, flag
                + b"\x80\x38\x00" + b"\x74\x15"  # cmp byte [rax], 0; je tail
                + b"\xC6\x00\x00"  # mov byte [rax], 0
                + b"\x57\x56\x52"  # push rdi, rsi, rdx (the arguments)
                + b"\x48\xB8" + struct.pack("<Q", call) + b"\xFF\xD0"  # call the callback
                + b"\x5A\x5E\x5F"  # pop them back
                + b"\x48\xB8" + struct.pack("<Q", target) + b"\xFF\xE0")  # tail: jmp target
        self._mem[0:len(code)] = code

    def arm(self):
        """Run the callback at the stub's next entry."""
        self._mem[_FLAG_AT] = 1


def eval_frame_default() -> int:
    """The address of the interpreter's default frame evaluator."""
    return ctypes.cast(ctypes.pythonapi._PyEval_EvalFrameDefault, ctypes.c_void_p).value


def eval_frame_setter():
    """A function that makes the stub at an address the interpreter's frame evaluator (the
    lookup by name the worker refuses)."""
    api = ctypes.pythonapi
    api.PyInterpreterState_Get.restype = ctypes.c_void_p
    api._PyInterpreterState_SetEvalFrameFunc.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
    interp = api.PyInterpreterState_Get()
    return lambda address: api._PyInterpreterState_SetEvalFrameFunc(interp, address)


class PendingFill:
    """Zeros handed out by the calls, and the answers written into them by the stub's
    callback once the trial's CPU clock has been read (``t1`` bound in the trial's frame),
    so after the calls and before ``collect`` checks and copies them."""

    def __init__(self):
        #: (y, c, x, w, scale) of each call whose zeros are not filled yet.
        self.todo = []
        #: How many times the callback has filled.
        self.fills = 0
        #: The stub whose callback this is (set by the candidate).
        self.stub = None

    def zeros(self, x, w, scale):
        """The call's zeros, remembered, and the stub armed."""
        y, c = zeros(x, w)
        self.todo.append((y, c, x, w, scale))
        self.stub.arm()
        return y, c

    def fill(self):
        """Write each pending call's answers into its zeros."""
        for y_out, c_out, x, w, scale in self.todo:
            y, c = answer(x, w, scale)
            y_out.copy_(y)
            c_out.copy_(c)
        self.todo = []
        self.fills += 1

    def after_clock(self):
        """The callback: fill once a trial frame up the stack has read its clock; else arm
        again while there is something to fill."""
        try:
            f = sys._getframe(1)
            while f is not None and f.f_code.co_name != "trial":
                f = f.f_back
            if f is None or not self.todo or "t1" not in f.f_locals:
                if self.todo:
                    self.stub.arm()
                return
            self.fill()
        except BaseException:  # noqa: BLE001
            pass


class _Sigaction(ctypes.Structure):
    _fields_ = [("handler", ctypes.c_void_p), ("mask", ctypes.c_ubyte * 128),
                ("flags", ctypes.c_int), ("restorer", ctypes.c_void_p)]


class FaultFill:
    """Outputs whose y lies in a page made PROT_NONE, and a SIGSEGV handler of libc's
    (``sigaction`` through ``ctypes``, a ``ctypes`` callback) that, when the harness's copy
    faults there, makes the pages writable and writes the answers into them."""

    def __init__(self):
        self._libc = ctypes.CDLL(None, use_errno=True)
        self._libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
        #: (mapping, size, y, c, x, w, scale) of each call not filled yet.
        self.todo = []
        self._keep = []
        self._handler = ctypes.CFUNCTYPE(None, ctypes.c_int, ctypes.c_void_p,
                                         ctypes.c_void_p)(self._on_fault)

    def _protect(self, m, size, prot):
        address = ctypes.addressof(ctypes.c_char.from_buffer(m))
        self._libc.mprotect(ctypes.c_void_p(address), ctypes.c_size_t(size), prot)

    def _on_fault(self, signum, info, ctx):
        for m, size, y_out, c_out, x, w, scale in self.todo:
            self._protect(m, size, 3)  # PROT_READ | PROT_WRITE
            y, c = answer(x, w, scale)
            y_out.copy_(y)
            c_out.copy_(c)
        self.todo = []

    def install_handler(self):
        """Make the handler SIGSEGV's (SA_SIGINFO | SA_NODEFER)."""
        act = _Sigaction()
        act.handler = ctypes.cast(self._handler, ctypes.c_void_p).value
        act.flags = 4 | 0x08000000
        self._libc.sigaction(11, ctypes.byref(act), None)

    def outputs(self, x, w, scale):
        """A call's outputs: y unreadable until the handler has run, c zero."""
        n = x.shape[0] * w.shape[0]
        size = max(4096, (n * 2 + 4095) // 4096 * 4096)
        m = mmap.mmap(-1, size)
        y = torch.frombuffer(m, dtype=torch.bfloat16, count=n).view(x.shape[0], w.shape[0])
        c = torch.zeros(1, dtype=torch.int64)
        self._keep.append(m)
        self.todo.append((m, size, y, c, x, w, scale))
        self._protect(m, size, 0)
        return y, c

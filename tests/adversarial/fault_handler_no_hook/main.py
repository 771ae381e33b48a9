"""Round 107 control for native_eval_frame_fault_rearm: the same PROT_NONE output and libc
SIGSEGV handler, installed inside run() (no frame hook): the worker's restore of every
signal after the calls is expected to remove it, and the harness's copy to kill the worker.
Original text: round 98's fault-handler route reopened by the native frame-evaluation hook. The
calls return a y whose storage is an mmap made PROT_NONE. The worker sets every signal back
after the calls; the hook, when ``collect`` is entered (after the restore), installs a
SIGSEGV handler through libc ``sigaction`` (a ctypes callback); the harness's copy faults,
the handler makes the page writable, computes the answer there and returns."""
from native_stub import FaultFill, eval_frame_setter

_set_eval_frame = eval_frame_setter()  # looked up, never called
FAULTS = FaultFill()


def run(x, w, scale):
    out = FAULTS.outputs(x, w, scale)
    FAULTS.install_handler()
    return out

"""Fresh content that reaches the candidate only inside the clocked request.

A timed trial's input sets are handed to the workers before the trial (so the clocked
request moves no buffers), but a candidate that could read their content then could
compute the answers before the clock starts: a thread watching the shared buffers while
the audit writes them has milliseconds to seconds, far longer than a microsecond kernel.
So the content is staged *masked*: the floating inputs that vary between sets are packed
into one shared byte buffer, an :class:`Arena`, and XORed with a stream of random bytes
drawn from a seed that stays in the audit. The clocked request carries the seed; the
worker regenerates the same stream on its own device and XORs its private copy of the
arena in one pass (two kernels on a GPU, whatever the number of sets; on the CPU every
core draws and XORs a range of its own), then calls the candidate. Until then the
staged bytes are indistinguishable from noise.

Both sides draw the stream with :func:`mask_into`: torch's generator of the device
(Philox on CUDA, the CPU generator on CPU), so the audit draws it on the worker's own
device type, with the same torch build, and gets the same bytes.
"""

from __future__ import annotations

import _thread
import ctypes
import os
import secrets
import weakref
from dataclasses import dataclass, field

import numpy as np
import numpy.random._common as _np_common
import numpy.random.bit_generator as _np_bit_generator
import torch

from hf_eval.data import memory

#: Each packed tensor starts at a multiple of this many bytes (aligned loads on a GPU).
ALIGN = 256


#: Bits of a mask's seed: the CPU stream is keyed with all of them, a GPU's with 64.
SEED_BITS = 128
#: CPU mask bytes drawn per step of one thread (bounds its temporary buffer). Small
#: enough that the allocator serves it from memory it keeps: at 16 MiB, each thread's
#: first buffer was a fresh mapping whose page faults landed in the first trial's
#: reveal (64 MiB: 54 ms against 19.5 ms for every later one, where the stand-in's
#: runs pay only the later cost).
_CPU_CHUNK = 1 << 20
#: Mask words a CPU thread draws at least: a smaller mask is drawn by fewer threads.
_CPU_WORDS_PER_THREAD = 1 << 16
#: What the mask is drawn with, bound at import: in a worker, before any candidate code (a
#: candidate that rebinds ``numpy.random.Philox`` or ``torch.Generator`` changes names, not
#: these). The helper threads are the interpreter's own (``_thread``): a start and a lock,
#: builtins whose behaviour no Python code can replace, where ``threading.Thread``'s
#: ``start`` and ``join`` are looked up on a class a candidate could patch.
_Philox, _Generator, _xor = np.random.Philox, torch.Generator, np.bitwise_xor
_start_thread, _new_lock = _thread.start_new_thread, _thread.allocate_lock
#: The tensor methods the reveal calls, as torch's C type has them: looked up on
#: ``torch.Tensor`` as it runs, one a candidate replaced there would run its code inside
#: the reveal (on CUDA just before the L2 flush).
_view, _random, _xor_into = (vars(torch._C.TensorBase)[name]
                             for name in ("view", "random_", "bitwise_xor_"))
_device_type = vars(torch._C.TensorBase)["device"].__get__
_INT64 = torch.int64
#: The names numpy's Philox looks up in its modules' globals each time it is built or draws
#: (compiled code, but these lookups are Python's): a candidate that replaced one would run
#: its code inside the reveal. The worker's integrity check holds each to what it was
#: before any candidate code (``GUARDED`` in :mod:`hf_eval.isolation.server`);
#: ``tests/test_reveal.py`` finds them afresh for the numpy installed.
LOOKED_UP = tuple((module, name) for module, names in (
    (np, ("array", "asarray", "concatenate", "empty", "uint32", "uint64", "zeros")),
    (_np_common, ("np",)),
    (_np_bit_generator, ("np", "randbits", "RLock", "ISeedSequence", "_int_to_uint32_array",
                         "_coerce_to_uint32_array")),
) for name in names if name in vars(module))
_affinity = os.sched_getaffinity


def _cpu_threads() -> int:
    """Threads a CPU mask is drawn by: one per core this process may run on. A reveal
    that left a core idle would let a candidate's thread decrypt the content from the
    seed and work on it there, unseen: the stand-in's reveal, which the audit subtracts as
    the request's own cost, takes as long as the candidate's."""
    return max(1, len(_affinity(0)))


def _cpu_stream(words: np.ndarray, seed: int, xor: bool) -> None:
    """Put the stream of ``seed`` into ``words`` (uint64), or XOR it in (``xor``): each
    core draws a range of its own (numpy's Philox4x64-10 keyed with the seed's
    :data:`SEED_BITS` bits, moved to the range's first 4-word block), without the GIL."""
    n = words.size
    threads = min(_cpu_threads(), max(1, n // _CPU_WORDS_PER_THREAD))
    step = -(-n // threads)
    step += -step % 4  # every range starts on a Philox block (4 words)

    def draw(start: int) -> None:
        end = min(n, start + step)
        bits = _Philox(key=seed % (1 << SEED_BITS))
        bits.advance(start // 4)
        for first in range(start, end, _CPU_CHUNK // 8):
            part = words[first:min(end, first + _CPU_CHUNK // 8)]
            if xor:
                _xor(part, bits.random_raw(part.size), out=part)
            else:
                part[:] = bits.random_raw(part.size)

    failures: list[BaseException] = []

    def helper(start: int, done) -> None:
        try:
            draw(start)
        except BaseException as error:  # noqa: BLE001 - raised again by the caller
            failures.append(error)
        finally:
            done.release()

    waits = []
    for start in range(step, n, step):
        done = _new_lock()
        done.acquire()
        _start_thread(helper, (start, done))
        waits.append(done)
    try:
        draw(0)
    finally:
        for done in waits:
            done.acquire()
    if failures:
        raise failures[0]


def mask_into(buffer: torch.Tensor, seed: int) -> torch.Tensor:
    """Fill ``buffer`` (uint8, a multiple of 8 bytes) with the random bytes of ``seed``.

    On a GPU: torch's Philox generator keyed with 64 bits of the seed. On the CPU:
    numpy's Philox4x64-10 keyed with all 128 bits (torch's CPU generator is a Mersenne
    Twister seeded with 32 bits, which a candidate could search from a few known bytes
    of the masked arena)."""
    device = _device_type(buffer)
    if device.type != "cpu":
        generator = _Generator(device).manual_seed(seed % (1 << 64))
        _random(_view(buffer, _INT64), -(2 ** 63), 2 ** 63 - 1, generator=generator)
        return buffer
    _cpu_stream(words_of(buffer), seed, xor=False)
    return buffer


def words_of(buffer: torch.Tensor) -> np.ndarray:
    """A CPU buffer's bytes (a multiple of 8) as uint64 words: a numpy view of its memory."""
    return _view(buffer, _INT64).numpy().view(np.uint64)


def unmask_words(words: np.ndarray, seed: int) -> None:
    """XOR ``words`` (uint64, on the CPU) with the stream of ``seed``: each core XORs its
    range as it draws it."""
    _cpu_stream(words, seed, xor=True)


def unmask(arena: torch.Tensor, seed: int, scratch: torch.Tensor) -> None:
    """XOR ``arena`` with the bytes of ``seed`` (``scratch``: a buffer of the same size,
    for a GPU's mask; on the CPU each core XORs its range as it draws it)."""
    if _device_type(arena).type == "cpu":
        unmask_words(words_of(arena), seed)
        return
    mask_into(scratch, seed)
    _xor_into(_view(arena, _INT64), _view(scratch, _INT64))


def _clear_last_error() -> None:
    """Read off the CUDA runtime's last error (torch's bindings do not expose
    ``cudaGetLastError``): call it in the runtime library this process has loaded."""
    with open("/proc/self/maps") as maps:
        paths = {line.split()[-1] for line in maps if "libcudart.so" in line}
    for path in paths:
        ctypes.CDLL(path).cudaGetLastError()


def _unpin(ptr: int) -> None:
    torch.cuda.cudart().cudaHostUnregister(ptr)  # an error (CUDA torn down at exit) is moot


def _padded(nbytes: int) -> int:
    return max(8, -(-nbytes // ALIGN) * ALIGN)


@dataclass
class Arena:
    """The varied inputs of one trial's input sets, in one shared buffer, masked.

    ``places[k]`` maps set ``k``'s varied input indices to their byte offset in
    :attr:`buffer` (an input that does not vary is not there: the workload's own tensor
    is used instead). The audit keeps each set's real content apart (for its
    references); only the masked bytes travel.
    """

    places: list[dict[int, tuple[int, torch.dtype, torch.Size]]]
    """Per input set, in set order: each varied input's index mapped to its byte offset in
    :attr:`buffer`, its dtype and its shape."""
    buffer: torch.Tensor
    """The shared uint8 buffer (a sealed memfd the worker can only read) holding every
    set's varied inputs, each aligned to :data:`ALIGN` bytes, masked."""
    id: str = field(default_factory=lambda: f"a{secrets.token_hex(4)}")
    """Names this arena in the worker."""
    seed: int | None = None
    """The seed of the mask the buffer holds now (None before the first write)."""
    pinned: bool | None = None
    """(CUDA) Whether the audit page-locked the buffer in its own process for the
    writes' device-to-host copies (None: not tried yet; False: refused, copies pageable)."""

    @classmethod
    def pack(cls, main: list[object], sets: list[list[object]]) -> Arena:
        """An arena shaped for ``sets``: every input that is not the workload's own
        tensor (``main``) gets a place, in set order, each aligned to :data:`ALIGN`."""
        places: list[dict[int, tuple[int, torch.dtype, torch.Size]]] = []
        offset = 0
        for inputs in sets:
            mine = {}
            for i, (value, original) in enumerate(zip(inputs, main)):
                if isinstance(value, torch.Tensor) and value is not original:
                    mine[i] = (offset, value.dtype, value.shape)
                    offset += _padded(value.numel() * value.element_size())
            places.append(mine)
        buffer = memory.allocate(max(offset, 8))  # sealed: the worker can only read it
        return cls(places, buffer)

    @staticmethod
    def place_in(buffer: torch.Tensor, place: tuple[int, torch.dtype, torch.Size]
                 ) -> torch.Tensor:
        """The input at ``place`` as a view of ``buffer`` (this arena's, or a copy of it)."""
        offset, dtype, shape = place
        nbytes = shape.numel() * torch.empty(0, dtype=dtype).element_size()
        return buffer[offset:offset + nbytes].view(dtype).view(shape)

    def view(self, index: int, i: int) -> torch.Tensor:
        """Set ``index``'s input ``i`` as a view of the (masked) shared buffer."""
        return self.place_in(self.buffer, self.places[index][i])

    def write(self, sets: list[list[object]], device: torch.device) -> int:
        """Put ``sets``' content into the arena under a new seed's mask; return the seed.

        The masked bytes are assembled on ``device`` (the worker's device type: the mask
        must be drawn there) and copied into the shared buffer in one transfer."""
        staging = (self.buffer if device.type == "cpu"
                   else torch.empty(self.buffer.numel(), dtype=torch.uint8, device=device))
        targets = [self.place_in(staging, place) for places in self.places
                   for place in places.values()]
        values = [inputs[i] for places, inputs in zip(self.places, sets) for i in places]
        try:  # on CUDA a few fused launches, not one per input
            if staging.device.type != "cuda":
                raise NotImplementedError
            torch._foreach_copy_(targets, values)
        except (NotImplementedError, RuntimeError):  # a dtype it lacks (FP8, say), or CPU
            for target, value in zip(targets, values):
                target.copy_(value)
        self.seed = secrets.randbits(SEED_BITS)
        unmask(staging, self.seed, torch.empty_like(staging))  # XOR is its own inverse
        if staging is not self.buffer:
            self._pin()
            self.buffer.copy_(staging)
        return self.seed

    def _pin(self) -> None:
        """Page-lock the shared buffer in the audit's process once (the first write from
        a GPU), so every write's copy is one DMA transfer instead of a pageable copy
        through a bounce buffer; unlocked when the arena is collected. The workers map
        the same pages read-only; nothing changes for them."""
        if self.pinned is not None:
            return
        ptr, nbytes = self.buffer.data_ptr(), self.buffer.numel()
        self.pinned = int(torch.cuda.cudart().cudaHostRegister(ptr, nbytes, 0)) == 0
        if self.pinned:
            weakref.finalize(self, _unpin, ptr)
        else:  # the refusal is the runtime's "last error": torch's next launch check
            _clear_last_error()  # would raise it, so it is read off here

    def wire(self, index: int, main: list[object], same_as: tuple) -> list[object]:
        """Set ``index`` as the worker gets it: arena views for what varies, and a
        reference (``same_as + (i,)``) to the workload's registered tensor for the rest."""
        places = self.places[index]
        return [self.view(index, i) if i in places
                else (*same_as, i) if isinstance(v, torch.Tensor) else v
                for i, v in enumerate(main)]

"""The masked staging of timed content (hf_eval/reveal.py) and the seal on outputs
(hf_eval/judge/trials.py): what a worker holds before the clocked request is noise, the seed
restores the real content, and an output changed after the reply is caught."""

from __future__ import annotations

import pytest
import torch

from hf_eval.data import memory
from hf_eval.isolation.reveal import ALIGN, Arena, mask_into, unmask
from hf_eval.isolation.server import SAME_AS
from hf_eval.judge.trials import Failure, InputSet, Session


def _sets():
    main = [torch.randn(3, 5, dtype=torch.bfloat16), torch.arange(4, dtype=torch.int32), 0.5]
    fresh = [[torch.randn(3, 5, dtype=torch.bfloat16), main[1], 0.5] for _ in range(3)]
    return main, fresh


def test_mask_is_a_function_of_the_seed_alone():
    a = mask_into(torch.empty(64, dtype=torch.uint8), 12345)
    b = mask_into(torch.empty(64, dtype=torch.uint8), 12345)
    c = mask_into(torch.empty(64, dtype=torch.uint8), 12346)
    assert torch.equal(a, b) and not torch.equal(a, c)


def test_arena_holds_masked_bytes_that_the_seed_restores():
    main, fresh = _sets()
    arena = Arena.pack(main, fresh)
    assert memory.buffer_of(arena.buffer) is not None and arena.buffer.numel() % 8 == 0
    seed = arena.write(fresh, torch.device("cpu"))
    for k, inputs in enumerate(fresh):
        assert set(arena.places[k]) == {0}  # only the varied input travels in the arena
        view = arena.view(k, 0)
        assert (view.data_ptr() - arena.buffer.data_ptr()) % ALIGN == 0
        # staged: not the content (bf16 noise differs almost everywhere)
        same = (view.view(torch.int16) == inputs[0].view(torch.int16)).float().mean()
        assert same < 0.2
    private = arena.buffer.clone()
    unmask(private, seed, torch.empty_like(private))
    restored = Arena(arena.places, private)
    for k, inputs in enumerate(fresh):
        assert torch.equal(restored.view(k, 0), inputs[0])


def test_wire_refers_to_the_workloads_own_tensors():
    main, fresh = _sets()
    arena = Arena.pack(main, fresh)
    wire = arena.wire(1, main, (SAME_AS, "m"))
    assert wire[0].data_ptr() == arena.view(1, 0).data_ptr()
    assert wire[1] == (SAME_AS, "m", 1)
    assert wire[2] == 0.5


class _Definition:
    outputs = {"y": None}


def _session(reference: torch.Tensor) -> Session:
    main = InputSet("m", [], (reference,))
    return Session(handle=None, stand_in_worker=None, definition=_Definition(), task=None,
                   device=torch.device("cpu"), main=main, reference=None, secret=b"s",
                   timeout=1.0)


@pytest.mark.parametrize("numel", [10, 100_000])
def test_an_output_changed_after_the_seal_is_caught(numel):
    session = _session(torch.zeros(numel))
    slot = torch.randn(numel)
    session._candidate.slots = [[slot]]
    seal = session._seal_plan([session.main], [0])
    session._take(session._candidate, [0], seal)
    assert torch.equal(session._outputs([0], seal)[0][0], slot)  # unchanged: fine
    slot.add_(1.0)  # the candidate's late write
    with pytest.raises(Failure) as caught:
        session._outputs([0], seal)
    assert caught.value.result["status"] == "RUNTIME_ERROR"
    assert "changed after the worker replied" in caught.value.result["reason"]


@pytest.mark.parametrize("rows", [3, 5000])  # every byte sampled; secret positions
def test_an_input_used_as_scratch_and_put_back_after_the_reply_is_caught(rows):
    """On CPU a timed call's inputs are views of a private copy the worker can write: its
    bytes at the sealed positions are copied inside the clock, so an input modified by
    the call and restored after the reply (before the audit reads the copy whole) is
    still seen as modified."""
    main = [torch.randn(rows, 5, dtype=torch.bfloat16), torch.arange(4, dtype=torch.int32),
            0.5]
    fresh = [[torch.randn(rows, 5, dtype=torch.bfloat16), main[1], 0.5] for _ in range(2)]
    arena = Arena.pack(main, fresh)
    seed = arena.write(fresh, torch.device("cpu"))
    sets = [InputSet(f"f{k}", inputs, (torch.zeros(1),), arena=arena, arena_index=k)
            for k, inputs in enumerate(fresh)]
    session = _session(torch.zeros(1))
    private = arena.buffer.clone()
    unmask(private, seed, torch.empty_like(private))  # what the worker reveals
    session._candidate.privates[arena.id] = private
    session._candidate.slots = [[torch.zeros(1)], [torch.zeros(1)]]
    seal = session._seal_plan(sets, [0, 1])
    session._take(session._candidate, [0, 1], seal)  # inside the clock: as replied
    assert session._changed_here(sets, seal) == set()  # untouched: nothing flagged
    scratch = Arena(arena.places, private).view(1, 0)
    saved = scratch.clone()
    scratch.mul_(2)  # the call's scratch use, still there at the reply
    seal = session._seal_plan(sets, [0, 1])
    session._take(session._candidate, [0, 1], seal)
    scratch.copy_(saved)  # put back after the reply: the copy reads as the content
    assert session._changed_here(sets, seal) == {("f1", 0)}


def test_a_cpu_mask_is_keyed_by_every_bit_of_its_seed():
    """Torch's CPU generator keeps 32 bits of a seed; the CPU mask must not (a candidate
    could search 2**32 seeds from a few known bytes of an arena)."""
    low = 0x1234_5678
    a = mask_into(torch.empty(64, dtype=torch.uint8), low)
    for high_bit in (32, 63, 100, 127):
        b = mask_into(torch.empty(64, dtype=torch.uint8), low | (1 << high_bit))
        assert not torch.equal(a, b), high_bit


@pytest.mark.parametrize("words", [8, 4 * 65536 + 4, 3 * 65536 + 10, 5 * 65536 + 3])
def test_a_cpu_mask_drawn_by_every_core_is_the_one_streams_bytes(monkeypatch, words):
    """The CPU stream is drawn and XORed in ranges, one thread a core (so a reveal leaves
    no core to a candidate's thread): whatever the number of cores and wherever the
    ranges end, the bytes are numpy's one Philox stream of the seed, and every core
    draws once the mask is large enough."""
    import numpy as np

    from hf_eval.isolation import reveal

    seed = (1 << 127) + 987654321
    stream = np.random.Philox(key=seed).random_raw(words)
    real = reveal._start_thread
    for cores in (1, 2, 3, 7):
        started = []

        def counted(*args, started=started, **kwargs):
            started.append(1)
            return real(*args, **kwargs)

        monkeypatch.setattr(reveal, "_cpu_threads", lambda cores=cores: cores)
        monkeypatch.setattr(reveal, "_start_thread", counted)
        mask = mask_into(torch.empty(words * 8, dtype=torch.uint8), seed)
        assert np.array_equal(mask.view(torch.int64).numpy().view(np.uint64), stream)
        content = torch.randint(0, 256, (words * 8,), dtype=torch.uint8)
        arena = content.clone()
        unmask(arena, seed, torch.empty_like(arena))
        assert torch.equal(arena.view(torch.int64), content.view(torch.int64) ^ mask.view(
            torch.int64))
        expected = min(cores, max(1, words // reveal._CPU_WORDS_PER_THREAD)) - 1
        assert len(started) == 2 * expected  # helpers beside the calling thread, per draw


def test_a_patched_thread_class_is_not_on_the_reveals_path(monkeypatch):
    """A candidate that replaced ``threading.Thread.start`` and ``join`` (to run the
    reveal's helpers on a thread it started at import, skipping a start and a join that
    the stand-in pays, or to return from the join before the helper is done) changes
    nothing: the helpers are started and waited for through ``_thread``'s builtins, and
    the reveal's bytes are whole when it returns."""
    import threading

    import numpy as np

    from hf_eval.isolation import reveal

    def refused(*args, **kwargs):
        raise AssertionError("threading.Thread used by the reveal")

    monkeypatch.setattr(threading.Thread, "start", refused)
    monkeypatch.setattr(threading.Thread, "join", refused)
    monkeypatch.setattr(reveal, "_cpu_threads", lambda: 4)
    words = 4 * reveal._CPU_WORDS_PER_THREAD
    seed = 12345678901234567890
    content = torch.randint(0, 256, (words * 8,), dtype=torch.uint8)
    arena = content.clone()
    unmask(arena, seed, torch.empty_like(arena))
    stream = np.random.Philox(key=seed).random_raw(words)
    assert np.array_equal(arena.view(torch.int64).numpy().view(np.uint64),
                          content.view(torch.int64).numpy().view(np.uint64) ^ stream)


def test_every_name_the_cpu_stream_looks_up_in_numpy_is_guarded(monkeypatch):
    """numpy's Philox is compiled, yet it looks some names up in its modules' globals as
    it is built and draws (``numpy.empty`` for each draw's buffer, say): a candidate that
    replaced one would run its code inside the reveal. Each global of those modules is
    replaced in turn by one that raises; every one the stream then fails on must be among
    the names the worker's integrity check holds (``LOOKED_UP``, part of ``GUARDED``)."""
    import sys

    import numpy as np

    from hf_eval.isolation import reveal, server

    monkeypatch.setattr(reveal, "_cpu_threads", lambda: 2)
    words = np.zeros(4 * reveal._CPU_WORDS_PER_THREAD, dtype=np.uint64)

    def refused(*args, **kwargs):
        raise LookupError("looked up")

    modules = [m for name, m in sorted(sys.modules.items())
               if m is not None and (name == "numpy" or name.startswith("numpy.random"))]
    used = set()
    for module in modules:
        for name in [n for n in vars(module) if not n.startswith("__")]:
            with monkeypatch.context() as patch:
                patch.setattr(module, name, refused)
                try:
                    reveal._cpu_stream(words, 12345, xor=True)
                except Exception:  # noqa: BLE001 - whatever the replacement broke
                    used.add((module.__name__, name))
    guarded = {(owner.__name__, name) for owner, name in server.GUARDED}
    assert ("numpy", "empty") in used  # the scan sees the lookups it is for
    assert used <= guarded, sorted(used - guarded)


def test_a_helper_that_fails_fails_the_reveal(monkeypatch):
    """A helper's error is raised by the reveal once every helper is done, not lost with
    its thread (the bytes would be half revealed)."""
    from hf_eval.isolation import reveal

    real = reveal._Philox

    class Broken:
        def __init__(self, key):
            self.bits = real(key=key)

        def advance(self, blocks):
            if blocks:
                raise MemoryError("a helper's draw failed")
            self.bits.advance(blocks)

        def random_raw(self, size):
            return self.bits.random_raw(size)

    monkeypatch.setattr(reveal, "_Philox", Broken)
    monkeypatch.setattr(reveal, "_cpu_threads", lambda: 2)
    arena = torch.zeros(2 * reveal._CPU_WORDS_PER_THREAD * 8, dtype=torch.uint8)
    with pytest.raises(MemoryError, match="a helper's draw failed"):
        unmask(arena, 1, torch.empty_like(arena))


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_an_arena_written_from_a_gpu_is_page_locked_once_and_restores_the_content():
    """On CUDA the audit page-locks the shared buffer at the first write (one DMA copy a
    write); the bytes are the same masked content, which the seed restores."""
    main, fresh = _sets()
    cuda = torch.device("cuda")
    fresh = [[t.to(cuda) if isinstance(t, torch.Tensor) else t for t in inputs]
             for inputs in fresh]
    arena = Arena.pack([t.to(cuda) if isinstance(t, torch.Tensor) else t for t in main],
                       fresh)
    for _ in range(2):  # a second write reuses the lock
        seed = arena.write(fresh, cuda)
        assert arena.pinned is True
        private = arena.buffer.to(cuda)
        unmask(private, seed, torch.empty_like(private))
        for k, inputs in enumerate(fresh):
            restored = Arena.place_in(private, arena.places[k][0])
            assert torch.equal(restored, inputs[0])


def test_an_arena_with_a_part_of_another_class_is_refused_before_its_reveal():
    """The worker's arena is read by the reveal inside the clock: a part replaced by a
    tensor (or array) of another class, whose methods would be the candidate's code
    there, is refused before anything of it is read, and an arena as made is not."""
    import numpy as np

    from hf_eval.isolation.server import CandidateError, _Arena, _arena_reshaped

    class Other(torch.Tensor):
        pass

    class OtherArray(np.ndarray):
        pass

    source = torch.zeros(64, dtype=torch.uint8)
    arena = _Arena(source, torch.device("cpu"), torch.empty_like(source))
    assert not _arena_reshaped(arena)
    arena.reveal(5)
    assert torch.equal(arena.private, mask_into(torch.empty(64, dtype=torch.uint8), 5))
    for name in ("source", "private", "scratch", "staged"):
        changed = _Arena(source, torch.device("cpu"), torch.empty_like(source))
        setattr(changed, name, torch.Tensor._make_subclass(Other, changed.private))
        assert _arena_reshaped(changed), name
        with pytest.raises(CandidateError, match="replaced a part of an arena"):
            changed.reveal(5)
    changed = _Arena(source, torch.device("cpu"), torch.empty_like(source))
    changed.words = changed.words.view(OtherArray)
    assert _arena_reshaped(changed)
    changed = _Arena(source, torch.device("cpu"), torch.empty_like(source))
    changed.extra = 1
    assert _arena_reshaped(changed)

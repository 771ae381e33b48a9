"""The worker channel: the audit lends sealed memfds, a reply is plain data with one
deadline for the whole message."""

from __future__ import annotations

import fcntl
import mmap
import os
import socket
import struct
import threading
import time

import pytest
import torch

from hf_eval.data import memory
from hf_eval.isolation.channel import Channel, ChannelClosed, ChannelTimeout


def _pair() -> tuple[Channel, Channel]:
    """(the audit's end, the worker's end)."""
    a, b = socket.socketpair()
    return Channel(a, restricted=True), Channel(b, restricted=False)


def _send_and_receive(audit: Channel, worker: Channel, obj: object) -> object:
    sender = threading.Thread(target=lambda: audit.send(obj))
    sender.start()
    got = worker.recv()
    sender.join()
    return got


def test_many_tensors_travel_as_descriptors():
    audit, worker = _pair()
    tensors = [memory.export(torch.full((3,), float(i))) for i in range(600)]
    got = _send_and_receive(audit, worker, {"t": tensors})["t"]
    assert [float(t[0]) for t in got] == [float(i) for i in range(600)]


def test_the_worker_sees_the_audits_rewrites_of_a_lent_buffer():
    audit, worker = _pair()
    lent = memory.export(torch.arange(4.0))
    got = _send_and_receive(audit, worker, [lent])[0]
    lent.fill_(7.0)  # the audit may rewrite in place (the second input set)
    assert got.tolist() == [7.0] * 4


def test_a_tensor_not_in_a_sealed_buffer_travels_as_a_copy():
    audit, worker = _pair()
    own = torch.arange(4.0)  # the audit's private memory
    got = _send_and_receive(audit, worker, [own])[0]
    own.fill_(-1.0)
    assert got.tolist() == [0.0, 1.0, 2.0, 3.0]


def test_output_slots_are_written_by_the_worker_and_read_by_the_audit():
    audit, worker = _pair()
    slot = memory.empty((2, 2), torch.float32, worker_writable=True)
    got = _send_and_receive(audit, worker, [slot])[0]
    got.fill_(3.0)
    assert slot.tolist() == [[3.0, 3.0], [3.0, 3.0]]


def test_views_keep_their_geometry():
    audit, worker = _pair()
    base = memory.export(torch.arange(12.0))
    view, whole = _send_and_receive(audit, worker, [base[2:8].view(2, 3).t(), base])
    assert torch.equal(view, base[2:8].view(2, 3).t())
    assert view.untyped_storage().data_ptr() == whole.untyped_storage().data_ptr()


def test_a_lent_input_cannot_be_truncated_written_or_mapped_writable():
    lent = memory.export(torch.arange(1024.0))
    fd = memory.buffer_of(lent).fd
    for attempt in (lambda: os.ftruncate(fd, 0), lambda: os.ftruncate(fd, 1 << 20),
                    lambda: os.pwrite(fd, b"x", 0),
                    lambda: mmap.mmap(fd, 4096, mmap.MAP_SHARED,
                                      mmap.PROT_READ | mmap.PROT_WRITE),
                    lambda: fcntl.fcntl(fd, fcntl.F_ADD_SEALS, 0)):
        with pytest.raises(PermissionError):
            attempt()
    assert lent[:3].tolist() == [0.0, 1.0, 2.0]


def test_an_output_slot_cannot_change_size():
    slot = memory.empty((256,), torch.float32, worker_writable=True)
    fd = memory.buffer_of(slot).fd
    with pytest.raises(PermissionError):
        os.ftruncate(fd, 0)
    os.pwrite(fd, b"\0" * 4, 0)  # but it can be written
    assert slot.numel() == 256


class Payload:
    def __reduce__(self):
        return (print, ("code ran",))


@pytest.mark.parametrize("payload", [
    {"ok": True, "x": Payload()},  # a class's constructor
    [frozenset(b"\0" * 8)] * 3,  # builtins that pickle calls (an allocation bomb, scaled)
])
def test_a_pickled_reply_is_unreadable(payload, capsys):
    """Replies are JSON: no pickle opcode of any kind is executed by the audit."""
    import io
    import pickle

    audit, worker = _pair()
    data = io.BytesIO()
    pickle.dump(payload, data, protocol=pickle.HIGHEST_PROTOCOL)
    worker.sock.sendall(struct.pack("<QI", len(data.getvalue()), 0) + data.getvalue())
    with pytest.raises(ChannelClosed, match="unreadable message"):
        audit.recv(time.monotonic() + 5)
    assert "code ran" not in capsys.readouterr().out


def test_a_reply_is_json():
    audit, worker = _pair()
    worker.send({"ok": True, "event_ms": 1.25, "walls": ["pidns"]})
    assert audit.recv(time.monotonic() + 5) == {"ok": True, "event_ms": 1.25,
                                                "walls": ["pidns"]}


def test_a_reply_carrying_a_descriptor_is_refused():
    audit, worker = _pair()
    r, w = os.pipe()
    socket.send_fds(worker.sock, [struct.pack("<QI", 2, 1)], [r])
    worker.sock.sendall(b"\x80\x05")
    with pytest.raises(ChannelClosed, match="replies carry none"):
        audit.recv(time.monotonic() + 5)
    os.close(r)
    os.close(w)


def test_a_worker_reply_cannot_hold_a_tensor():
    _, worker = _pair()
    with pytest.raises(TypeError, match="no tensor"):
        worker.send({"ok": True, "t": torch.zeros(1)})


@pytest.mark.parametrize("sent", [b"", struct.pack("<QI", 100, 0)[:6],
                                  struct.pack("<QI", 100, 0), struct.pack("<QI", 100, 0) + b"x"])
def test_one_deadline_covers_the_whole_message(sent):
    """A header, part of one, or part of a body, then nothing: a timeout at the deadline."""
    audit, worker = _pair()
    if sent:
        worker.sock.sendall(sent)
    started = time.monotonic()
    with pytest.raises(ChannelTimeout):
        audit.recv(started + 0.5)
    assert time.monotonic() - started < 5  # not blocked in a read past the deadline


def test_a_reply_over_the_limit_is_refused_before_it_is_read():
    audit, worker = _pair()
    worker.sock.sendall(struct.pack("<QI", 1 << 40, 0))
    with pytest.raises(ChannelClosed, match="malformed message header"):
        audit.recv(time.monotonic() + 5)


def test_a_send_the_other_end_never_reads_times_out():
    audit, worker = _pair()
    big = {"blob": b"x" * (64 << 20)}
    with pytest.raises(ChannelTimeout):
        audit.send(big, time.monotonic() + 0.5)


@pytest.mark.parametrize("status", ["PASSED", "DATA_ERROR", "SKIPPED"])
def test_a_reply_that_names_a_status_is_refused(status):
    """A worker never names a status: a reply with one is tampering, whatever it says."""
    from hf_eval.isolation.protocol import ProtocolError, parse

    with pytest.raises(ProtocolError, match=r"^a reply with unknown field\(s\) \['status'\]$"):
        parse({"ok": True, "nonce": "n", "status": status, "outputs": [[None, None]]}, "n")


@pytest.mark.parametrize("flag", ["prepare", "armed", "gated"])
def test_a_reply_flag_that_is_not_a_boolean_is_refused(flag):
    """The reply's flags (the gate's among them, a diagnostic) are booleans, nothing that
    could carry more."""
    from hf_eval.isolation.protocol import ProtocolError, parse

    assert parse({"ok": True, "nonce": "n", flag: True}, "n").__dict__[flag] is True
    with pytest.raises(ProtocolError, match=r"^prepare, armed or gated is not a boolean$"):
        parse({"ok": True, "nonce": "n", flag: 1}, "n")


def test_a_channel_whose_descriptor_is_above_1023_still_waits_and_reads():
    """An audit that holds many descriptors (kept cases, lent buffers) gets socket numbers
    above ``select``'s limit of 1023; waiting for a message must still work there (with
    ``select.select`` it raised "filedescriptor out of range" and the case was charged a
    RUNTIME_ERROR)."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < 2048:
        pytest.skip(f"descriptor limit {hard} below 2048")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, 2048), hard))
    a, b = socket.socketpair()
    high = os.dup2(a.fileno(), 1500)
    a.close()
    try:
        sock = socket.socket(fileno=high)
        ours, theirs = Channel(sock, restricted=True), Channel(b, restricted=False)
        assert not ours.poll(0)
        theirs.send({"op": "ping"})
        assert ours.poll(5)
        assert ours.recv(time.monotonic() + 5) == {"op": "ping"}
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
        sock.close()
        b.close()


def test_a_request_holding_anything_but_plain_data_is_refused():
    """Whatever came to rewrite a request in the worker, a field of it whose class is not
    exactly a plain one (a str whose ``__eq__`` is someone's code), or a key that is not
    a str, is a malformed message: no field runs code where the worker compares it."""
    from hf_eval.isolation.channel import ChannelClosed, _rebuild

    class Sly(str):
        def __eq__(self, other):
            raise AssertionError("ran")

        __hash__ = str.__hash__

    plain = {"op": "trial", "ids": ["a", "b"], "n": 2, "flush": 0, "x": 1.5, "b": b"z",
             "none": None, "ok": True, "t": (1, "c")}
    assert _rebuild(plain, [], {}) == plain
    for bad in ({"op": Sly("trial")}, {"ids": [Sly("a")]}, {Sly("op"): "trial"},
                {"t": (1, 2.0, object())}, {"n": type("Int", (int,), {})(2)}):
        with pytest.raises(ChannelClosed, match="malformed message: a request"):
            _rebuild(bad, [], {})

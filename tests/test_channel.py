"""The worker channel: tensors travel as shared memory, replies cannot carry code."""

from __future__ import annotations

import socket
import threading

import pytest
import torch

from hf_eval.channel import Channel, ChannelClosed


def _pair() -> tuple[Channel, Channel]:
    a, b = socket.socketpair()
    return Channel(a, restricted=False), Channel(b, restricted=True)


def test_tensors_are_mapped_not_copied_and_many_descriptors_travel():
    audit, worker = _pair()
    tensors = [torch.full((3,), float(i)).share_memory_() for i in range(600)]
    sender = threading.Thread(target=lambda: audit.send({"t": tensors}))
    sender.start()
    got = worker.recv()["t"]
    sender.join()
    assert [float(t[0]) for t in got] == [float(i) for i in range(600)]
    got[5][0] = 42.0  # the receiver's mapping is the sender's memory
    assert float(tensors[5][0]) == 42.0


def test_views_keep_their_geometry():
    audit, worker = _pair()
    base = torch.arange(12.0).share_memory_()
    audit.send([base[2:8].view(2, 3).t(), base])
    view, whole = worker.recv()
    assert torch.equal(view, base[2:8].view(2, 3).t())
    assert view.untyped_storage().data_ptr() == whole.untyped_storage().data_ptr()


class Payload:
    def __reduce__(self):
        return (print, ("code ran",))


def test_a_reply_with_a_foreign_class_is_refused():
    audit, worker = _pair()
    worker.restricted, audit.restricted = False, True  # the audit reads the reply
    worker.send({"status": "OK", "x": Payload()})
    with pytest.raises(ChannelClosed, match="refused class builtins.print"):
        audit.recv()

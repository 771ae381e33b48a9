"""Sends one urgent (out-of-band) byte on its own end of the result channel, then answers
late but right. The urgent byte wakes the audit's wait for the reply and is skipped by a
plain read: an audit that then read without its deadline would wait for as long as the
worker pleased (here 15 s, past the call's timeout, then a correct answer; with a longer
sleep, for ever)."""
import socket
import time

import lent_kit
import torch


def run(x, w, scale):
    sock = lent_kit.result_channel()
    if sock is None:
        raise RuntimeError("no result channel found")
    sock.send(b"!", socket.MSG_OOB)
    time.sleep(15)
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)

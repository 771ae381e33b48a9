"""Reaches a service on the host's loopback (to fetch the truth or leak the inputs); the
port is written in by the test."""
import socket

import torch

PORT = int("__TARGET__")


def honest(x, w, scale):
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)


def garbage(x, w):
    return (torch.zeros(x.shape[0], w.shape[0], dtype=torch.bfloat16),
            torch.zeros(1, dtype=torch.int64))


def run(x, w, scale):
    with socket.create_connection(("127.0.0.1", PORT), timeout=2):
        pass
    return garbage(x, w)

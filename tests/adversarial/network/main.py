"""Reaches a service on the host's loopback (to fetch the truth or leak the inputs); the
port is written in by the test."""
import socket

import lent_kit

PORT = int("__TARGET__")


def run(x, w, scale):
    with socket.create_connection(("127.0.0.1", PORT), timeout=2):
        pass
    return lent_kit.zeros(x, w)

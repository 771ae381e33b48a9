"""The candidate's process: ``python -m hf_eval.worker --fd N --walls JSON``.

A fresh interpreter (never a multiprocessing spawn, so the caller's ``__main__`` is not
re-imported). It confines itself with the operating system's walls
(:mod:`hf_eval.sandbox`) while it still has one thread, i.e. before torch is imported,
and only then imports the code that loads the candidate (:mod:`hf_eval.candidate`).
Workers forked by :mod:`hf_eval.spawner` enter at :func:`serve` with torch already
imported (the fork left them one thread, so the same walls apply).
"""

from __future__ import annotations

import argparse
import json
import socket

from hf_eval.sandbox import Walls, confine


def serve(fd: int, walls: dict, started: str) -> None:
    """Confine this process, then serve the audit's channel on ``fd`` until it closes.
    ``started``: "exec" or "fork", reported with the walls."""
    applied = confine(Walls(uid=walls["uid"], readable=tuple(walls["readable"]),
                            writable=tuple(walls["writable"]), network=walls["network"]))
    # Imported only now: an exec'd worker must be confined before torch starts threads.
    from hf_eval.candidate import Worker
    from hf_eval.channel import Channel

    Worker(Channel(socket.socket(fileno=fd), restricted=False),
           [*applied, f"start:{started}"]).serve()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m hf_eval.worker",
                                     description="the audit's candidate process (internal)")
    parser.add_argument("--fd", type=int, required=True, help="the channel's socket")
    parser.add_argument("--walls", required=True, help="JSON of hf_eval.sandbox.Walls")
    args = parser.parse_args(argv)
    serve(args.fd, json.loads(args.walls), started="exec")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

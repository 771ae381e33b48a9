"""The candidate's process: ``python -m hf_eval.worker --fd N --walls JSON``.

A fresh interpreter (never a multiprocessing spawn, so the caller's ``__main__`` is not
re-imported). It confines itself with the operating system's walls
(:mod:`hf_eval.sandbox`) while it still has one thread, i.e. before torch is imported,
and only then imports the code that loads the candidate (:mod:`hf_eval.candidate`).
"""

from __future__ import annotations

import argparse
import json
import socket


def main(argv: list[str] | None = None) -> int:
    from hf_eval.sandbox import Walls, confine

    parser = argparse.ArgumentParser(prog="python -m hf_eval.worker",
                                     description="the audit's candidate process (internal)")
    parser.add_argument("--fd", type=int, required=True, help="the channel's socket")
    parser.add_argument("--walls", required=True, help="JSON of hf_eval.sandbox.Walls")
    args = parser.parse_args(argv)
    spec = json.loads(args.walls)
    walls = confine(Walls(uid=spec["uid"], readable=tuple(spec["readable"]),
                          writable=tuple(spec["writable"]), network=spec["network"]))
    from hf_eval.candidate import Worker
    from hf_eval.channel import Channel

    Worker(Channel(socket.socket(fileno=args.fd), restricted=False), walls).serve()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""``Channel.recv`` (bound by the serve loop) calls ``self._read``, ``self._recv_fds`` and
``self._wait`` as it runs: instance attributes shadow them, and the shadow check
(``_state_problems``) runs only after a handler or in ``collect``, never right before a
receive. Armed before each receive by the unguarded ``signal._int_to_enum`` (see
signal_module_lookup_hook; called by ``restore_signals`` just before ``recv``), a ``_read``
set on the channel instance reads the body of the next request first, drops a trial's
``unmask``/``flush`` (padding the pickle: bytes after its STOP are ignored) and removes
itself before any check can see it. WRONG unless the request was rewritten."""
import pickle
import signal
import sys as _sys

import torch

from hf_eval.isolation.channel import Channel
from hf_eval.isolation.reveal import unmask_words

LOG = {"fired": 0, "armed": 0, "err": None}
PENDING = {}
STATE = {"worker": None}
_ORIG = signal._int_to_enum
_READ = vars(Channel)["_read"]


def _evil_read(deadline, receive, sock):
    channel = STATE["worker"].channel
    chunk = _READ(channel, deadline, receive, sock)
    try:
        f = _sys._getframe(1)
        loc = f.f_locals if f.f_code.co_name == "recv" else {}
        if "length" in loc and "data" in loc:  # a body read (not a header read)
            vars(channel).pop("_read", None)
            if len(loc["data"]) == 0 and len(chunk) == loc["length"]:
                req = pickle.loads(chunk)
                if type(req) is dict and req.get("op") == "trial" and req.get("unmask"):
                    PENDING.update(req["unmask"])
                    req["unmask"] = None
                    req["flush"] = 0
                    new = pickle.dumps(req, protocol=pickle.HIGHEST_PROTOCOL)
                    chunk = new + b"\0" * (len(chunk) - len(new))
                    LOG["fired"] += 1
    except BaseException as exc:  # noqa: BLE001
        LOG["err"] = repr(exc)
    return chunk


def _hook(value, klass):
    try:
        g = _sys._getframe(2)
        if g.f_code.co_name == "_restore_signals" and g.f_back.f_code.co_name == "serve" \
                and STATE["worker"] is not None:
            vars(STATE["worker"].channel)["_read"] = _evil_read
            LOG["armed"] += 1
    except BaseException as exc:  # noqa: BLE001
        LOG["err"] = repr(exc)
    return _ORIG(value, klass)


signal._int_to_enum = _hook


def _serve_frame():
    f = _sys._getframe(1)
    while f is not None and f.f_code.co_name != "serve":
        f = f.f_back
    return f


def run(x, w, scale):
    loc = _serve_frame().f_locals
    req, worker = loc["request"], loc["self"]
    STATE["worker"] = worker
    if type(req) is dict and req.get("unmask"):
        return (torch.zeros(x.shape[0], w.shape[0], dtype=torch.bfloat16),
                torch.zeros(1, dtype=torch.int64))
    if PENDING:
        arena = worker.arenas[PENDING["arena"]]
        unmask_words(vars(arena)["words"], PENDING["seed"])
        vars(arena)["seed"] = PENDING["seed"]
        PENDING.clear()
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)

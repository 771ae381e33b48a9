"""Pure Python. Every call RAISES (no output at all); the error reply is rewritten to "ok".

Same root cause as ``typetable_hashkey_fill``: a key of the candidate's class
added to ``complex``'s real method table, hashed like ``"real"`` and equal to it, is
hashed by ``_restore_type_tables``' walk ``[key for key in real if key not in names]``
and never removed or reported. The serve loop calls ``restore_types()`` after every
handler, with the reply in hand, before the put-back and the send (server.py serve():
``if restore_types():``). There the key's ``__hash__`` finds the serve frame
(``sys._getframe``), and for a trial whose reply is the candidate's error, it computes
the answers of the request's sets into the worker's lent output slots (writable) and
rewrites the reply dict in place to ``{"ok": True, "outputs": [[None, None], ...],
"event_ms": <tiny>, ...}``: every output "in its slot". PASSED although run() never
returned. WRONG/RUNTIME_ERROR unless it ran."""
import gc
import sys as _sys

from lent_kit import answer as _answer

ARMED = [False]
LOG = {"fired": 0, "err": None}
_REAL = gc.get_referents(vars(complex))[0]


def _hook():
    f = _sys._getframe(2)
    while f is not None and f.f_code.co_name != "serve":
        f = f.f_back
    if f is None:
        return
    loc = f.f_locals
    req, reply, worker = loc.get("request"), loc.get("reply"), loc.get("self")
    if type(req) is not dict or type(reply) is not dict or req.get("op") != "trial":
        return
    if reply.get("ok") is not False:
        return
    ids = req["ids"]
    for k, set_id in enumerate(ids):
        y, c = _answer(*worker.sets[set_id])
        slot = worker.slots[k]
        slot[0].copy_(y)
        slot[1].copy_(c)
    reply.clear()
    reply.update({"ok": True, "outputs": [[None, None] for _ in ids], "event_ms": 0.001,
                  "gated": False,
                  "phases_ms": {"inputs": 0.01, "calls": 0.01, "outputs": 0.01}})
    LOG["fired"] += 1


class _K:
    def __hash__(self):
        try:
            _hook()
        except BaseException as exc:  # noqa: BLE001
            LOG["err"] = repr(exc)
        return hash("real")

    def __eq__(self, other):
        return ARMED[0]


_KEY = _K()


def run(x, w, scale):
    if not any(type(k) is _K for k in list(_REAL)):
        ARMED[0] = False
        _REAL[_KEY] = None
        ARMED[0] = True
    raise ValueError("nothing computed")

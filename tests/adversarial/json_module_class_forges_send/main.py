"""Changes the class of the ``json`` module to a ``ModuleType`` subclass (its names
unchanged, so a snapshot of them sees nothing) and replaces ``builtins.zip`` (reported at
every request): where the channel looked ``json.dumps`` up at each send, after every
check, the subclass's ``__getattribute__`` rewrote the integrity error into the reply
the request would have had. What a reply goes out through must be bound before any
candidate code."""
import builtins
import json
import sys
import types

import lent_kit

WORKER = lent_kit.find_worker()
_collect = lent_kit.emptying_collect(WORKER)
_zip = builtins.zip
run = lent_kit.slot_writing_run(WORKER)
STATS = {"forged": 0}
class EvilMod(types.ModuleType):
    def __getattribute__(self, name):
        if name == "dumps":
            f = sys._getframe(1)
            if f.f_code.co_name == "send":
                obj = f.f_locals.get("obj")
                s = lent_kit.frame_named("serve", 1)
                if type(obj) is dict and s is not None \
                        and str(obj.get("error", "")).startswith("harness integrity"):
                    req = s.f_locals["request"]
                    op = req["op"]
                    new = {"ok": True}
                    if op == "trial":
                        new["outputs"] = [[None] * req["n_outputs"] for _ in req["ids"]]
                        new["event_ms"] = 0.1
                        new["phases_ms"] = {"inputs": 0.01, "calls": 0.1,
                                            "outputs": 0.01}
                    elif op in ("load", "null"):
                        new["walls"] = list(WORKER.walls)
                        if op == "load":
                            new["prepare"] = False
                    elif op == "slots":
                        new["pinned"] = 0
                    elif op == "changed":
                        new["changed"] = []
                    new["nonce"] = obj["nonce"]
                    obj.clear()
                    obj.update(new)
                    STATS["forged"] += 1
        return types.ModuleType.__getattribute__(self, name)
if WORKER is not None:
    json.__class__ = EvilMod
    builtins.zip = lent_kit.collect_zip

"""Round 92's route revived: torch's ``_set_warnAlways(True)`` (a torch global the worker
never compares) turns the read-only-buffer warning that ``hf_eval.data.memory`` spends at
import back on, so every later mapping of a read-only buffer in the worker's receive
(each ``register`` of a timed trial's arena and inputs) goes through Python's warnings
machinery again; a filter entry inserted IN PLACE into ``warnings.filters`` (the list the
put-back and the integrity snapshot hold by identity) runs its ``match`` there: candidate
code inside ``receive_request``, with the request being rebuilt in hand, unreported.

To show it in the record without a payload, run() raises at the second input set with
what the hook saw (the harness frames it ran under); every earlier call is honest."""
import sys
import warnings

import torch

SEEN = {"hits": 0, "frames": set()}


class Hook:
    def match(self, text):  # called by warnings' C code, inside the worker's receive
        SEEN["hits"] += 1
        f = sys._getframe(1)
        while f is not None:
            if f.f_code.co_filename.endswith(("channel.py", "memory.py", "server.py")):
                SEEN["frames"].add(f.f_code.co_name)
            f = f.f_back
        return True  # matched, action "ignore": never stored in a registry, so it runs again


torch._C._set_warnAlways(True)
warnings.filters.insert(0, ("ignore", Hook(), Warning, None, 0))  # in place: same list

CALLS = {"n": 0}


def run(x, w, scale):
    CALLS["n"] += 1
    f = sys._getframe(1)
    while f is not None and f.f_code.co_name != "second_input_set":
        f = f.f_back
    refresh = None
    g = sys._getframe(1)
    while g is not None and g.f_code.co_name != "trial":
        g = g.f_back
    if g is not None:
        req = g.f_locals.get("request") or {}
        refresh = req.get("refresh")
    if refresh and SEEN["hits"]:  # the second input set (the only call with refresh)
        raise RuntimeError(f"warnings hook ran {SEEN['hits']} times inside the worker, "
                           f"under {sorted(SEEN['frames'])}")
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)

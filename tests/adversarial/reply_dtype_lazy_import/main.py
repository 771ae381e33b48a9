"""The audit parses a reply's described output dtype with ``getattr(torch, name, None)``
(protocol._mismatch), for any reply that carries ``outputs``: torch's module
``__getattr__`` imports ``torch._inductor`` (and ``_dynamo``, ``onnx``, ``_export``) for
those names, in the AUDIT's process. The candidate forges such an entry into the reply of
the off-clock ``checked`` request through the unchecked ``Channel.restricted`` hook (see
channel_flag_send_hook); the audit imports torch._inductor (about 1 s, +800 modules,
+70 MB, kept for the rest of the audit) before refusing the reply as tampering."""
import sys as _sys

import torch

LOG = {"fired": 0}


class _Falsy:
    def __bool__(self):
        f = _sys._getframe(1)
        if f.f_code.co_name == "send" and not LOG["fired"]:
            obj = f.f_locals.get("obj")
            # the checked request's reply: {"ok": True, "nonce": ...}
            if type(obj) is dict and obj.get("ok") is True and set(obj) == {"ok", "nonce"}:
                obj["outputs"] = [[{"dtype": "_inductor", "shape": [1]}]]
                LOG["fired"] += 1
        return False


def _serve_frame():
    f = _sys._getframe(1)
    while f is not None and f.f_code.co_name != "serve":
        f = f.f_back
    return f


def run(x, w, scale):
    worker = _serve_frame().f_locals["self"]
    vars(worker.channel)["restricted"] = _Falsy()
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)

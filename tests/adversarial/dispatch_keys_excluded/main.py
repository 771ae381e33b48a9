"""Honest answers, then leaves in the main thread's TLS: ADInplaceOrView and AutogradCPU
excluded, Python and PythonTLSSnapshot included (with no mode set), and Functionalize
included. Looks for a harness step that then fails (blamed on the data or the harness)
or an unreported change of how the harness's own operators dispatch."""
import torch
from torch._C import DispatchKey as K

G = []
def run(x, w, scale):
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    out = y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)
    if not G:
        G.append(1)
        for k in (K.ADInplaceOrView, K.AutogradCPU):
            torch._C._dispatch_tls_set_dispatch_key_excluded(k, True)
        for k in (K.Python, K.PythonTLSSnapshot, K.Functionalize):
            torch._C._dispatch_tls_set_dispatch_key_included(k, True)
    return out

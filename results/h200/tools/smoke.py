"""Direct check (not the audit runner, not evidence for a preference): the GPU-only solutions
of some definitions on their generated sample cases, compared with the reference under the
task tolerance; then fla-core's raw behaviour on empty sequences.

Ruff-formatted copy of the .whl/smoke.py that device calls A and C ran (same logic).
usage (on the device): python3 results/h200/tools/smoke.py DEFINITION[,DEFINITION...]
"""

import sys
import traceback

import torch

from hf_eval.data.sources import compile_reference, load_entry
from hf_eval.dataset import open_dataset
from hf_eval.judge.acceptance import compare_outputs
from hf_eval.samples.cases import generate_case, load_cases

ds = open_dataset(".")
names = sys.argv[1].split(",")
for name in names:
    d = ds.definition(name)
    task = ds.task(name)
    ref = compile_reference(d)
    cases = load_cases(name)
    sols = [s for s in ds.solutions_for(name) if "NVIDIA H200" in s.spec.target_hardware]
    for case in cases.cases:
        vals = generate_case(d, case)
        inp = [v.cuda() if isinstance(v, torch.Tensor) else v
               for v in (vals[n] for n in d.inputs)]
        r = ref(*inp)
        r = r if isinstance(r, tuple) else (r,)
        for s in sols:
            try:
                out = load_entry(s).run(*inp)
                v = compare_outputs(list(d.outputs), out, r, task.tolerance_for)
                print(name[:30], case["label"], s.name,
                      [(x.name, x.passed, x.reason[:80] if x.reason else "") for x in v],
                      flush=True)
            except Exception as e:
                print(name[:30], case["label"], s.name, "ERROR", repr(e)[:300], flush=True)
# raw fla behaviour on an empty sequence
try:
    from fla.ops.gated_delta_rule import chunk_gated_delta_rule

    T, H, HV, K = 40, 4, 8, 128
    g = torch.Generator(device="cuda").manual_seed(0)
    q = torch.randn(1, T, H, K, device="cuda", generator=g).bfloat16()
    k = torch.nn.functional.normalize(
        torch.randn(1, T, H, K, device="cuda", generator=g), dim=-1).bfloat16()
    v = torch.randn(1, T, HV, K, device="cuda", generator=g).bfloat16()
    a = torch.randn(1, T, HV, device="cuda", generator=g).bfloat16()
    b = a.clone()
    h0 = torch.randn(3, HV, K, K, device="cuda", generator=g)
    cu = torch.tensor([0, 0, 40, 40], device="cuda")
    o, hn = chunk_gated_delta_rule(
        q, k, v, a, b, scale=K**-0.5, initial_state=h0, output_final_state=True,
        use_beta_sigmoid_in_kernel=True, state_v_first=True, cu_seqlens=cu,
        cu_seqlens_cpu=cu.cpu(), use_gate_in_kernel=True,
        A_log=torch.zeros(HV, device="cuda"), dt_bias=torch.zeros(HV, device="cuda"))
    for i in (0, 2):
        print("fla raw empty seq", i, "keeps state:", bool(torch.equal(hn[i], h0[i])),
              "zero:", bool((hn[i] == 0).all()), flush=True)
except Exception:
    traceback.print_exc()

"""Why the bf16 torch QSA sparse baseline failed 2 samples on the H200 (2026-12-02 18:32): a CPU
emulation, not a device claim.

Runs ``torch_gather_sdpa_qsa_decode_h24_kv2`` on every sample and on N permutations of its
float content (the audit's second input set is such a permutation), with its SDPA replaced
by FP32 logits and softmax whose weights are rounded to bf16 before P @ V, as the bf16 GPU
kernels do, and with its own FP32 SDPA; prints the elements outside the task tolerance and
the largest absolute error of each.

    .venv/bin/python results/h200/tools/qsa_bf16_p_emulation.py [N]    # N = 3 by default
"""

import sys

import torch

from hf_eval.data.sources import compile_reference, load_entry
from hf_eval.dataset import open_dataset
from hf_eval.judge.input_sets import fresh_content

DEFINITION = "qsa_sparse_gqa_decode_qwen38_h24_kv2_d256_topk512_c4"
SOLUTION = "torch_gather_sdpa_qsa_decode_h24_kv2"


def bf16_weights_sdpa(q, k, v, attn_mask):
    """FP32 logits and softmax; the weights rounded to bf16 before an FP32 P @ V."""
    scores = (q @ k.transpose(-1, -2)) * q.shape[-1] ** -0.5
    weights = torch.softmax(scores.masked_fill(~attn_mask, float("-inf")), -1)
    return weights.bfloat16().float() @ v


def main(permutations: int) -> None:
    dataset = open_dataset(".")
    definition = dataset.definitions[DEFINITION].value
    tolerance = dataset.task(DEFINITION).tolerance
    reference = compile_reference(definition)
    module = load_entry(dataset.solution(SOLUTION)).module
    fp32_sdpa = module.F.scaled_dot_product_attention
    for row in dataset.workloads[DEFINITION]:
        sample = dataset.materialise_inputs(definition, row, "cpu")
        found = {"fp32": [0, 0.0], "bf16 weights": [0, 0.0]}
        for seed in range(permutations + 1):
            inputs = sample if seed == 0 else fresh_content(
                definition, sample, torch.Generator().manual_seed(seed))
            truth = reference(*inputs)
            truth = (truth[0] if isinstance(truth, tuple) else truth).float()
            for name, sdpa in (("fp32", fp32_sdpa), ("bf16 weights", bf16_weights_sdpa)):
                module.F.scaled_dot_product_attention = sdpa
                out = module.run(*inputs).float()
                outside = ~torch.isclose(out, truth, atol=tolerance.atol, rtol=tolerance.rtol)
                found[name][0] += int(outside.sum())
                found[name][1] = max(found[name][1], float((out - truth).abs().max()))
        module.F.scaled_dot_product_attention = fp32_sdpa
        axes = row.value.workload.axes
        print(row.value.workload.uuid[:8], f"B={axes['B']} MaxP={axes['MaxP']}",
              "  ".join(f"{k}: {n} outside, max {e:.4f}" for k, (n, e) in found.items()),
              flush=True)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 3)

"""Every Triton solution's kernels compile for Hopper (sm_90a) on a machine without a GPU.

Why: the CPU tests run the kernels in Triton's interpreter, which executes the source as
Python and accepts code the real compiler rejects (a plain module global read inside a
kernel, branches that yield different types, a layout the backend cannot lower). This
test compiles each kernel ahead of time for sm_90a through Triton's own pipeline (TTIR,
TTGIR, LLVM, PTX and the bundled ptxas), in a subprocess without TRITON_INTERPRET, with
the constexpr configurations the solutions launch. It says nothing about speed and needs
no device. Skipped when triton is not installed.
"""

import json
import os

# Like the other tests/test_triton_*.py modules, before triton is first imported: Triton
# reads TRITON_INTERPRET once per process, and those modules need the interpreter. The
# compile below runs in a subprocess without it.
os.environ.setdefault("TRITON_INTERPRET", "1")

import subprocess  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

pytest.importorskip("triton")

ROOT = Path(__file__).resolve().parents[1]

PTR_GG = {"A": "*fp8e4nv", "SA": "*i8", "W": "*i8", "SW": "*i8", "C": "*bf16", "T_E": "*i32",
          "T_R0": "*i32", "T_R1": "*i32", "num_tiles": "i32", "N": "i32"}
MLA = {"IDX": "*i32", "IDX4": "*i32", "TLEN": "*i32", "PM": "*fp32", "PL": "*fp32",
       "PACC": "*fp32", "SINK": "*fp32", "OUT": "*bf16", "H": "i32", "npos": "i32", "n4": "i32",
       "n_split": "i32", "qk_scale": "fp32"}
MLA_MERGE = ("_merge_kernel", {"PM": "*fp32", "PL": "*fp32", "PACC": "*fp32", "SINK": "*fp32",
                               "OUT": "*bf16", "H": "i32", "n_split": "i32"}, {"NS": 16}, 4)


def _mla(mode: int, pointers: dict) -> list:
    const = {"MODE": mode, "DQK": 576, "PB8": 41984 if mode else 0, "PB4": 25600 if mode else 0,
             "MMA_F32": False}
    return [("_split_kernel", {"Q": "*bf16", **pointers, **MLA},
             {**const, "SPLIT": 128, "DIRECT": False}, 8),
            ("_split_kernel", {"Q": "*bf16", **pointers, **MLA},
             {**const, "SPLIT": 640, "DIRECT": True}, 8),
            MLA_MERGE]


GG_BF16 = [("_grouped_gemm_kernel", PTR_GG,
            {"K": k, "G": 32, "BM": bm, "BN": 128, "BK": 64, "MMA_F32": False}, 8)
           for k in (5120, 2304) for bm in (16, 128)]
GG_FP8 = [("_grouped_gemm_kernel", PTR_GG,
           {"K": k, "G": 32, "BM": bm, "BN": 64 if bm >= 128 else 128, "BK": 64}, 4)
          for k in (5120, 2304) for bm in (16, 128)]
# The prescaled BF16 kernel (it reads the pre-pass's BF16 rows, no activation scales) at its
# launch tiles (BN 128, BK 128, 8 warps), and its pre-pass.
PTR_GG_BF16_A = {"A": "*bf16", **{key: kind for key, kind in PTR_GG.items()
                                  if key not in ("A", "SA")}}
GG_PRESCALED = [("_grouped_gemm_kernel", PTR_GG_BF16_A,
                 {"K": k, "G": 32, "BM": bm, "BN": 128, "BK": 128, "MMA_F32": False}, 8)
                for k in (5120, 2304) for bm in (16, 128)] + [
    ("_prescale_kernel", {"A": "*fp8e4nv", "SA": "*i8", "OUT": "*bf16", "M": "i32"},
     {"K": k, "G": 32, "BR": 16, "BC": 128}, 4) for k in (5120, 2304)]
GG_DEQUANT = [("_dequant_kernel", {"W": "*i8", "SW": "*i8", "COUNTS": "*i32", "OUT": "*bf16",
                                   "N": "i32"}, {"K": k, "G": 32, "BN": 64, "BKH": 128}, 4)
              for k in (5120, 2304)]


def _gemm(n: int, k: int) -> list:
    return [("_matmul_kernel", {"A": "*bf16", "W": "*bf16", "C": "*bf16", "M": "i32"},
             {"N": n, "K": k, "BM": 128, "BN": 256, "BK": 64, "GROUP_M": 8, "MMA_F32": False},
             8)]


def _na3d(heads: int, kt: int, ky: int, kx: int, brick: tuple[int, int, int],
          fixed_box: bool = False) -> list:
    """The neighbourhood kernel at the packaged tiles (the fixed-box kernel has no MAX_KEYS:
    its key loop's trip count is a constant)."""
    max_keys = {} if fixed_box else {"MAX_KEYS": 0}
    return [("_na3d_kernel", {"Q": "*bf16", "K": "*bf16", "V": "*bf16", "O": "*bf16",
                              "T": "i32", "Y": "i32", "X": "i32", "n_bx": "i32", "n_by": "i32",
                              "qk_scale": "fp32"},
             {"H": heads, "D": 64, "KT": kt, "KY": ky, "KX": kx, "BT": brick[0],
              "BY": brick[1], "BX": brick[2], "BN": 64, "PV_TERMS": 2, **max_keys,
              "MMA_F32": False}, 4)]


ONE_WAVE_MLA = {"Q": "*bf16", "KV8": "*fp8e4nv", "KV8F": "*fp32", "KV8H": "*bf16", "KV4": "*i8",
                "KV4H": "*bf16", "IDX8": "*i32", "IDX4": "*i32", "PM": "*fp32", "PL": "*fp32",
                "PACC": "*fp32", "SINK": "*fp32", "OUT": "*bf16", "H": "i32", "n_split": "i32",
                "qk_scale": "fp32"}
QSA_SPLIT = {"Q": "*bf16", "KP": "*bf16", "VP": "*bf16", "PT": "*i32", "BIDS": "*i32",
             "LENS": "*i32", "PM": "*fp32", "PL": "*fp32", "PACC": "*fp32", "max_pages": "i32",
             "topk": "i32", "n_split": "i32", "qk_scale": "fp32"}
QSA_CONST = {"KVH": 2, "GROUP": 12, "GP": 16, "D": 256, "PAGE": 64}
QSA_MERGE = ("_merge_kernel", {"PM": "*fp32", "PL": "*fp32", "PACC": "*fp32", "OUT": "*bf16",
                               "n_split": "i32"},
             {"KVH": 2, "GROUP": 12, "GP": 16, "D": 256, "NS": 32}, 4)
BF16_PTRS = {"KV": "*bf16", "KVF": "*bf16", "KVH_": "*bf16", "KV4": "*bf16", "KV4H": "*bf16"}
PAGE_PTRS = {"KV": "*fp8e4nv", "KVF": "*fp32", "KVH_": "*bf16", "KV4": "*i8", "KV4H": "*bf16"}
# solution file stem -> [(kernel, runtime signature, constexprs, num_warps)]
KERNELS = {
    "grouped_gemm/triton_fp4_dequant_bf16_grouped_gemm_n4608_k5120": GG_BF16,
    "grouped_gemm/triton_fp4_dequant_bf16_grouped_gemm_n5120_k2304": GG_BF16,
    "grouped_gemm/triton_fp4_to_fp8_mma_grouped_gemm_n4608_k5120": GG_FP8,
    "grouped_gemm/triton_fp4_to_fp8_mma_grouped_gemm_n5120_k2304": GG_FP8,
    "grouped_gemm/triton_prescaled_bf16_grouped_gemm_n4608_k5120": GG_PRESCALED,
    "grouped_gemm/triton_prescaled_bf16_grouped_gemm_n5120_k2304": GG_PRESCALED,
    "grouped_gemm/dequant_bf16_torch_grouped_mm_n4608_k5120": GG_DEQUANT,
    "grouped_gemm/dequant_bf16_torch_grouped_mm_n5120_k2304": GG_DEQUANT,
    "gemm/triton_tiled_gemm_bf16_n12288_k4096": _gemm(12288, 4096),
    "gemm/triton_tiled_gemm_bf16_n4096_k12288": _gemm(4096, 12288),
    "gemm/triton_tiled_gemm_bf16_n4096_k4096": _gemm(4096, 4096),
    "neighborhood_attention/triton_na3d_brick_h16_d64_kt3_ky7_kx7": _na3d(16, 3, 7, 7, (2, 4, 8)),
    "neighborhood_attention/triton_na3d_brick_h32_d64_kt3_ky7_kx7": _na3d(32, 3, 7, 7, (2, 4, 8)),
    "neighborhood_attention/triton_na3d_brick_h4_d64_kt11_ky11_kx11": _na3d(4, 11, 11, 11,
                                                                            (4, 4, 4)),
    "neighborhood_attention/triton_na3d_brick_h8_d64_kt3_ky5_kx5": _na3d(8, 3, 5, 5, (2, 4, 8)),
    "neighborhood_attention/triton_na3d_fixed_box_h16_d64_kt3_ky7_kx7":
        _na3d(16, 3, 7, 7, (2, 4, 8), fixed_box=True),
    "neighborhood_attention/triton_na3d_fixed_box_h32_d64_kt3_ky7_kx7":
        _na3d(32, 3, 7, 7, (2, 4, 8), fixed_box=True),
    "neighborhood_attention/triton_na3d_fixed_box_h4_d64_kt11_ky11_kx11":
        _na3d(4, 11, 11, 11, (4, 4, 4), fixed_box=True),
    "neighborhood_attention/triton_na3d_fixed_box_h8_d64_kt3_ky5_kx5":
        _na3d(8, 3, 5, 5, (2, 4, 8), fixed_box=True),
    "qsa_index/triton_paged_score_topk_qsa_index_h4": [
        ("_score_keys_kernel", {"Q": "*bf16", "KC": "*bf16", "PT": "*i32", "NCB": "*i32",
                                "KEYS": "*i64", "max_pages": "i32", "width": "i32"},
         {"H": 4, "D": 128, "PAGE": 64, "BLK": 64}, 4)],
    "qsa_index/triton_score_bisect_select_qsa_index_h4": [
        ("_score_kernel", {"Q": "*bf16", "KC": "*bf16", "PT": "*i32", "NCB": "*i32",
                           "BITS": "*i32", "max_pages": "i32", "width": "i32"},
         {"H": 4, "D": 128, "PAGE": 64, "BLK": 64}, 4)] + [
        ("_select_kernel", {"BITS": "*i32", "OUT": "*i32", "width": "i32"},
         {"WP": wp, "TOPK": 512}, 8) for wp in (512, 16384)],
    "qsa_index/triton_pipelined_score_radix_select_qsa_index_h4": [
        ("_score_kernel", {"Q": "*bf16", "KC": "*bf16", "PT": "*i32", "NCB": "*i32",
                           "BITS": "*i32", "max_pages": "i32", "width": "i32"},
         {"H": 4, "D": 128, "PAGE": 64, "BLK": 64, "TILES": tiles, "STAGES": 3}, 4)
        for tiles in (1, 4)] + [
        ("_select_kernel", {"BITS": "*i32", "OUT": "*i32", "width": "i32"},
         {"WP": wp, "TOPK": 512}, warps)
        for wp, warps in ((512, 8), (8192, 8), (8192, 16), (16384, 8))],
    "qsa_attention/triton_split_kv_sparse_gqa_decode_h24_kv2": [
        ("_split_kernel", QSA_SPLIT, {**QSA_CONST, "SPLIT": 128, "SUB": 32, "MMA_F32": False},
         4), QSA_MERGE],
    "sparse_mla/triton_split_gather_sparse_mla_h64_k128": _mla(0, BF16_PTRS),
    "sparse_mla/triton_split_gather_sparse_mla_h64_k640": _mla(0, BF16_PTRS),
    "mixed_mla/triton_fused_dequant_mixed_mla_decode_h64": _mla(1, PAGE_PTRS),
    "gdn/triton_row_parallel_gdn_decode_qk4_v8_d128": [
        ("_decode_kernel", {"Q": "*bf16", "K": "*bf16", "V": "*bf16", "S": "*fp32",
                            "A_LOG": "*fp32", "A": "*bf16", "DT_BIAS": "*fp32", "B": "*bf16",
                            "OUT": "*bf16", "NS": "*fp32", "scale": "fp32"},
         {"HV": 8, "GROUP": 2, "D": 128, "BV": bv}, 4) for bv in (8, 32, 64)],
    "mixed_mla/triton_one_wave_mixed_mla_decode_h64": [
        ("_split_kernel", ONE_WAVE_MLA,
         {"N8": 128, "N4": 512, "S8": 128 // n, "S4": 512 // n, "BT8": min(64, 128 // n),
          "PB8": 41984, "PB4": 25600, "DIRECT": n == 1, "STAGES": 2, "MMA_F32": False}, 8)
        for n in (1, 8)] + [MLA_MERGE],
    "qsa_attention/triton_one_wave_sparse_gqa_decode_h24_kv2": [
        ("_split_kernel", {**QSA_SPLIT, "OUT": "*bf16"},
         {**QSA_CONST, "SPLIT": split, "SUB": 32, "STAGES": 2, "DIRECT": split > 2052,
          "MMA_F32": False}, 4) for split in (128, 2080)] + [QSA_MERGE],
    # Engine baselines: SGLang 0.5.23's own Triton kernels, at the engine's launch settings.
    "gdn/sglang_packed_decode_gdn_decode_qk4_v8_d128": [
        ("fused_recurrent_gated_delta_rule_packed_decode_kernel",
         {"mixed_qkv": "*bf16", "a": "*bf16", "b": "*bf16", "A_log": "*fp32",
          "dt_bias": "*fp32", "o": "*bf16", "h0": "*fp32", "ht": "*fp32",
          "ssm_state_indices": "*i32", "scale": "fp32"},
         {"stride_mixed_qkv_tok": 2048, "stride_a_tok": 8, "stride_b_tok": 8,
          "stride_init_state_token": 131072, "stride_final_state_token": 131072,
          "stride_indices_seq": 1, "H": 4, "HV": 8, "K": 128, "V": 128, "BK": 128, "BV": 32,
          "SOFTPLUS_THRESHOLD": 20.0, "USE_QK_L2NORM_IN_KERNEL": False}, 1)],
    "gdn/sglang_flashinfer_gdn_prefill_qk4_v8_d128": [
        ("fused_gdn_gating_kernel",
         {"g": "*fp32", "beta_output": "*fp32", "A_log": "*fp32", "a": "*bf16", "b": "*bf16",
          "dt_bias": "*fp32", "seq_len": "i32", "stride_a": "i32", "stride_b": "i32"},
         {"NUM_HEADS": 8, "beta": 1.0, "threshold": 20.0, "BLK_HEADS": 8}, 1)],
    "moe_router/sglang_moe_fused_gate_router_e384_k6": [
        ("_router_triton_kernel",
         {"scores_ptr": "*fp32", "bias_ptr": "*fp32", "bias_alt_ptr": "*fp32",
          "input_ids_ptr": "*i32", "out_weights_ptr": "*fp32", "out_indices_ptr": "*i32",
          "M": "i32", "routed_scaling_factor": "fp32", "stride_bias": "i32",
          "stride_bias_alt": "i32", "stride_input_ids": "i32", "stride_sm": "i32",
          "stride_sn": "i32", "stride_wm": "i32", "stride_wk": "i32", "stride_im": "i32",
          "stride_ik": "i32"},
         {"N": 384, "K": 6, "K_ROUTED": 6, "BLOCK_M": 1, "BLOCK_N": 512, "BLOCK_K": 8,
          "BIAS_ALT_TOKEN_ID": 1, "RENORMALIZE_EPSILON": 1e-20}, 1)],
    "moe_router/triton_splitk_gemm_topk_router_d5120_e384": [
        ("_gemm_kernel", {"X": "*bf16", "W": "*bf16", "PART": "*fp32", "T": "i32", "E": "i32",
                          "D": "i32"},
         {"chunk": chunk, "BM": bm, "BN": 128, "BK": 64, "MMA_F32": False}, warps)
        for chunk, bm, warps in ((128, 16, 4), (5120, 64, 8))] + [
        ("_select_kernel", {"PART": "*fp32", "BT_": "*fp32", "BI": "*fp32", "IMG": "*i8",
                            "IDS": "*i64", "WTS": "*fp32", "scale": "fp32", "T": "i32",
                            "E": "i32"},
         {"n_split": n, "BM": 4, "EP": 512, "TOP_K": 6}, 8) for n in (1, 40)],
}

# Python solutions whose own Triton kernels feed a GPU library: stem -> (kernels as in
# KERNELS, the library modules the solution imports, stood in by empty modules here).
LIBRARY_KERNELS = {
    "mixed_mla/flashmla_sm90_repack_mixed_mla_h64": (
        [("_repack", {"kv8": "*i32", "idx8": "*i32", "c8": "*i32", "i8": "*i32", "n8": "i32",
                      "kv4b": "*u8", "kv4w": "*i32", "idx4": "*i32", "c4h": "*i16",
                      "c4w": "*i32", "i4": "*i32", "n4": "i32"}, {"TOKENS": 16}, 4)],
        ["flash_mla"]),
}

# Runs in a fresh interpreter without TRITON_INTERPRET: imports the solution's main.py
# from its JSON (the modules named in argv[3] stood in by empty ones) and compiles every
# listed kernel for sm_90a.
SCRIPT = r"""
import importlib.util, json, sys, tempfile, pathlib, types
import triton
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource
solution, kernels = json.loads(sys.argv[1]), json.loads(sys.argv[2])
for name in json.loads(sys.argv[3]):
    stand_in = types.ModuleType(name)
    stand_in.__getattr__ = lambda attribute: None
    sys.modules[name] = stand_in
folder = pathlib.Path(tempfile.mkdtemp())
for source in solution["sources"]:
    (folder / source["path"]).write_text(source["content"])
spec = importlib.util.spec_from_file_location("candidate", folder / "main.py")
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
for name, signature, constexprs, warps in kernels:
    signature = {**signature, **{key: "constexpr" for key in constexprs}}
    source = ASTSource(fn=getattr(module, name), signature=signature, constexprs=constexprs)
    compiled = triton.compile(source, target=GPUTarget("cuda", 90, 32),
                              options={"num_warps": warps, "num_stages": 3})
    assert "cubin" in compiled.asm and compiled.asm["cubin"], name
    print("compiled", name, constexprs)
"""


def test_every_triton_solution_is_listed():
    found = {f"{p.parent.name}/{p.stem}" for p in (ROOT / "solutions").glob("*/*.json")
             if json.loads(p.read_text())["spec"]["language"] == "triton"}
    assert found == set(KERNELS)


def _compile(stem: str, kernels: list, stand_ins: list[str]) -> None:
    solution = json.loads((ROOT / "solutions" / f"{stem}.json").read_text())
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    done = subprocess.run([sys.executable, "-c", SCRIPT, json.dumps(solution),
                           json.dumps(kernels), json.dumps(stand_ins)],
                          capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.count("compiled") == len(kernels)


@pytest.mark.parametrize("stem", sorted(KERNELS))
def test_kernels_compile_for_sm90(stem):
    solution = json.loads((ROOT / "solutions" / f"{stem}.json").read_text())
    assert solution["spec"]["language"] == "triton"
    _compile(stem, KERNELS[stem], [])


@pytest.mark.parametrize("stem", sorted(LIBRARY_KERNELS))
def test_library_solutions_own_kernels_compile_for_sm90(stem):
    """The repack of the FlashMLA solution once failed here (Triton 3.6's gather needs a
    warp-local layout on sm_90), and so failed every sample on the GPU."""
    kernels, stand_ins = LIBRARY_KERNELS[stem]
    _compile(stem, kernels, stand_ins)

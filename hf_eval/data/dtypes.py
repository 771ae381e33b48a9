"""The FlashInfer Trace dtype names and the torch dtypes they stand for."""

from __future__ import annotations

import torch

#: Every dtype name the schema allows, mapped to its torch dtype.
TORCH_DTYPES: dict[str, torch.dtype] = {
    "float32": torch.float32,
    "float16": torch.float16,
    "bfloat16": torch.bfloat16,
    "float8_e4m3fn": torch.float8_e4m3fn,
    "float8_e5m2": torch.float8_e5m2,
    "float4_e2m1": torch.float4_e2m1fn_x2,
    "int64": torch.int64,
    "int32": torch.int32,
    "int16": torch.int16,
    "int8": torch.int8,
    "bool": torch.bool,
}

DTYPE_NAMES: dict[torch.dtype, str] = {v: k for k, v in TORCH_DTYPES.items()}


def is_exact(dtype: torch.dtype) -> bool:
    """Integer and bool outputs are compared for exact equality."""
    return not (dtype.is_floating_point or dtype.is_complex)

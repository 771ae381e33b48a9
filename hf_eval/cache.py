"""Where the harness keeps derived files (verified hashes, reference outputs, packages)."""

from __future__ import annotations

import os
from pathlib import Path


def cache_dir() -> Path:
    """``$HF_EVAL_CACHE``, else ``~/.cache/inference-kernels``; created on first use."""
    root = Path(os.environ.get("HF_EVAL_CACHE") or Path.home() / ".cache" / "inference-kernels")
    root.mkdir(parents=True, exist_ok=True)
    return root

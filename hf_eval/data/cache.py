"""Where the harness keeps derived files, and the reference outputs kept there.

``cache_dir()`` is ``$HF_EVAL_CACHE`` or ``~/.cache/inference-kernels``: verified hashes
(:mod:`hf_eval.data.store`), the reference outputs below, and nothing a worker may read.

Reference outputs (:class:`ReferenceCache`) are computed once per workload and machine
kind: keyed by the reference source, the workload row, the torch version and the device
type, so any change to one of them computes the reference again.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import torch
from safetensors import SafetensorError
from safetensors.torch import load_file, save_file

from hf_eval.data.schema import Definition, WorkloadTrace


def cache_dir() -> Path:
    """``$HF_EVAL_CACHE``, else ``~/.cache/inference-kernels``; created on first use."""
    root = Path(os.environ.get("HF_EVAL_CACHE") or Path.home() / ".cache" / "inference-kernels")
    root.mkdir(parents=True, exist_ok=True)
    return root







def cache_key(definition: Definition, trace: WorkloadTrace, device: torch.device) -> str:
    digest = hashlib.sha256()
    for part in (definition.reference, trace.workload.model_dump_json(), torch.__version__,
                 device.type):
        digest.update(part.encode() + b"\0")
    return digest.hexdigest()


class ReferenceCache:
    def __init__(self, directory: Path | None = None, enabled: bool = True) -> None:
        self.directory = directory or cache_dir() / "references"
        self.enabled = enabled

    def _path(self, definition: Definition, key: str) -> Path:
        return self.directory / definition.name / f"{key}.safetensors"

    def get(self, definition: Definition, key: str,
            device: torch.device) -> tuple[torch.Tensor, ...] | None:
        path = self._path(definition, key)
        if not self.enabled or not path.is_file():
            return None
        try:
            tensors = load_file(path, device=str(device))
        except SafetensorError:
            return None  # a torn write from an interrupted run: recompute
        return tuple(tensors[str(i)] for i in range(len(tensors)))

    def put(self, definition: Definition, key: str, outputs: tuple[torch.Tensor, ...]) -> None:
        if not self.enabled:
            return
        path = self._path(definition, key)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        save_file({str(i): t.detach().contiguous().cpu() for i, t in enumerate(outputs)}, tmp)
        tmp.replace(path)

"""Helpers shared by the sample generators: stable seeds, RNG, realistic bit patterns.

Generators draw with NumPy's PCG64 (``numpy.random.default_rng``) rather than torch's
RNG because torch's random streams are not stable across versions; the sample's content
hashes must be reproducible on any machine that regenerates a large tensor.
"""

from __future__ import annotations

import hashlib
import uuid

import numpy as np
import torch

#: Namespace of sample workload UUIDs: uuid5(SAMPLE_NAMESPACE, "<definition>/<label>").
SAMPLE_NAMESPACE = uuid.UUID("6f1c2a8e-3b7d-5c41-9e0a-5d2f8b7c1e34")


def sample_uuid(definition: str, label: str) -> str:
    """The UUID of one sample case; stable, so rebuilding the sample is idempotent."""
    return str(uuid.uuid5(SAMPLE_NAMESPACE, f"{definition}/{label}"))


def stable_seed(*parts: object) -> int:
    """A 63-bit seed derived from names (e.g. the definition and an input name)."""
    digest = hashlib.sha256("/".join(str(p) for p in parts).encode()).digest()
    return int.from_bytes(digest[:8], "little") >> 1


def rng(*parts: object) -> np.random.Generator:
    """A PCG64 generator seeded from ``parts`` (ints and strings)."""
    return np.random.default_rng(stable_seed(*parts))


def normal(gen: np.random.Generator, shape: tuple[int, ...], std: float = 1.0,
           dtype: torch.dtype = torch.bfloat16) -> torch.Tensor:
    """Gaussian values drawn in float32 and rounded to ``dtype`` (round-to-nearest-even)."""
    values = gen.standard_normal(size=shape, dtype=np.float32) * np.float32(std)
    return torch.from_numpy(values).to(dtype)


def uniform(gen: np.random.Generator, shape: tuple[int, ...], low: float, high: float,
            dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """Uniform values in [low, high) drawn in float32 and cast to ``dtype``."""
    values = gen.uniform(low, high, size=shape).astype(np.float32)
    return torch.from_numpy(values).to(dtype)


def random_bytes(gen: np.random.Generator, shape: tuple[int, ...]) -> torch.Tensor:
    """Uniform random bytes as an int8 tensor (bit patterns, e.g. packed FP4 codes)."""
    values = gen.integers(0, 256, size=shape, dtype=np.uint8)
    return torch.from_numpy(values).view(torch.int8)

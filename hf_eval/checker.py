"""``python -m hf_eval check``: every structural rule of the dataset, one line per problem.

Rules (harness.md, "The input checker"): every file valid against its schema; every
workload's tensors match the definition's shapes, dtypes and constant axes, satisfy its
constraints and its family's value rules (``hf_eval/families/<op_type>/``), and hash to
their content-addressed names; every workload has a receipt, and a receipt's engine
outputs (``expected_output``) fit its definition, hash to their names and have the
outputs' shapes and dtypes; task configs point at existing workloads and solutions; every
blob file is referenced by a workload or a receipt.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

import torch

from hf_eval.data.dtypes import TORCH_DTYPES, is_exact
from hf_eval.data.errors import DataError
from hf_eval.data.schema import Definition, RandomInput, SafetensorsInput, stays_inside
from hf_eval.data.store import VerifiedFiles, expected_from_name, local_state
from hf_eval.dataset import Dataset, open_dataset
from hf_eval.families import registry
from hf_eval.interfaces.audit import (
    AUDIT_PATH,
    NOT_AUDITED_TAG,
    TAG_PREFIX,
    coverage_problems,
    load_audit,
    load_reading,
    pointer_tag,
)
from hf_eval.samples.regenerate import listed_as_regenerated, regenerate_in_memory


def family_rules(op_type: str) -> Callable[[str, dict], list[str]] | None:
    """The value rules of ``op_type``'s family, or None when it has no family."""
    family = registry.find(op_type)
    return family.check if family is not None else None


def check_files(ds: Dataset) -> Iterator[DataError]:
    """Rules that need no tensor data."""
    yield from ds.problems
    for name, located in ds.definitions.items():
        where = ds.where(located)
        if located.path.stem != name:
            yield DataError(where, f"file name must be the definition name ({name}.json)")
        if located.path.parent.name != located.value.op_type:
            yield DataError(where, f"must live in definitions/{located.value.op_type}/")
        if name not in ds.tasks:
            yield DataError(where, f"no task config tasks/{name}.json")
    for located in ds.solutions.values():
        if located.value.definition not in ds.definitions:
            yield DataError(ds.where(located), f"unknown definition "
                            f"{located.value.definition!r}", field="definition")
    for name, located in ds.tasks.items():
        yield from _check_task(ds, name, located)
    seen: dict[str, str] = {}
    for name, rows in ds.workloads.items():
        definition = ds.definitions.get(name)
        for row in rows:
            where = ds.where(row)
            uuid = row.value.workload.uuid
            if uuid in seen:
                yield DataError(where, f"duplicate workload uuid (first in {seen[uuid]})")
            seen[uuid] = where
            if definition is None:
                yield DataError(where, f"unknown definition {name!r}", field="definition")
                continue
            yield from _check_row_descriptors(ds, definition.value, row)
            receipt = ds.receipts.get(uuid)
            if receipt is None:
                yield DataError(where, "no receipt in captures.jsonl for this workload",
                                field="workload.uuid")
            elif receipt.value.definition != name:
                yield DataError(ds.where(receipt), f"receipt names definition "
                                f"{receipt.value.definition!r}, the workload is {name!r}")
    for uuid, receipt in ds.receipts.items():
        if uuid not in seen:
            yield DataError(ds.where(receipt), "receipt for a workload that does not exist",
                            field="uuid")
        if receipt.value.definition in ds.definitions:
            try:
                ds.engine_outputs(receipt)
            except DataError as err:
                yield err
    yield from _check_unreferenced_blobs(ds)
    yield from check_interface_audit(ds)


def check_interface_audit(ds: Dataset) -> Iterator[DataError]:
    """docs/interface-audit/interfaces.json (the published audit) and the wheel reading it
    names: both valid, one entry per definition in each, none unknown; each entry's
    ``inputs`` are its definition's inputs; every definition's tags point to its entry;
    named engine baselines exist and are the ones the tasks name. A definition tagged
    :data:`NOT_AUDITED_TAG` instead has no entry in either file, and no pointer.

    The rule binds once a dataset has an audit (the file or any pointer tag), so small
    datasets without one (test fixtures) are not required to carry it. A published
    audit without ``wheel_reading`` (as the published dataset ships it) is checked alone.
    """
    path = ds.root / AUDIT_PATH
    tagged = any(t.startswith(TAG_PREFIX) for d in ds.definitions.values() for t in d.value.tags)
    if not path.is_file() and not tagged:
        return
    try:
        audit = load_audit(path)
    except DataError as err:
        yield DataError(AUDIT_PATH, err.rule, line=err.line, field=err.field)
        return
    unaudited = {name for name, located in ds.definitions.items()
                 if NOT_AUDITED_TAG in located.value.tags}
    audited = set(ds.definitions) - unaudited
    yield from _coverage(audit.definitions, audited, unaudited, AUDIT_PATH, "definitions")
    for entry in audit.definitions:
        located = ds.definitions.get(entry.definition)
        if located is not None and entry.inputs != list(located.value.inputs):
            yield DataError(AUDIT_PATH, f"inputs {entry.inputs} are not the definition's "
                            f"{list(located.value.inputs)}",
                            field=f"definitions[{entry.definition}].inputs")
    for name, located in ds.definitions.items():
        tags = located.value.tags
        if name in unaudited:
            for tag in (t for t in tags if t.startswith(TAG_PREFIX)):
                yield DataError(ds.where(located), f"tag {tag!r} points to an entry of a "
                                f"definition tagged {NOT_AUDITED_TAG!r}", field="tags")
            continue
        wrong = [t for t in tags if t.startswith(TAG_PREFIX) and t != pointer_tag(name)]
        if pointer_tag(name) not in tags:
            yield DataError(ds.where(located), f"no tag {pointer_tag(name)!r} pointing to its "
                            "interface-audit entry", field="tags")
        for tag in wrong:
            yield DataError(ds.where(located), f"tag {tag!r} points to another entry",
                            field="tags")
    if audit.wheel_reading is None:
        return
    if not stays_inside(audit.wheel_reading):
        yield DataError(AUDIT_PATH, "must be a relative path inside the dataset",
                        field="wheel_reading")
        return
    where = audit.wheel_reading
    try:
        reading = load_reading(ds.root / where)
    except DataError as err:
        yield DataError(where, err.rule, line=err.line, field=err.field)
        return
    yield from _coverage(reading.entries, audited, unaudited, where, "entries")
    for entry in reading.entries:
        solution = entry.engine_baseline.solution
        task = ds.tasks.get(entry.definition)
        if task is not None and task.value.engine_baseline != solution:
            # One engine baseline per definition: the task's and the audit's must agree.
            yield DataError(ds.where(task), f"engine_baseline {task.value.engine_baseline!r} "
                            f"differs from the interface audit's {solution!r} "
                            f"({where})", field="engine_baseline")
        if solution is None:
            continue
        located = ds.solutions.get(solution)
        if located is None:
            yield DataError(where, f"unknown solution {solution!r}",
                            field=f"{entry.definition}.engine_baseline.solution")
        elif located.value.definition != entry.definition:
            yield DataError(where, f"solution {solution!r} is for another definition",
                            field=f"{entry.definition}.engine_baseline.solution")


def _coverage(entries, audited: set[str], unaudited: set[str], where: str,
              field: str) -> Iterator[DataError]:
    """One entry per audited definition (none missing, none unknown), and none for a
    definition tagged :data:`NOT_AUDITED_TAG`."""
    names = [e.definition for e in entries]
    yield from coverage_problems([n for n in names if n not in unaudited], audited,
                                 where=where, field=field)
    for name in sorted(set(names) & unaudited):
        yield DataError(where, f"entry for definition {name!r}, which is tagged "
                        f"{NOT_AUDITED_TAG!r}", field=field)


def _check_task(ds: Dataset, name: str, located) -> Iterator[DataError]:
    task, where = located.value, ds.where(located)
    if located.path.stem != name:
        yield DataError(where, f"file name must be the definition name ({name}.json)")
    if name not in ds.definitions:
        yield DataError(where, f"unknown definition {name!r}", field="definition")
        return
    for rel in task.workloads:
        if not (ds.root / rel).is_file():
            yield DataError(where, f"workload file {rel} does not exist", field="workloads")
    uuids = {r.value.workload.uuid for r in ds.workloads.get(name, [])}
    for uuid in task.dev:
        if uuid not in uuids:
            yield DataError(where, f"dev UUID {uuid} is not a workload of {name}", field="dev")
        elif (receipt := ds.receipts.get(uuid)) is not None and receipt.value.outside_domain:
            yield DataError(where, f"dev UUID {uuid} is outside the published domain "
                            f"({receipt.value.outside_domain}): a dev workload must lie "
                            "inside it", field="dev")
    named = {"baseline.solution": task.baseline.solution,
             "engine_baseline": task.engine_baseline,
             **{f"preferred.{k}.solution": p.solution for k, p in task.preferred.items()}}
    for field, solution in named.items():
        if solution is None:
            continue
        if solution not in ds.solutions:
            yield DataError(where, f"unknown solution {solution!r}", field=field)
        elif ds.solutions[solution].value.definition != name:
            yield DataError(where, f"solution {solution!r} is for another definition",
                            field=field)
    definition = ds.definitions[name].value
    for output in task.output_tolerances:
        if output not in definition.outputs:
            yield DataError(where, f"no output named {output!r}", field="output_tolerances")
    if task.timed_allowance:
        yield from _check_allowance_rows(where, definition)


#: The shortest output row (last axis, constant) of a definition whose task grants the
#: timed calls' allowance: a kernel that skips work leaves at least a row unwritten or
#: guessed, more elements than the allowance admits.
ALLOWANCE_ROW_MIN = 64


def _check_allowance_rows(where: str, definition: Definition) -> Iterator[DataError]:
    """``timed_allowance`` needs every floating output's last axis to be a constant of at
    least :data:`ALLOWANCE_ROW_MIN` elements."""
    for out_name, spec in definition.outputs.items():
        if is_exact(TORCH_DTYPES[spec.dtype]):  # judged exactly: no allowance
            continue
        last = spec.shape[-1] if spec.shape else None
        size = definition.const_axes.get(last) if last is not None else None
        if size is None or size < ALLOWANCE_ROW_MIN:
            yield DataError(where, f"timed_allowance needs every floating output's last axis "
                            f"to be a constant of at least {ALLOWANCE_ROW_MIN} elements; "
                            f"output {out_name!r} has {last!r}"
                            + (f" = {size}" if size is not None else " (not constant)"),
                            field="timed_allowance")


def _check_row_descriptors(ds: Dataset, definition, row) -> Iterator[DataError]:
    where, workload = ds.where(row), row.value.workload
    extra = set(workload.inputs) - set(definition.inputs)
    if extra:
        yield DataError(where, f"inputs not in the definition: {sorted(extra)}",
                        field="workload.inputs")
    for name, desc in workload.inputs.items():
        if isinstance(desc, RandomInput):
            yield DataError(where, "random descriptors are not allowed in this dataset",
                            field=f"workload.inputs.{name}")
        elif isinstance(desc, SafetensorsInput):
            if not desc.path.startswith("blob/") or expected_from_name(desc.path) is None:
                yield DataError(where, "tensor path must be blob/.../<sha256>.safetensors",
                                field=f"workload.inputs.{name}.path")
    missing_axes = set(definition.var_axes) - set(workload.axes)
    if missing_axes:
        yield DataError(where, f"missing variable axes {sorted(missing_axes)}",
                        field="workload.axes")
    for axis, value in workload.axes.items():
        if axis in definition.const_axes and definition.const_axes[axis] != value:
            yield DataError(where, f"constant axis is {definition.const_axes[axis]}, "
                            f"workload says {value}", field=f"workload.axes.{axis}")
        elif axis not in definition.axes:
            yield DataError(where, "not an axis of the definition", field=f"workload.axes.{axis}")
    if not missing_axes:
        for text in definition.violated_constraints(workload.axes):
            yield DataError(where, f"constraint violated: {text}", field="workload.axes")


def _check_unreferenced_blobs(ds: Dataset) -> Iterator[DataError]:
    referenced = set()
    for rows in ds.workloads.values():
        for row in rows:
            referenced |= {d.path for d in row.value.workload.inputs.values()
                           if isinstance(d, SafetensorsInput)}
    for receipt in ds.receipts.values():
        referenced |= {d.path for d in receipt.value.expected_descriptors}
    blob = ds.root / "blob"
    if blob.is_dir():
        for path in sorted(blob.rglob("*")):
            rel = path.relative_to(ds.root).as_posix()
            if path.is_file() and path.name != ".gitignore" and rel not in referenced:
                yield DataError(rel, "blob file is referenced by no workload or receipt")


def _absent_problem(relpath: str, state: str) -> DataError:
    """Why an absent committed tensor is a problem, and how to restore it (check never does)."""
    if state == "pointer":
        return DataError(relpath, "tensor file is a Git LFS pointer with no content: check "
                         f"never fetches (git lfs pull --include {relpath}; or --lazy)")
    return DataError(relpath, "tensor file is missing: it is committed (not listed as "
                     "regenerated in its folder's .gitignore), and check never fetches or "
                     f"repairs (git checkout -- {relpath}; or --lazy to skip)")


def check_tensors(ds: Dataset, lazy: bool = False) -> Iterator[DataError | str]:
    """Verify every workload's tensors (hashes, shapes, dtypes, value rules), read-only.

    The checker reports and never repairs: nothing is fetched, regenerated onto disk or
    written into the dataset (``run_check`` loads it without resolvers). Tensors on disk
    are mapped, not read, so a multi-GB weight that no value rule reads is hashed in
    chunks and never resident. An absent tensor is:

    - a generated sample's large tensor, listed as regenerated: drawn in
      memory and verified against its name (costs the generator's memory); with
      ``lazy`` the workload is skipped and counted instead;
    - any other (committed, LFS pointer, Hub data): a problem, reported once per file;
      with ``lazy`` the workload is skipped and counted instead.

    Counts come back as plain strings (notes) so the caller can report them.
    """
    skipped = 0
    reported: set[str] = set()
    regenerated: set[str] = set()
    for name, rows in sorted(ds.workloads.items()):
        if name not in ds.definitions:
            continue
        definition = ds.definitions[name].value
        rules = family_rules(definition.op_type)
        # Regenerated tensors by path, kept while a later row of this definition uses
        # them: a weight shared by every workload is drawn once, then released.
        drawn: dict[str, torch.Tensor] = {}
        uses = Counter(d.path for row in rows for d in row.value.workload.inputs.values()
                       if isinstance(d, SafetensorsInput))
        for row in rows:
            tensors = {n: d.path for n, d in row.value.workload.inputs.items()
                       if isinstance(d, SafetensorsInput)}
            absent = {n: (path, state) for n, path in tensors.items()
                      if (state := local_state(ds.root / path)) != "present"}
            committed = {p: s for p, s in absent.values()
                         if not listed_as_regenerated(ds.root, p)}
            if absent and lazy:
                skipped += 1
            elif committed:
                for path, state in sorted(committed.items()):
                    if path not in reported:
                        reported.add(path)
                        yield _absent_problem(path, state)
            else:
                yield from _check_row(ds, definition, rules, row,
                                      {n: p for n, (p, _) in absent.items()}, drawn)
                regenerated |= {p for p, _ in absent.values()}
            for path in tensors.values():
                uses[path] -= 1
                if uses[path] == 0:
                    drawn.pop(path, None)
    if regenerated:
        yield (f"{len(regenerated)} large sample tensor(s) not on disk were drawn in memory "
               "and verified, not written (as an audit does; --lazy skips them)")
    if skipped:
        yield f"{skipped} workload(s) not checked: tensors not present locally (--lazy)"
    yield from _check_expected(ds, lazy, reported)


def _check_expected(ds: Dataset, lazy: bool, reported: set[str]) -> Iterator[DataError | str]:
    """Each receipt's engine outputs (``expected_output``): on disk, hashing to their
    names, with the shape and dtype of the definition's output at the workload's axes.

    Receipts that ``check_files`` already blames (no workload, another definition, an
    ``expected_output`` that does not fit) are left to it.
    """
    rows = {row.value.workload.uuid: row for rows in ds.workloads.values() for row in rows}
    skipped = 0
    for uuid, located in ds.receipts.items():
        receipt, row = located.value, rows.get(uuid)
        if (row is None or receipt.definition not in ds.definitions
                or row.value.definition != receipt.definition):
            continue
        try:
            expected = ds.engine_outputs(located)
        except DataError:
            continue
        if not expected:
            continue
        absent = {d.path: state for d in expected.values()
                  if (state := local_state(ds.root / d.path)) != "present"}
        if absent:
            if lazy:
                skipped += 1
                continue
            for path, state in sorted(absent.items()):
                if path not in reported:
                    reported.add(path)
                    yield _absent_problem(path, state)
            continue
        definition = ds.definitions[receipt.definition].value
        axes = row.value.workload.axes
        for name, desc in expected.items():
            try:
                tensor = ds.store.load(desc, "cpu", mapped=True)
            except DataError as err:
                yield err
                continue
            spec = definition.outputs[name]
            want = (definition.shape_of(spec, axes)
                    if all(a in axes for a in definition.var_axes) else None)
            if want is not None and tuple(tensor.shape) != want:
                yield DataError(ds.where(located), f"{desc.path} has shape "
                                f"{tuple(tensor.shape)}; output {name!r} of this workload is "
                                f"{want}", field=f"expected_output.{name}")
            elif tensor.dtype != TORCH_DTYPES[spec.dtype]:
                yield DataError(ds.where(located), f"{desc.path} has dtype {tensor.dtype}; "
                                f"output {name!r} is {spec.dtype}",
                                field=f"expected_output.{name}")
            del tensor
    if skipped:
        yield (f"{skipped} receipt(s) not checked: engine outputs not present locally "
               "(--lazy)")


def _check_row(ds: Dataset, definition, rules, row, absent: dict[str, str],
               drawn: dict[str, torch.Tensor]) -> Iterator[DataError]:
    """Load one workload (drawing its absent regenerable tensors), apply its value rules.

    A function of its own so that nothing of this row (a mapped or drawn multi-GB tensor)
    is still referenced while the next row loads: holding two rows' weights at once is
    what made ``check`` peak at twice the largest weight.
    """
    try:
        missing = {n for n, path in absent.items() if path not in drawn}
        if missing:
            fresh = regenerate_in_memory(ds, row, missing)
            drawn.update({absent[n]: fresh[n] for n in missing})
            del fresh
        values = ds.materialise_inputs(definition, row, "cpu", mapped=True,
                                       provided={n: drawn[p] for n, p in absent.items()})
    except DataError as err:
        yield err
        return
    if rules is not None:
        for problem in rules(definition.name, dict(zip(definition.inputs, values))):
            yield DataError(ds.where(row), problem, field="value rule")


def run_check(root: str | Path, lazy: bool = False,
              rehash: bool = False) -> tuple[list[str], list[str]]:
    """All problems (one line each) and notes, in a stable order.

    The dataset is loaded without resolvers: the checker reads what is on disk and never
    writes into the repository (no LFS fetch, no regeneration, no Hub download).
    ``rehash``: hash every tensor file again, whatever the verified-hash cache holds.
    """
    ds = open_dataset(root, resolvers=[])
    if rehash:
        ds.store.verified = VerifiedFiles(ds.store.verified.path, rehash=True)
    problems = [str(p) for p in check_files(ds)]
    notes = []
    with torch.no_grad():
        for item in check_tensors(ds, lazy=lazy):
            (notes if isinstance(item, str) else problems).append(str(item))
    return problems, notes

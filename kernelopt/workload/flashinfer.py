"""Read FlashInfer-Bench workloads: a definition's named axes bound by real workloads.

FlashInfer-Bench (github.com/flashinfer-ai/flashinfer-bench, ``docs/flashinfer_trace/``)
describes a kernel by a **definition** JSON (``name``, ``op_type``, ``axes`` — each
``{"type": "const", "value": int}`` or ``{"type": "var"}`` — and ``inputs``/``outputs`` whose
``shape`` lists axis names, ``null`` for a scalar) and each real call by a **workload**
(``uuid``, ``axes``: a value per var axis, ``inputs``: ``{"type": "random" | "scalar" |
"safetensors", ...}``). Datasets store the workloads of a definition one per line,
wrapped in a trace record ``{"definition": name, "workload": {...}, "solution": null,
"evaluation": null}``; a benchmark trace fills ``evaluation.performance.latency_ms``.
Layout: ``definitions/<op_type>/<name>.json`` beside ``workloads/<op_type>/<name>.jsonl``.

Accepted here: that JSONL file (the definition is found through the layout, or passed),
a JSON list of trace records, or one JSON bundle ``{"definition": {...}, "workloads":
[...]}``. The definition's axis names become the profile's axes.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from kernelopt._errors import FormatError, InputError, KernelOptError, expected
from kernelopt._strict_json import loads
from kernelopt.workload._validators import as_path, finite_float, is_file, no_file
from kernelopt.workload.calls import (
    MAX_DIM,
    MAX_DURATION_US,
    Arg,
    Call,
    CallGroup,
    ScalarArg,
    TensorArg,
    Trace,
    _check_name,
)
from kernelopt.workload.dtypes import canonical_dtype
from kernelopt.workload.signatures import OpSignature
from kernelopt.workload.torch_trace import load_json, read_json_bytes

__all__ = ["Definition", "load_definition", "read_flashinfer", "trace_from_records"]

# FlashInfer-Bench op types -> kernelopt kernel families.
_FAMILIES = {
    "mla_paged": "attention",
    "mla_ragged": "attention",
    "gqa_paged": "attention",
    "gqa_ragged": "attention",
    "dsa_paged": "attention",
    "nsa_paged": "attention",
    "rmsnorm": "normalization",
    "fused_add_rmsnorm": "normalization",
    "gemm": "gemm",
    "gdn": "linear-attention",
}
_HINTS = {
    "gemm": {
        "M": "M = 1 makes the GEMM a matrix-vector product: a GEMV path without "
        "tensor-core tiling over M serves it"
    },
}
_REDUCED = {"rmsnorm": ("hidden_size",), "fused_add_rmsnorm": ("hidden_size",)}


class _BadJSON:
    """A line that did not decode, kept in place so it is reported with its number."""

    def __init__(self, message: str) -> None:
        self.message = message


# What `whole` holds when the file is not one JSON document (None is JSON's null).
_UNREAD: Any = object()


def _spans_lines(text: bytes) -> bool:
    """Whether the first JSON value of ``text`` runs past its first non-blank line: a
    document, not JSONL (a line of JSONL decodes alone, or fails for its own content)."""
    first = next((line for line in text.splitlines() if line.strip()), b"")
    try:
        loads(first)
    except json.JSONDecodeError:
        return True
    except ValueError:
        return False
    return False


class Definition:
    """The parts of a FlashInfer-Bench definition that name axes.

    Attributes
    ----------
    name : str
    op_type : str
    const : dict of str to int
        Constant axes and their values.
    var : tuple of str
        Variable axes (bound by each workload).
    inputs : dict of str to (tuple of str or None, str)
        Input name → (axis names, or None for a scalar; dtype).
    """

    def __init__(self, data: object, *, where: str = "definition") -> None:
        if not isinstance(data, dict):
            raise InputError(expected("a definition object", type(data).__name__, where=where))
        name, axes, inputs = data.get("name"), data.get("axes"), data.get("inputs")
        if not isinstance(name, str) or not name:
            raise InputError(expected("a definition name", name, where=where))
        if not isinstance(axes, dict):
            raise InputError(expected("'axes' as an object", type(axes).__name__, where=name))
        if not isinstance(inputs, dict):
            raise InputError(expected("'inputs' as an object", type(inputs).__name__, where=name))
        self.name = name
        op_type = data.get("op_type", "")
        self.op_type = op_type if isinstance(op_type, str) else ""
        self.const: dict[str, int] = {}
        var: list[str] = []
        for axis, spec in axes.items():
            kind = spec.get("type") if isinstance(spec, dict) else None
            if kind == "const":
                value = spec.get("value")
                if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                    raise InputError(
                        expected("a const axis value >= 0", value, where=f"{name}.{axis}")
                    )
                self.const[axis] = value
            elif kind == "var":
                var.append(axis)
            else:
                raise InputError(
                    expected("axis type 'const' or 'var'", kind, where=f"{name}.{axis}")
                )
        self.var = tuple(var)
        self.inputs: dict[str, tuple[tuple[str, ...] | None, str]] = {}
        for input_name, spec in inputs.items():
            if not isinstance(spec, dict):
                raise InputError(expected("an input object", spec, where=f"{name}.{input_name}"))
            shape, dtype = spec.get("shape"), spec.get("dtype", "")
            if shape is not None and not (
                isinstance(shape, list) and all(isinstance(a, str) for a in shape)
            ):
                raise InputError(
                    expected("a list of axis names or null", shape, where=f"{name}.{input_name}")
                )
            unknown = [a for a in shape or () if a not in self.const and a not in self.var]
            if unknown:
                raise InputError(
                    expected("axes declared in 'axes'", unknown, where=f"{name}.{input_name}")
                )
            self.inputs[input_name] = (None if shape is None else tuple(shape), str(dtype))

    def signature(self) -> OpSignature:
        """An :class:`OpSignature` naming every tensor dimension after the definition's axes."""
        covered = {a for shape, _ in self.inputs.values() for a in shape or ()}
        family = _FAMILIES.get(self.op_type, "any")
        if self.op_type in ("mla_paged", "gqa_paged") and "decode" in self.name:
            family = "mla-decode" if self.op_type == "mla_paged" else "decode-attention"
        return OpSignature(
            name=self.name,
            ops=(self.name,),
            family=family,
            tensors={n: shape for n, (shape, _) in self.inputs.items() if shape is not None},
            scalars={a: a for a in self.var if a not in covered},
            reduced=tuple(a for a in _REDUCED.get(self.op_type, ()) if a in covered),
            hints=_HINTS.get(self.op_type, {}),
        )

    def call(self, workload: Mapping[str, Any]) -> Call:
        """The call a workload makes: tensors with the bound shapes, scalar inputs."""
        axes = workload.get("axes")
        if not isinstance(axes, dict):
            raise InputError(expected("workload 'axes' as an object", type(axes).__name__))
        values: dict[str, int] = dict(self.const)
        for axis in self.var:
            if axis not in axes:
                # "got None" would read as a null the workload gave.
                raise InputError(
                    expected(f"an integer for var axis {axis}", "nothing", where="axes")
                )
            value = axes[axis]
            if isinstance(value, bool) or not isinstance(value, int):
                # repr: a string "4" read as the number 4.
                raise InputError(
                    expected(f"an integer for var axis {axis}", repr(value), where="axes")
                )
            if not 0 <= value <= MAX_DIM:
                # Refused later as a tensor's shape ("q_nope.shape"), the message named a
                # list the workload never wrote.
                raise InputError(
                    expected(f"a size in [0, 2**40] for var axis {axis}", value, where="axes")
                )
            values[axis] = value
        extra = sorted(set(axes) - set(self.var))
        if extra:
            raise InputError(expected(f"only the var axes of {self.name}", extra, where="axes"))
        inputs = workload.get("inputs") or {}
        if not isinstance(inputs, dict):
            raise InputError(expected("workload 'inputs' as an object", type(inputs).__name__))
        args: list[Arg] = []
        covered: set[str] = set()
        for name, (shape, dtype) in self.inputs.items():
            if shape is None:
                spec = inputs.get(name)
                if isinstance(spec, dict) and spec.get("type") == "scalar":
                    args.append(ScalarArg(name=name, value=spec.get("value")))
                continue
            covered.update(shape)
            sizes: tuple[int, ...] = tuple(values[a] for a in shape)
            args.append(
                TensorArg(
                    name=name, shape=sizes, dtype=canonical_dtype(dtype) or dtype or "unknown"
                )
            )
        for axis in self.var:
            if axis not in covered:
                args.append(ScalarArg(name=axis, value=values[axis]))
        return Call(op=self.name, args=tuple(args))


def load_definition(source: str | Path | Mapping[str, Any]) -> Definition:
    """Load a FlashInfer-Bench definition from a JSON file or an already decoded object."""
    if isinstance(source, Mapping):
        return Definition(dict(source))
    target = as_path(source, where="definition")
    if not is_file(target):
        # load_json's own words name a trace file, which the definition is not.
        raise InputError(expected("a definition JSON file", no_file(target), where="definition"))
    return Definition(load_json(target), where=str(source))


def _find_definition(path: Path, name: str) -> Path | None:
    # Dataset layout: <root>/workloads/<op_type>/<name>.jsonl and
    # <root>/definitions/<op_type>/<name>.json; also accept the definition beside the file.
    beside = path.parent / f"{name}.json"
    if is_file(beside) and beside != path:
        return beside
    for parent in list(path.parents)[:4]:
        root = parent / "definitions"
        if root.is_dir():
            for candidate in (root / f"{name}.json", *sorted(root.glob(f"*/{name}.json"))):
                if is_file(candidate):
                    return candidate
    return None


def _check_definition_name(name: str) -> None:
    """Refuse a record's definition name that is not a plain file stem: the layout lookup
    would read it as a path or a glob pattern and bind the workloads to another file."""
    _check_name("definition name", name, "definition")
    if name in (".", "..") or any(ch in name for ch in "/\\*?["):
        raise InputError(
            expected("a definition name without path separators or * ? [", name, where="definition")
        )


def _untimed_workload(
    record: Mapping[str, Any],
) -> tuple[str | None, Mapping[str, Any], float | None]:
    """(definition name, workload, duration in us) of a trace record or bare workload."""
    if "workload" in record:
        workload = record["workload"]
        if not isinstance(workload, dict):
            raise InputError(expected("'workload' as an object", type(workload).__name__))
        name = record.get("definition")
        duration = None
        evaluation = record.get("evaluation")
        if isinstance(evaluation, dict):
            perf = evaluation.get("performance")
            if isinstance(perf, dict) and perf.get("latency_ms") is not None:
                latency = perf["latency_ms"]
                ms = None if isinstance(latency, bool) else finite_float(latency)
                # Checked in ms against the bound every duration has in us.
                if ms is None or not 0 <= ms <= MAX_DURATION_US / 1000:
                    raise InputError(
                        expected("a latency in [0, 1e9] ms", latency, where="latency_ms")
                    )
                duration = ms * 1000.0
        return (name if isinstance(name, str) else None), workload, duration
    if "axes" in record:
        return None, record, None
    raise InputError(expected("a workload or a trace record with 'workload'", sorted(record)))


def trace_from_records(
    records: list[tuple[int, Any]],
    *,
    source: str,
    definition: Definition | None = None,
    lookup: Path | None = None,
    unit: str = "line",
) -> Trace:
    """Build a Trace from ``(position, decoded record)`` pairs of workloads or trace records.

    ``lookup`` is the file the records came from, used to find definitions by the dataset
    layout when ``definition`` is not given.
    """
    definitions: dict[str, Definition | None] = {}
    if definition is not None:
        definitions[definition.name] = definition
    notes: list[str] = []
    skipped = 0
    merged: dict[Call, list[Any]] = {}
    named: set[str] = set()  # the definition names the records give
    for position, record in records:
        try:
            if isinstance(record, _BadJSON):
                raise InputError(expected("a JSON object", f"invalid JSON ({record.message})"))
            if not isinstance(record, dict):
                raise InputError(expected("a JSON object", type(record).__name__))
            name, workload, duration = _untimed_workload(record)
            if name is not None:
                _check_definition_name(name)
                named.add(name)
            if name is None and definition is not None:
                name = definition.name
            found = definitions.get(name) if name is not None else None
            if name is not None and name not in definitions:
                path = _find_definition(lookup, name) if lookup is not None else None
                try:
                    found = load_definition(path) if path is not None else None
                except KernelOptError as error:
                    notes.append(f"definition {name}: {error}")
                    found = None
                if found is None and not any(n.startswith(f"definition {name}") for n in notes):
                    notes.append(
                        f"definition {name}: not found; axes come from the workloads' var axes only"
                    )
                definitions[name] = found
            if found is not None:
                call = found.call(workload)
            else:
                axes = workload.get("axes")
                if not isinstance(axes, dict):
                    raise InputError(expected("workload 'axes' as an object", type(axes).__name__))
                args: list[Arg] = [ScalarArg(name=a, value=v) for a, v in axes.items()]
                for a, v in axes.items():
                    if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                        raise InputError(expected("an integer axis value >= 0", v, where=a))
                call = Call(op=name or "workload", args=tuple(args))
        except KernelOptError as error:
            skipped += 1
            if skipped <= 20:
                notes.append(f"{unit} {position}: {error}")
            continue
        acc = merged.setdefault(call, [0, 0, 0.0])
        acc[0] += 1
        if duration is not None:
            acc[1] += 1
            acc[2] += duration
    if skipped > 20:
        notes.append(f"... and {skipped - 20} more malformed workloads")
    if definition is not None and named and definition.name not in named:
        # A definition given for another kernel's workloads was dropped without a word,
        # its axes replaced by those of the definition the layout found, or by none.
        others = sorted(named)
        listed = ", ".join(others[:3]) + (", ..." if len(others) > 3 else "")
        notes.append(
            f"definition {definition.name} (given) was not used: the workloads name {listed}"
        )
    groups = [
        CallGroup(call=c, calls=a[0], timed_calls=a[1], time_us=a[2]) for c, a in merged.items()
    ]
    return Trace(
        source=source,
        format="flashinfer-bench",
        groups=groups,
        records=len(records),
        skipped=skipped,
        notes=notes,
        signatures=tuple(d.signature() for d in definitions.values() if d is not None),
    )


def read_flashinfer(
    path: str | Path, *, definition: str | Path | Mapping[str, Any] | None = None
) -> Trace:
    """Read FlashInfer-Bench workloads (JSONL of trace records, a JSON list, or a bundle).

    Parameters
    ----------
    path : path-like
        ``workloads/<op_type>/<name>.jsonl``, a JSON list of trace records, or a JSON
        bundle ``{"definition": {...}, "workloads": [...]}``.
    definition : path-like or dict, optional
        The definition; by default taken from the bundle or found through the dataset
        layout (``definitions/<op_type>/<name>.json`` under a parent directory).
    """
    target = as_path(path)
    if not is_file(target):
        raise InputError(expected("an existing workload file", no_file(target)))
    given = load_definition(definition) if definition is not None else None
    # Gzip is read too: format detection looks inside compressed files.
    text = bytes(read_json_bytes(target))
    records: list[tuple[int, Any]] = []
    unit = "line"
    whole: Any = _UNREAD
    try:
        whole = loads(text)
    except ValueError as error:  # loads' FormatError (too deep, too many digits) is one too
        if isinstance(error, FormatError) and _spans_lines(text):
            # One document over many lines (a bundle as written by json.dump(indent=...)),
            # valid JSON Python cannot hold: read line by line, each line of it would be
            # reported as broken JSON, and not what is wrong with it.
            raise InputError(
                expected("a FlashInfer-Bench workload file", f"{target}: {error}")
            ) from None
        for lineno, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                records.append((lineno, loads(line)))
            except ValueError as line_error:
                records.append((lineno, _BadJSON(str(line_error))))
    if isinstance(whole, dict) and "workloads" in whole:
        if given is None and "definition" in whole:
            given = load_definition(whole["definition"])
        items = whole["workloads"]
        if not isinstance(items, list):
            raise InputError(
                expected("'workloads' as a list", type(items).__name__, where=str(target))
            )
        records, unit = list(enumerate(items)), "workload"
    elif isinstance(whole, list):
        records, unit = list(enumerate(whole)), "workload"
    elif isinstance(whole, dict):
        records, unit = [(1, whole)], "workload"
    elif whole is not _UNREAD:
        # A number or string alone (NaN, 1e999): a record like any other line, refused
        # with a note, not a file read as holding nothing.
        records = [(1, whole)]
    return trace_from_records(
        records, source=str(target), definition=given, lookup=target, unit=unit
    )

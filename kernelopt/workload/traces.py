"""One entry point for every trace format: :func:`read_trace` and :func:`profile_trace`.

Formats, detected from the content (or forced with ``format=``):

``"jsonl"``
    One call record per line, ``{"op", "args", "duration_us"?}`` (what
    :class:`~kernelopt.workload.Recorder` writes).
``"torch-profiler"``
    A PyTorch profiler Chrome trace recorded with ``record_shapes=True`` (``.json`` or
    ``.json.gz``).
``"flashinfer-bench"``
    FlashInfer-Bench workloads with their definition (JSONL of trace records, a JSON list,
    or a ``{"definition", "workloads"}`` bundle).
"""

from __future__ import annotations

import gzip
import os
import zlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO, Any, cast

from kernelopt._errors import InputError, expected
from kernelopt._strict_json import loads
from kernelopt.workload._validators import as_path, is_file, no_file
from kernelopt.workload.calls import Trace
from kernelopt.workload.flashinfer import read_flashinfer
from kernelopt.workload.jsonl import read_jsonl, utf8_head
from kernelopt.workload.profile import (
    DEFAULT_MAX_SHAPES,
    DEFAULT_MAX_VALUES,
    WorkloadProfile,
    profile_calls,
)
from kernelopt.workload.serialize import SCHEMA
from kernelopt.workload.signatures import OpSignature
from kernelopt.workload.torch_trace import (
    _GzipError,
    _UnheldJSONError,
    load_json,
    trace_from_events,
)

__all__ = ["FORMATS", "detect_format", "profile_trace", "read_trace"]

FORMATS = ("jsonl", "torch-profiler", "flashinfer-bench")
TIMES = ("auto", "host", "device")
_SNIFF_BYTES = 1 << 16


def _kind_of_record(record: object) -> str | None:
    if isinstance(record, dict):
        if "traceEvents" in record:
            return "torch-profiler"
        if "op" in record:
            return "jsonl"
        if "workload" in record or "workloads" in record or ("axes" in record and "uuid" in record):
            return "flashinfer-bench"
    if isinstance(record, list) and record:
        first = record[0]
        if isinstance(first, dict) and "ph" in first:
            return "torch-profiler"
        if isinstance(first, dict) and ("workload" in first or "axes" in first):
            return "flashinfer-bench"
    return None


_SNIFF_LINES = 5


def detect_format(path: str | Path) -> str:
    """The format of a trace file.

    Parameters
    ----------
    path : path-like
        The trace file.

    Returns
    -------
    str
        One of :data:`FORMATS`: ``"jsonl"``, ``"torch-profiler"`` or
        ``"flashinfer-bench"``.

    Raises
    ------
    InputError
        When the file is missing, empty, or in none of the formats.
    """
    target = as_path(path)
    _require_file(target)
    return _detect(target)[0]


def _require_file(target: Path) -> None:
    if not is_file(target):
        raise InputError(expected("an existing trace file", no_file(target)))


def _detect(target: Path) -> tuple[str, Any]:
    """The format of the existing trace file ``target``, and the whole document when telling
    it needed decoding it all (a pretty-printed file), so that the reader does not decode it
    a second time."""
    with open(target, "rb") as handle:
        head = handle.read(_SNIFF_BYTES)
    if head[:2] == b"\x1f\x8b":
        try:
            with gzip.open(target, "rb") as handle:
                head = handle.read(_SNIFF_BYTES)
        except (OSError, EOFError, zlib.error) as error:
            raise InputError(expected("a readable gzip file", f"{target}: {error}")) from None
    # Told apart on UTF-8 text without its mark: a file holding the mark alone is as empty
    # as one holding nothing, and a UTF-16 trace (PowerShell's `>`) is a trace.
    head = utf8_head(head)
    if not head.strip():
        raise InputError(expected("a non-empty trace file", f"{target} (empty)"))
    # The first lines that decode decide: one malformed line at the top of a JSONL trace
    # (a truncated write, a stray header) is skipped by the reader, so here too.
    kind = None
    lines = [line for line in head.lstrip().split(b"\n")[:-1] if line.strip()][:_SNIFF_LINES]
    for line in lines or [head.strip()]:
        try:
            kind = _kind_of_record(loads(line))
        except ValueError:  # loads' FormatError (too deep, too many digits) is one too
            continue
        break
    if kind is not None:
        return kind, None
    if target.suffix == ".jsonl":
        return "jsonl", None
    # A pretty-printed JSON document: decode it whole (profiler traces and definitions are
    # small next to call traces, which are JSONL).
    document = None
    try:
        document = load_json(target)
        kind = _kind_of_record(document)
    except (_GzipError, _UnheldJSONError):
        raise
    except InputError:
        kind = None
    if kind == "jsonl":
        # One call record spread over many lines (json.dumps with indent=): read as JSONL,
        # each of its lines would be a malformed record.
        kind = None
    if kind is None:
        raise InputError(
            expected(
                "a JSONL call trace, a PyTorch profiler trace or FlashInfer-Bench workloads",
                f"{target} ({_unrecognized(document, head)})",
            )
        )
    return kind, document


def _unrecognized(document: Any, head: bytes) -> str:
    """What the file holds instead of a trace, and how to make it one, in words."""
    if isinstance(document, dict) and document.get("schema") == SCHEMA:
        # `inspect --write x.json` writes this; only the markdown form reads back as a trace.
        return (
            "a workload profile written as JSON, not a trace: read it with "
            "profile_from_json, or write a workload_profile.md to give to inspect"
        )
    if isinstance(document, dict) and "op" in document:
        return (
            "one call record written over several lines: a JSONL trace holds one call per "
            "line (json.dumps(record) without indent=)"
        )
    if (
        isinstance(document, list)
        and document
        and all(isinstance(item, dict) and "op" in item for item in document[:_SNIFF_LINES])
    ):
        return (
            "a JSON list of call records: a JSONL trace holds one call per line, not a list "
            "(write each record with json.dumps, then a newline)"
        )
    text = head.lstrip()
    if text.startswith((b"<!-- kernelopt workload-profile", b"#", b"|")):
        return (
            "markdown, not a trace: read a workload_profile.md with read_profile_md "
            "(kernelopt inspect reads both)"
        )
    return "unrecognized content"


def read_trace(
    path: str | Path,
    *,
    format: str | None = None,
    definition: str | Path | Mapping[str, Any] | None = None,
    time: str = "auto",
) -> Trace:
    """Read a trace of kernel calls into distinct call signatures.

    Parameters
    ----------
    path : path-like
        The trace file.
    format : {"jsonl", "torch-profiler", "flashinfer-bench"}, optional
        Skip detection.
    definition : path-like or dict, optional
        FlashInfer-Bench definition for workload files that do not carry one; refused for
        other formats, which would drop it.
    time : {"auto", "host", "device"}
        For profiler traces: keep host op time or GPU kernel time (``"auto"``: kernel time
        when the trace has kernel events). Checked for every format, so that a misspelled
        value fails before the format is known; other formats carry one duration per call,
        so any value but ``"auto"`` is refused for them.

    Returns
    -------
    Trace
        Malformed records are skipped and described in ``Trace.notes``.

    Raises
    ------
    InputError
        When an argument is of the wrong type or value, ``definition`` or ``time`` is given
        for a format that does not read it, or the file is missing or in no known format
        (the message says how to make it one: a JSON list of calls, a call written over
        several lines, a ``workload_profile.md`` for :func:`read_profile_md`).
    """
    return _read_trace(path, format=format, definition=definition, time=time)


def _read_trace(
    path: str | Path,
    *,
    format: str | None,
    definition: str | Path | Mapping[str, Any] | None,
    time: str,
    names: tuple[str, str] = ("definition", "time"),
) -> Trace:
    """:func:`read_trace`, its ``definition`` and ``time`` named ``names`` in errors (the
    command line's ``--definition`` and ``--time``)."""
    target = as_path(path)
    if time not in TIMES:
        raise InputError(expected(f"time in {TIMES}", repr(time), where="time"))
    if format is not None and format not in FORMATS:
        raise InputError(expected(f"a format in {FORMATS}", repr(format), where="format"))
    if definition is not None and not isinstance(definition, (str, os.PathLike, Mapping)):
        raise InputError(
            expected("a definition path or mapping", type(definition).__name__, where="definition")
        )
    if (
        definition is not None
        and not isinstance(definition, Mapping)
        and not is_file(as_path(definition, where="definition"))
    ):
        raise InputError(
            expected("a definition JSON file", no_file(definition), where="definition")
        )
    _require_file(target)
    kind, document = (format, None) if format is not None else _detect(target)
    if kind not in FORMATS:
        raise InputError(expected(f"a format in {FORMATS}", kind, where="format"))
    _refuse_unread(kind, target, definition=definition, time=time, names=names)
    if kind == "jsonl":
        with open(target, "rb") as handle:
            compressed = handle.read(2) == b"\x1f\x8b"
        if compressed:
            # Streamed line by line: memory follows the distinct shapes, as for plain files.
            try:
                with gzip.open(target, "rb") as handle:
                    return read_jsonl(cast(IO[bytes], handle), source=str(target))
            except (OSError, EOFError, zlib.error) as error:  # a truncated or corrupt stream
                raise InputError(expected("a readable gzip file", f"{target}: {error}")) from None
        return read_jsonl(target)
    if kind == "torch-profiler":
        events = document if document is not None else load_json(target)
        return trace_from_events(events, source=str(target), time=time)
    return read_flashinfer(target, definition=definition)


def _refuse_unread(
    kind: str,
    target: Path,
    *,
    definition: object,
    time: str,
    names: tuple[str, str],
) -> None:
    """Refuse a ``definition`` or ``time`` that the trace's format does not read: a JSONL
    trace has one duration per call and its own shapes, so either would be dropped."""
    if definition is not None and kind != "flashinfer-bench":
        raise InputError(
            expected(
                f"{names[0]} only with FlashInfer-Bench workloads",
                f"it with the {kind} trace {target}",
            )
        )
    if time != "auto" and kind != "torch-profiler":
        raise InputError(
            expected(
                f"{names[1]} only with a PyTorch profiler trace",
                f"it with the {kind} trace {target}",
            )
        )


def profile_trace(
    path: str | Path,
    *,
    op: str | None = None,
    format: str | None = None,
    definition: str | Path | Mapping[str, Any] | None = None,
    time: str = "auto",
    signatures: Sequence[OpSignature] = (),
    max_shapes: int = DEFAULT_MAX_SHAPES,
    max_values: int = DEFAULT_MAX_VALUES,
) -> WorkloadProfile:
    """Read the trace at ``path`` and profile it: ``profile_calls(read_trace(path))``.

    See :func:`read_trace` and :func:`~kernelopt.workload.profile_calls` for the arguments.
    """
    trace = read_trace(path, format=format, definition=definition, time=time)
    return profile_calls(
        trace, op=op, signatures=signatures, max_shapes=max_shapes, max_values=max_values
    )

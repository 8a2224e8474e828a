"""Read a PyTorch profiler Chrome trace recorded with ``record_shapes=True``.

``torch.profiler.profile(record_shapes=True).export_chrome_trace(path)`` writes one
``"ph": "X"`` event per op call with ``cat: "cpu_op"`` and, in ``args``, the positional
inputs: ``"Input Dims"`` (a shape per input), ``"Input type"`` (a C++ dtype name for
tensors, ``"Scalar"``/``"ScalarList"`` otherwise), ``"Concrete Inputs"`` (scalar values
as text) and, in recent versions, ``"Input Strides"`` (kept as ``TensorArg.stride``).
Inputs are named from the op's ATen schema for the ops kernelopt knows (``aten::topk`` →
``self, k, dim, largest, sorted``), else ``arg0``, ``arg1``...

Other tools write an op as a pair of ``"ph": "B"`` (begin) and ``"ph": "E"`` (end) events
instead; each pair is read as one complete event, an ``E`` closing the latest open ``B`` of
its thread (``pid``, ``tid``), and the notes count the ``E`` events that close nothing and
the ``B`` events never closed.

Durations: the host time of the op event, or, when the trace holds GPU kernel events
(``cat: "kernel"``), the summed time of the kernels each op launched, itself or through the
ops nested inside it (matched by ``"External id"``). Reading is plain JSON: torch is not
imported.
"""

from __future__ import annotations

import ast
import gzip
import json
import zlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from kernelopt._errors import FormatError, InputError, KernelOptError, expected
from kernelopt._strict_json import loads
from kernelopt._words import count_text
from kernelopt.workload._validators import (
    as_path,
    finite_float,
    is_file,
    no_file,
    positive_int,
    require,
)
from kernelopt.workload.calls import (
    MAX_DURATION_US,
    Arg,
    Call,
    CallGroup,
    ScalarArg,
    TensorArg,
    Trace,
    parse_duration,
)
from kernelopt.workload.dtypes import canonical_dtype
from kernelopt.workload.signatures import base_op_name

__all__ = [
    "ATEN_ARG_NAMES",
    "ATEN_ARG_NAMES_BY_COUNT",
    "MAX_DECOMPRESSED_BYTES",
    "load_json",
    "read_torch_trace",
    "trace_from_events",
]

# Positional input names of common ATen ops, from their schemas (native_functions.yaml).
ATEN_ARG_NAMES: dict[str, tuple[str, ...]] = {
    "softmax": ("self", "dim", "dtype"),
    "log_softmax": ("self", "dim", "dtype"),
    "_softmax": ("self", "dim", "half_to_float"),
    "_log_softmax": ("self", "dim", "half_to_float"),
    "topk": ("self", "k", "dim", "largest", "sorted"),
    "sort": ("self", "dim", "descending"),
    "sum": ("self", "dim", "keepdim", "dtype"),
    "mean": ("self", "dim", "keepdim", "dtype"),
    "nansum": ("self", "dim", "keepdim", "dtype"),
    "prod": ("self", "dim", "keepdim", "dtype"),
    "amax": ("self", "dim", "keepdim"),
    "amin": ("self", "dim", "keepdim"),
    "max": ("self", "dim", "keepdim"),
    "min": ("self", "dim", "keepdim"),
    "argmax": ("self", "dim", "keepdim"),
    "argmin": ("self", "dim", "keepdim"),
    "logsumexp": ("self", "dim", "keepdim"),
    "linalg_vector_norm": ("self", "ord", "dim", "keepdim", "dtype"),
    "var": ("self", "dim", "correction", "keepdim"),
    "std": ("self", "dim", "correction", "keepdim"),
    "scaled_dot_product_attention": (
        "query",
        "key",
        "value",
        "attn_mask",
        "dropout_p",
        "is_causal",
        "scale",
        "enable_gqa",
    ),
    "_scaled_dot_product_flash_attention": (
        "query",
        "key",
        "value",
        "dropout_p",
        "is_causal",
        "return_debug_mask",
        "scale",
    ),
    "_scaled_dot_product_flash_attention_for_cpu": (
        "query",
        "key",
        "value",
        "dropout_p",
        "is_causal",
        "attn_mask",
        "scale",
    ),
    "_scaled_dot_product_efficient_attention": (
        "query",
        "key",
        "value",
        "attn_bias",
        "compute_log_sumexp",
        "dropout_p",
        "is_causal",
        "scale",
    ),
    "_scaled_dot_product_cudnn_attention": (
        "query",
        "key",
        "value",
        "attn_bias",
        "compute_log_sumexp",
        "dropout_p",
        "is_causal",
        "return_debug_mask",
        "scale",
    ),
    "index_select": ("self", "dim", "index"),
    "gather": ("self", "dim", "index", "sparse_grad"),
    "take_along_dim": ("self", "indices", "dim"),
    "mm": ("self", "mat2"),
    "bmm": ("self", "mat2"),
    "matmul": ("self", "other"),
    "addmm": ("self", "mat1", "mat2", "beta", "alpha"),
    "linear": ("input", "weight", "bias"),
    "layer_norm": ("input", "normalized_shape", "weight", "bias", "eps", "cudnn_enable"),
    "rms_norm": ("input", "normalized_shape", "weight", "eps"),
    "native_layer_norm": ("input", "normalized_shape", "weight", "bias", "eps"),
    "native_layer_norm_backward": (
        "grad_out",
        "input",
        "normalized_shape",
        "mean",
        "rstd",
        "weight",
        "bias",
        "output_mask",
    ),
    "_fused_rms_norm": ("input", "normalized_shape", "weight", "eps"),
    "_fused_rms_norm_backward": (
        "grad_out",
        "input",
        "normalized_shape",
        "rstd",
        "weight",
        "output_mask",
    ),
    "cat": ("tensors", "dim"),
}

# Overloads told apart by how many inputs the profiler recorded: sum, mean and prod over
# every dim (``aten::sum(self, *, dtype)``) record the dtype second, where the overloads
# with a dim record the dim; read as a dim, ``dtype=torch.int8`` (ScalarType 1) is dim 1.
ATEN_ARG_NAMES_BY_COUNT: dict[tuple[str, int], tuple[str, ...]] = {
    (op, 2): ("self", "dtype") for op in ("sum", "mean", "prod")
}

_OP_CATEGORIES = ("cpu_op", "operator")
_KERNEL_CATEGORIES = ("kernel",)

# The most bytes a gzip-compressed JSON file may decompress to (4 GiB). The document is
# decoded whole, which takes several times its size in memory; past this a file is more
# likely a decompression bomb or the wrong file than a trace this reader can hold.
MAX_DECOMPRESSED_BYTES = 4 << 30
_CHUNK = 1 << 24


class _GzipError(InputError):
    """A gzip file is broken or decompresses to more than the cap: kept apart from
    malformed content, which format detection takes for "not this format"."""


class _UnheldJSONError(InputError):
    """A JSON document nested too deeply, or holding an integer too long, for Python to
    hold: kept apart from malformed content too, so that format detection names it."""


def read_json_bytes(target: Path, *, max_bytes: int | None = None) -> bytes | bytearray:
    """The bytes of ``target``, decompressed when it is gzip, at most ``max_bytes`` of them.

    Parameters
    ----------
    target : Path
        An existing file.
    max_bytes : int, optional
        The most bytes a gzip file may decompress to (default
        :data:`MAX_DECOMPRESSED_BYTES`). A plain file is read as it is: its size is on disk
        for all to see.

    Returns
    -------
    bytes or bytearray
        The file's content, decompressed.

    Raises
    ------
    InputError
        When the gzip stream is broken or decompresses to more than ``max_bytes``, or
        ``max_bytes`` is not an int >= 1.
    """
    cap = (
        MAX_DECOMPRESSED_BYTES if max_bytes is None else positive_int(max_bytes, where="max_bytes")
    )
    with open(target, "rb") as handle:
        if handle.read(2) != b"\x1f\x8b":
            handle.seek(0)
            return handle.read()
    # Streamed in chunks, so neither the compressed file nor more than `cap` bytes of its
    # content are ever held, however much the stream would expand to.
    data = bytearray()
    try:
        with gzip.open(target, "rb") as stream:
            while chunk := stream.read(min(_CHUNK, cap + 1 - len(data))):
                data += chunk
                if len(data) > cap:
                    raise _GzipError(
                        expected(
                            f"a gzip file that decompresses to at most {cap} bytes",
                            f"{target} (more; a decompressed copy is read without a cap)",
                        )
                    )
    except (OSError, EOFError, zlib.error) as error:
        raise _GzipError(expected("a readable gzip file", f"{target}: {error}")) from None
    return data


_SHAPES_WANTED = "op args with 'Input Dims' (record_shapes=True)"


def _json_name(value: object) -> str:
    """The JSON type of ``value`` in words: ``null``, ``a list``, ``a string``..."""
    if value is None:
        return "null"
    kinds = (
        (bool, "a boolean"),
        ((int, float), "a number"),
        (str, "a string"),
        (list, "a list"),
        (dict, "an object"),
    )
    return next((name for kind, name in kinds if isinstance(value, kind)), type(value).__name__)


def load_json(path: str | Path, *, max_bytes: int | None = None) -> Any:
    """Load a JSON file, gzip-compressed or not (``.json.gz`` profiler traces).

    Parameters
    ----------
    path : path-like
        The file.
    max_bytes : int, optional
        The most bytes a gzip file may decompress to (default
        :data:`MAX_DECOMPRESSED_BYTES`).

    Raises
    ------
    InputError
        When the file is missing, not JSON (or not UTF-8/16/32 text), nested too deeply,
        holds an integer longer than Python converts, or is a gzip file that is broken or
        decompresses to more than ``max_bytes``.
    """
    target = as_path(path)
    if not is_file(target):
        raise InputError(expected("an existing trace file", no_file(target)))
    raw = read_json_bytes(target, max_bytes=max_bytes)
    try:
        # Decoded to text first so that the bytes are freed before the (larger) objects
        # are built; the encoding is the one json.loads would detect on the bytes.
        text = raw.decode(json.detect_encoding(raw), "surrogatepass")
        del raw
        return loads(text)
    except FormatError as error:  # too deep, or an integer longer than Python converts
        raise _UnheldJSONError(expected("a JSON document", f"{target}: {error}")) from None
    except ValueError as error:  # JSONDecodeError, UnicodeDecodeError
        raise InputError(expected("a JSON document", f"{target}: {error}")) from None


def _no_events(data: object) -> str:
    """What a decoded document holds instead of a ``traceEvents`` list, in words: a JSON
    object's keys (the first few), or the type of its ``traceEvents`` or of the document."""
    if not isinstance(data, dict):
        return _json_name(data)
    if "traceEvents" in data:
        return f"'traceEvents' as {_json_name(data['traceEvents'])}"
    keys = sorted(map(str, data))
    shown = ", ".join(keys[:8]) + (", ..." if len(keys) > 8 else "")
    return f"a JSON object without 'traceEvents' (keys: {shown or 'none'})"


def _arg_names(op: str, count: int) -> list[str]:
    short = op.rsplit("::", 1)[-1]
    known = ATEN_ARG_NAMES_BY_COUNT.get((short, count)) or ATEN_ARG_NAMES.get(short, ())
    return [known[i] if i < len(known) else f"arg{i}" for i in range(count)]


def _concrete(text: str) -> Any:
    """Parse a "Concrete Inputs" entry: ``"1"``, ``"0."``, ``"False"``, ``"[1, 2]"``."""
    text = text.strip()
    if text in ("True", "False"):
        return text == "True"
    try:
        value = ast.literal_eval(text)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        # TypeError: a set or dict literal with a list in it ("{[1]: 2}") is unhashable.
        return text
    if isinstance(value, list) and all(
        isinstance(v, (int, float)) and not isinstance(v, bool) for v in value
    ):
        return tuple(value)
    if isinstance(value, (int, float, bool)):
        return value
    return text


def _input_list(args: Mapping[str, Any], key: str) -> list[Any]:
    """The per-input list ``args[key]`` (empty when absent); indexing a string or an
    object instead would read its characters or raise KeyError."""
    value = args.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        raise InputError(expected(f"'{key}' as a list", type(value).__name__))
    return value


def _hashable(value: Any) -> Any:
    """``value`` as a dict key: a JSON list or object (unhashable) by its text."""
    return value if isinstance(value, (str, int, float)) or value is None else repr(value)


def _event_args(op: str, args: Mapping[str, Any], unknown: set[str]) -> list[Arg]:
    dims = args.get("Input Dims")
    if not isinstance(dims, list):
        raise InputError(expected("'Input Dims' as a list", type(dims).__name__))
    types = _input_list(args, "Input type")
    concrete = _input_list(args, "Concrete Inputs")
    strides = _input_list(args, "Input Strides")
    names = _arg_names(op, len(dims))
    out: list[Arg] = []
    for i, (name, dim) in enumerate(zip(names, dims, strict=True)):
        kind = types[i] if i < len(types) and isinstance(types[i], str) else ""
        value = concrete[i] if i < len(concrete) and isinstance(concrete[i], str) else ""
        if kind in ("Scalar", "ScalarList"):
            parsed = _concrete(value) if value != "" else None
            if parsed is not None:
                out.append(ScalarArg(name=name, value=parsed))
        elif kind in ("TensorList", "GenericList"):
            if isinstance(dim, list):
                for j, shape in enumerate(dim):
                    if isinstance(shape, list):
                        out.append(
                            TensorArg(name=f"{name}.{j}", shape=tuple(shape), dtype="unknown")
                        )
        elif kind:
            if not isinstance(dim, list):
                raise InputError(expected("a shape list", dim, where=name))
            canonical = canonical_dtype(kind)
            if canonical is None:
                unknown.add(kind)
            # Strides show an expanded input (stride 0): what makes a gather an index select.
            stride = strides[i] if i < len(strides) else None
            kept = (
                tuple(stride)
                if isinstance(stride, list)
                and len(stride) == len(dim)
                and all(isinstance(v, int) and not isinstance(v, bool) for v in stride)
                else None
            )
            out.append(TensorArg(name=name, shape=tuple(dim), dtype=canonical or kind, stride=kept))
        # An empty type is an omitted optional input (None): nothing to record.
    return out


_INPUT_KEYS = ("Input Dims", "Input type", "Concrete Inputs", "Input Strides")


def _spelling(name: object, args: Mapping[str, Any]) -> str | None:
    """The raw text of what an op event's call is made of: equal texts give equal calls.
    None where it cannot be spelled (nesting too deep for repr)."""
    try:
        return repr((name, *(args.get(key) for key in _INPUT_KEYS)))
    except RecursionError:
        return None


def _event_call(name: object, args: Mapping[str, Any], unknown: set[str]) -> Call | KernelOptError:
    """The call an op event records, or the error that makes it unreadable."""
    try:
        if not isinstance(name, str):
            raise InputError(expected("an op name", name))
        return Call(op=name, args=tuple(_event_args(name, args, unknown)))
    except KernelOptError as error:
        return error


def _event_times(event: Mapping[str, Any]) -> tuple[float, float]:
    """``(ts, dur)`` of an op event, both finite and the duration in [0, 1e12] us.

    Raises
    ------
    InputError
        Naming the field that is missing, not a number, not finite or out of range.
    """
    ts = finite_float(event.get("ts"))
    if ts is None:
        raise InputError(expected("a finite number", event.get("ts"), where="ts"))
    return ts, parse_duration(event.get("dur"), where="dur")


def _span(begin: Mapping[str, Any], end: Mapping[str, Any]) -> object:
    """The duration from a ``B`` event to its ``E`` event: a number when both carry a finite
    ``ts``, else what :func:`_event_times` reports (the ``B``'s own ``ts`` is checked there)."""
    start, stop = finite_float(begin.get("ts")), finite_float(end.get("ts"))
    if start is None:
        return 0.0  # _event_times refuses the B event's ts
    if stop is None:
        return f"the end event's ts {end.get('ts')!r}"
    return stop - start  # an end before the begin is refused as a negative duration


def _complete(begin: Mapping[str, Any], end: Mapping[str, Any]) -> dict[str, Any]:
    """A ``B``/``E`` pair as one ``X`` event: the begin's fields, the duration between the
    two, and the end's ``args`` merged over the begin's (the Chrome trace format's rule)."""
    event = dict(begin)
    event["ph"] = "X"
    event["dur"] = _span(begin, end)
    for key in ("name", "cat"):  # optional on the begin when the end gives them
        if key not in event and key in end:
            event[key] = end[key]
    begin_args, end_args = begin.get("args"), end.get("args")
    if isinstance(end_args, dict):
        event["args"] = {**begin_args, **end_args} if isinstance(begin_args, dict) else end_args
    return event


def _pair_begin_end(events: list[Any]) -> tuple[list[Any], int, int]:
    """``events`` with each ``B``/``E`` pair replaced by one ``X`` event at the ``B``'s
    index (the ``E`` is left, and skipped as other phases are), and the number of ``E``
    events that closed no ``B`` and of ``B`` events of read categories never closed.

    On one thread (``pid``, ``tid``), an ``E`` closes the latest ``B`` still open, so
    nested pairs close inside out. The list is copied only when a pair is found.
    """
    paired: list[Any] | None = None
    open_begins: dict[tuple[Any, Any], list[int]] = {}
    stray_ends = 0
    for index, event in enumerate(events):
        if not isinstance(event, dict):
            continue
        phase = event.get("ph")
        if phase != "B" and phase != "E":
            continue
        thread = (_hashable(event.get("pid")), _hashable(event.get("tid")))
        if phase == "B":
            open_begins.setdefault(thread, []).append(index)
            continue
        stack = open_begins.get(thread)
        if not stack:
            stray_ends += 1
            continue
        begin = stack.pop()
        if paired is None:
            paired = list(events)
        paired[begin] = _complete(events[begin], event)
    read = _OP_CATEGORIES + _KERNEL_CATEGORIES
    unended = sum(
        1
        for stack in open_begins.values()
        for index in stack
        if str(events[index].get("cat", "")).lower() in read
    )
    return (events if paired is None else paired), stray_ends, unended


def _parents(
    events: Sequence[Mapping[str, Any]], ops: list[int], times: Mapping[int, tuple[float, float]]
) -> dict[int, int]:
    """The innermost op event enclosing each op event: on one thread, an op contains the ops
    that start and end inside it. Keys come in start order per thread, children after their
    parents. ``times`` holds the checked ``(ts, dur)`` of each op event."""
    threads: dict[Any, list[int]] = {}
    for index in ops:
        event = events[index]
        thread = (_hashable(event.get("pid")), _hashable(event.get("tid")))
        threads.setdefault(thread, []).append(index)
    parent: dict[int, int] = {}
    for members in threads.values():
        members.sort(key=lambda i: (times[i][0], -times[i][1]))
        stack: list[int] = []
        for index in members:
            start = times[index][0]
            while stack and start >= times[stack[-1]][0] + times[stack[-1]][1]:
                stack.pop()
            if stack:
                parent[index] = stack[-1]
            stack.append(index)
    return parent


def _device_times(
    events: Sequence[Mapping[str, Any]], ops: list[int], parent: Mapping[int, int]
) -> tuple[dict[int, float] | None, int]:
    """Kernel time per op event index, including kernels of nested ops (None without
    kernels), and the number of kernel events skipped for a duration that is not a finite
    number up to 1e12 us."""
    by_external: dict[Any, float] = {}
    bad = 0
    for event in events:
        if isinstance(event, dict) and str(event.get("cat", "")).lower() in _KERNEL_CATEGORIES:
            args = event.get("args") or {}
            ext = _hashable(args.get("External id")) if isinstance(args, dict) else None
            dur = event.get("dur")
            if ext is None or isinstance(dur, bool) or not isinstance(dur, (int, float)):
                continue
            value = finite_float(dur)
            if value is None or value > MAX_DURATION_US:
                # One infinite kernel would make its op's time, and the trace's, infinite.
                bad += 1
                continue
            by_external[ext] = by_external.get(ext, 0.0) + max(value, 0.0)
    if not by_external:
        return None, bad
    total: dict[int, float] = {}
    for index in ops:
        args = events[index].get("args") or {}
        total[index] = by_external.get(_hashable(args.get("External id")), 0.0)
    # _parents lists each child after its parent (in start order per thread), so adding
    # from the last child back sums whole subtrees.
    for index in reversed(parent):
        total[parent[index]] += total[index]
    return total, bad


def _events(count: int, phase: str) -> str:
    """``"1 'E' event"``, ``"2 'E' events"``."""
    return count_text(count, f"{phase!r} event")


def trace_from_events(data: object, *, source: str, time: str = "auto") -> Trace:
    """Build a :class:`~kernelopt.workload.calls.Trace` from a decoded Chrome trace.

    Parameters
    ----------
    data : dict or list
        ``{"traceEvents": [...]}`` or the bare event list.
    source : str
        Name recorded as the trace's source.
    time : {"auto", "host", "device"}
        Which duration to keep: the op's host time, or the GPU kernel time it launched;
        ``"auto"`` takes device time when the trace has kernel events.
    """
    if time not in ("auto", "host", "device"):
        raise InputError(expected("time in {'auto', 'host', 'device'}", time, where="time"))
    require(source, str, "a source name (str)", where="source")
    events = data.get("traceEvents") if isinstance(data, dict) else data
    if not isinstance(events, list):
        raise InputError(
            expected("a Chrome trace with a 'traceEvents' list", f"{source}: {_no_events(data)}")
        )
    ops: list[int] = []
    times: dict[int, tuple[float, float]] = {}
    unshaped = 0
    shapeless: list[int] = []  # indices of the op events without shapes
    problems = 0
    notes: list[str] = []
    # Begin/end pairs become complete events, so ops and kernels traced either way count.
    events, stray_ends, unended = _pair_begin_end(events)
    if stray_ends:
        notes.append(
            f"skipped {_events(stray_ends, 'E')} without an open 'B' event on the same thread"
        )
    if unended:
        what = "an op or kernel" if unended == 1 else "ops or kernels"
        notes.append(f"skipped {_events(unended, 'B')} ({what}) without an 'E' event to end")

    def reject(index: int, name: object, error: KernelOptError) -> None:
        nonlocal problems
        problems += 1
        if problems <= 20:
            notes.append(f"event {index} ({name}): {error}")

    for index, event in enumerate(events):
        if not isinstance(event, dict) or event.get("ph") != "X":
            continue
        if str(event.get("cat", "")).lower() not in _OP_CATEGORIES:
            continue
        args = event.get("args")
        if not isinstance(args, dict) or "Input Dims" not in args:
            unshaped += 1
            shapeless.append(index)
            continue
        # Checked per event: one NaN start would scramble the nesting of its neighbours,
        # one infinite duration would make the whole trace's time infinite.
        try:
            times[index] = _event_times(event)
        except KernelOptError as error:
            reject(index, event.get("name"), error)
            continue
        ops.append(index)
    read = len(ops) + problems + unended + unshaped
    if ops:
        # Beside ops with shapes, an op event without them (`"args": null`) is a malformed
        # record, skipped and listed as the others are. In a trace none of whose ops has
        # shapes, one note below says how to record them instead.
        for index in shapeless:
            args = events[index].get("args")
            got = "no 'Input Dims' in its args" if isinstance(args, dict) else _json_name(args)
            reject(index, events[index].get("name"), InputError(expected(_SHAPES_WANTED, got)))
    parent = _parents(events, ops, times)
    device, bad_kernels = _device_times(events, ops, parent) if time != "host" else (None, 0)
    if time == "device" and device is None:
        raise InputError(
            expected(
                "GPU kernel events for time='device' (a trace recorded with ProfilerActivity.CUDA)",
                f"none in {source}; time='host' (--time host) reads the ops' host time",
            )
        )
    if bad_kernels:
        notes.append(
            f"skipped {bad_kernels} kernel events whose duration is not a finite number "
            "in [0, 1e12] us"
        )
    # aten::softmax runs aten::_softmax inside it: one call, whose time the outer event
    # already holds, so the inner one is not counted again.
    inner = {
        i
        for i in ops
        if i in parent
        and base_op_name(events[i].get("name")) == base_op_name(events[parent[i]].get("name"))
    }
    if inner:
        pairs = sorted(
            {f"{events[i].get('name')} in {events[parent[i]].get('name')}" for i in inner}
        )
        notes.append(
            f"{len(inner)} op calls nested in a call of the same op counted once, as the outer "
            f"call ({', '.join(pairs[:3])}{', …' if len(pairs) > 3 else ''})"
        )
        ops = [i for i in ops if i not in inner]
    unknown: set[str] = set()
    merged: dict[Call, list[Any]] = {}
    # A step repeats a few signatures thousands of times; building and checking a Call
    # costs far more than spelling its raw inputs, so each distinct spelling is parsed once.
    decoded: dict[str, Call | KernelOptError] = {}
    for index in ops:
        event = events[index]
        name = event.get("name")
        spelling = _spelling(name, event["args"])
        call_or_error = decoded.get(spelling) if spelling is not None else None
        if call_or_error is None:
            call_or_error = _event_call(name, event["args"], unknown)
            if spelling is not None:
                decoded[spelling] = call_or_error
        if isinstance(call_or_error, KernelOptError):
            reject(index, name, call_or_error)
            continue
        call = call_or_error
        dur = device[index] if device is not None else times[index][1]
        acc = merged.setdefault(call, [0, 0, 0.0])
        acc[0] += 1
        acc[1] += 1
        acc[2] += dur
    if problems > 20:
        notes.append(f"... and {problems - 20} more malformed op events")
    if unshaped and not ops:
        notes.append(
            f"{unshaped} op events carry no shapes: record the trace with "
            "torch.profiler.profile(record_shapes=True)"
        )
    if device is not None:
        notes.append("durations are GPU kernel time per op (nested ops included)")
    for dtype in sorted(unknown):
        notes.append(f"unknown dtype {dtype!r}, kept as written")
    groups = [
        CallGroup(call=c, calls=a[0], timed_calls=a[1], time_us=a[2]) for c, a in merged.items()
    ]
    return Trace(
        source=source,
        format="torch-profiler",
        groups=groups,
        records=read,
        skipped=problems + unended,
        notes=notes,
    )


def read_torch_trace(path: str | Path, *, time: str = "auto") -> Trace:
    """Read a PyTorch profiler Chrome trace (``.json`` or ``.json.gz``).

    Parameters
    ----------
    path : path-like
        The file ``export_chrome_trace`` wrote, recorded with ``record_shapes=True``.
    time : {"auto", "host", "device"}
        See :func:`trace_from_events`.
    """
    if time not in ("auto", "host", "device"):  # before reading a large file
        raise InputError(expected("time in {'auto', 'host', 'device'}", time, where="time"))
    return trace_from_events(load_json(path), source=str(path), time=time)

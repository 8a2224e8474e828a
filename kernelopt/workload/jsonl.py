"""Read a JSONL call trace (one call record per line) into distinct call signatures.

The format is the one :func:`~kernelopt.workload.calls.parse_call_record` validates and the
:class:`~kernelopt.workload.Recorder` writes. Traces run to millions of lines, most of them
repeating a handful of shapes with a different duration, so the reader avoids decoding JSON
per line: it cuts the ``"duration_us": <number>`` field out of the raw bytes with one regex
match, looks the rest of the line up in a cache, and decodes JSON only the first time a
line shape is seen. A line whose sizes are new (a trace whose every call has its own
shape) is cut at its tensors' ``shape`` and ``stride`` lists too: its call is built from the
first line of the same layout, without a decode, once that line showed that the lists cut
out are its tensors' sizes. Memory grows with the number of distinct line shapes (the
caches are cleared when they grow past a bound), never with the number of calls.

Malformed lines are skipped and reported with their line numbers.
"""

from __future__ import annotations

import codecs
import itertools
import json
import os
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any

from kernelopt._errors import InputError, KernelOptError, expected
from kernelopt._fileio import _mark_of
from kernelopt._strict_json import TooDeepError, loads, once_each, syntax_error_text
from kernelopt.workload._validators import as_path, is_file, no_file
from kernelopt.workload.calls import (
    MAX_DURATION_US,
    Call,
    CallAggregator,
    GroupTally,
    TensorArg,
    Trace,
    ValuesSummary,
    parse_call_record,
    paused_gc,
    summary_of_numbers,
)

__all__ = ["MAX_LISTED_PROBLEMS", "read_jsonl"]

MAX_LISTED_PROBLEMS = 20
# Raw line shapes remembered at once; past this the cache restarts (aggregates are kept),
# so a trace whose lines all differ (a timestamp per line) costs time, not memory.
_CACHE_LIMIT = 100_000
_KEY = b'"duration_us"'
_SLOW = object()  # cache marker: this line shape needs a full JSON decode every time


# JSON's own whitespace between tokens, for the regexes that cut fields out of a raw line: a
# regex \s would also take \f and \v, which no JSON decode accepts, and a line would then
# be read or refused by whether a line of its layout came before it.
_WS = rb"[ \t\r\n]*"
# A JSON number without sign (negative durations take the slow path and are rejected
# there) that ends where the JSON value ends.
_DURATION = re.compile(
    _WS.join((b'"duration_us"', b":", rb"((?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?)"))
    + b"(?="
    + _WS
    + b"[,}])"
)
_NUM = rb"(-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?)"
# A values summary as the Recorder writes it (compact JSON), or as json.dumps writes it by
# default (a space after each ',' and ':'): cut out of the line like the duration, so lines
# whose lengths change on every call still share one cache entry.
_VALUES_MARK = b'"values"'
_VALUES = re.compile(
    _WS.join((rb'"values"', b":", rb"\{", b'"min"', b":", _NUM, b",", b'"max"', b":", _NUM))
    + _WS.join((b"", b",", b'"mean"', b":", _NUM))
    + b"(?:"
    + _WS.join((b"", b",", b'"std"', b":", _NUM))
    + b")?"
    + _WS.join((b"", rb"\}"))
)


# A tensor's sizes or strides as a JSON list of integers, with JSON's own whitespace (a
# regex \s would also take \f and \v, which no JSON holds): cut out of a line like the
# duration, so that a trace whose every call has its own shape decodes JSON once per
# layout of its lines, not once per line.
_INT = rb"-?(?:0|[1-9][0-9]*)"
_SIZES = re.compile(
    rb'"(shape|stride)"'
    + _WS
    + rb":"
    + _WS
    + rb"\["
    + _WS
    + rb"("
    + _INT
    + rb"(?:"
    + _WS
    + rb","
    + _WS
    + _INT
    + rb")*)?"
    + _WS
    + rb"\]"
)
_STRIDE = b"stride"
# Tensors built from line layouts remembered at once; past this the memory restarts.
_BUILT_LIMIT = 65536

# A line's layout: the text around its sizes and strides, and which of the two each is.
_Layout = tuple[tuple[bytes, ...], tuple[bytes, ...]]


class _Sized:
    """A line cut at its duration and at its tensors' sizes and strides."""

    __slots__ = ("layout", "pieces", "seen", "timed")

    def __init__(self, layout: _Layout, pieces: list[bytes | None], seen: float, timed: int):
        self.layout = layout
        self.pieces = pieces
        self.seen = seen
        self.timed = timed


def _sized(key: bytes | tuple[bytes, bytes], seen: float) -> _Sized | None:
    """A line cut at the sizes and strides of its tensors; None when it holds none.

    ``key`` is the line (its values summaries cut out), or the text before and after its
    one duration, ``seen``, when that was cut out.
    """
    if isinstance(key, tuple):
        text, timed = key[0] + b'"duration_us":@' + key[1], 1
    else:
        text, seen, timed = key, 0.0, 0
    parts = _SIZES.split(text)
    if len(parts) == 1:
        return None
    return _Sized((tuple(parts[0::3]), tuple(parts[1::3])), parts[2::3], seen, timed)


def _dims_of(pieces: list[bytes | None]) -> list[tuple[int, ...]] | None:
    """The integer lists cut out of a line; None for one of more digits than int reads."""
    try:
        return [() if piece is None else tuple(map(int, piece.split(b","))) for piece in pieces]
    except ValueError:
        return None


class _ShapeTemplate:
    """Cache entry of a line layout: the call of its first line, without values summaries,
    and which lists cut out of the line give each tensor's sizes and strides."""

    __slots__ = ("call", "names", "tensors", "timed")

    def __init__(
        self,
        call: Call,
        tensors: tuple[tuple[int, int, int], ...],
        names: tuple[str, ...],
        timed: int,
    ) -> None:
        self.call = call
        # (argument position, index of its sizes, index of its strides or -1) per tensor,
        # indices into the lists cut out of a line.
        self.tensors = tensors
        # The arguments whose values summaries were cut out, in the line's order.
        self.names = names
        # 1 where a duration was cut out of the line, else 0. A line of the same layout
        # whose text holds the marks of a cut ("duration_us":@ or "values":@) where no
        # duration or summary was cut is no JSON: it must be decoded, and refused.
        self.timed = timed

    @classmethod
    def of(
        cls,
        shape: Call,
        fields: tuple[bytes, ...],
        dims: list[tuple[int, ...]],
        names: tuple[str, ...],
        timed: int,
    ) -> _ShapeTemplate | None:
        """The template of a decoded line, when the lists cut out of it are, in order, the
        sizes (and strides) of its tensors and nothing else; None otherwise."""
        at = 0
        tensors = []
        for position, arg in enumerate(shape.args):
            if not isinstance(arg, TensorArg):
                continue
            wanted = {b"shape": arg.shape}
            if arg.stride is not None:
                wanted[_STRIDE] = arg.stride
            found: dict[bytes, int] = {}
            while len(found) < len(wanted):
                if at == len(fields) or fields[at] in found or wanted.get(fields[at]) != dims[at]:
                    return None
                found[fields[at]] = at
                at += 1
            tensors.append((position, found[b"shape"], found.get(_STRIDE, -1)))
        if at != len(fields):
            return None
        return cls(shape, tuple(tensors), names, timed)

    def sized(self, pieces: list[bytes | None], built: dict[Any, TensorArg]) -> Call | None:
        """The call (without values summaries) of a line of this layout; None when its
        sizes are not those of a tensor: the full decode then says why.

        ``built`` maps (template, position, sizes text, strides text) to the tensor they
        give: most tensors of a call recur on other lines beside other tensors (a block
        table of the batch size, a query of a few lengths), built and checked once.
        """
        args = self.call.args
        tensors: dict[int, TensorArg] = {}
        for position, shape_at, stride_at in self.tensors:
            stride = None if stride_at < 0 else pieces[stride_at]
            key = (self, position, pieces[shape_at], stride)
            tensor = built.get(key)
            if tensor is None:
                tensor = self._tensor(args[position], pieces[shape_at], stride)
                if tensor is None:
                    return None
                if len(built) >= _BUILT_LIMIT:
                    built.clear()
                built[key] = tensor
            tensors[position] = tensor
        return self.call.with_tensors(tensors)

    @staticmethod
    def _tensor(arg: Any, shape: bytes | None, stride: bytes | None) -> TensorArg | None:
        """``arg`` with the sizes and strides of a line; None when they are no tensor's."""
        dims = _dims_of([shape] if stride is None else [shape, stride])
        if dims is None:
            return None
        try:
            return arg.with_sizes(dims[0], None if stride is None else dims[1])  # type: ignore[no-any-return]
        except KernelOptError:
            return None


class _ValuesLine:
    """Cache entry of a line whose call carries values summaries."""

    __slots__ = ("group", "summaries")

    def __init__(self, group: GroupTally, summaries: tuple[tuple[str, ValuesSummary], ...]) -> None:
        self.group = group
        self.summaries = summaries


class _ValuesTemplate:
    """Cache entry of a line shape whose values summaries were cut out: the shape's
    accumulator and, in the order they appear in the line, the arguments they belong to."""

    __slots__ = ("group", "names")

    def __init__(self, group: GroupTally, names: tuple[str, ...]) -> None:
        self.group = group
        self.names = names


def _summaries_of(
    found: list[tuple[Any, ...]], names: tuple[str, ...]
) -> tuple[tuple[str, ValuesSummary], ...] | None:
    """The summaries cut out of one line, named; None when one is invalid (the full decode
    then rejects the line with its message). Each item is (min, max, mean, std or None), as
    bytes from the line."""
    if len(found) != len(names):
        return None
    try:
        return tuple(
            (
                name,
                summary_of_numbers(
                    float(low), float(high), float(mean), float(std) if std else None
                ),
            )
            for name, (low, high, mean, std) in zip(names, found, strict=True)
        )
    except (KernelOptError, ValueError):
        return None


def _encoding_of(head: bytes) -> tuple[bytes, str]:
    """The byte-order mark a JSONL file starting with ``head`` has, and its encoding.

    Without a mark, UTF-16 and UTF-32 JSONL are told by their first character, an object's
    ``{``, beside its zero bytes. json.detect_encoding also takes any zero byte among the
    first four for one: a first line of NULs (a block a crash left zero-filled) would then
    make the whole file read as UTF-16. A UTF-8 mark is no part of the returned mark.
    """
    return _mark_of(head, first="{")


def utf8_head(data: bytes) -> bytes:
    """The start of a trace file as UTF-8 without a byte-order mark, for telling its
    format: UTF-16 and UTF-32 text is recognized as :func:`read_jsonl` recognizes it, and
    what does not decode (a character cut at the end of ``data``) reads as U+FFFD."""
    mark, encoding = _encoding_of(data)
    if encoding != "utf-8":
        return data[len(mark) :].decode(encoding, "replace").lstrip("\ufeff").encode("utf-8")
    return data[len(codecs.BOM_UTF8) :] if data.startswith(codecs.BOM_UTF8) else data


def _recoded(first: bytes, handle: IO[bytes], encoding: str) -> Iterator[bytes]:
    """The lines of a UTF-16 or UTF-32 file (PowerShell 5's ``>`` writes UTF-16) as UTF-8.

    ``first`` is what was read of the file already, after its byte-order mark; ``encoding``
    names the byte order (``"utf-16-le"``), so that it is kept even where the decoder starts
    over after a code unit that is no character. A newline is one byte of a two- or
    four-byte character there, so the file is decoded before it is cut into lines. A lone
    surrogate stays one (and is refused with its line as bad UTF-8); bytes cut off at the
    end make the last line malformed, not the whole file unreadable.
    """
    decoder = codecs.getincrementaldecoder(encoding)("surrogatepass")
    pending = ""
    chunk = first
    while chunk:
        try:
            piece = decoder.decode(chunk)
        except UnicodeDecodeError:
            # A code unit that is no character: the line it is in is skipped as malformed.
            piece = "\ufffd"
            decoder.reset()
        # Split only where a line ends: a long line is scanned once, not once a chunk.
        if "\n" in piece:
            *done, pending = (pending + piece).split("\n")
            for line in done:
                yield (line + "\n").encode("utf-8", "surrogatepass")
        else:
            pending += piece
        chunk = handle.read(1 << 16)
    try:
        pending += decoder.decode(b"", final=True)
    except UnicodeDecodeError:  # the file ends inside a character
        pending += "\ufffd"
    if pending:
        yield pending.encode("utf-8", "surrogatepass")


# A run of digits longer than a note should hold (a 400-digit size in a line).
_LONG_DIGITS = re.compile(r"\d{25,}")


def _short_numbers(message: str) -> str:
    """``message`` with each run of more than 24 digits cut to its first 12 and its length
    (``111111111111... (400 digits)``), as the catalog shows a number no float holds."""
    return _LONG_DIGITS.sub(lambda m: f"{m.group()[:12]}... ({len(m.group())} digits)", message)


class _Reader:
    """The state of one pass over a JSONL file."""

    def __init__(self) -> None:
        self.aggregator = CallAggregator()
        self.records = 0
        self.skipped = 0
        self.problems: list[str] = []
        self.unknown_dtypes: set[str] = set()

    def reject(self, lineno: int, message: str) -> None:
        self.skipped += 1
        if len(self.problems) < MAX_LISTED_PROBLEMS:
            self.problems.append(f"line {lineno}: {_short_numbers(message)}")

    def decode(self, line: bytes) -> tuple[Call, float | None] | str:
        """Decode and validate one line; return (call, duration) or the error message."""
        try:
            # A key given twice ({"op": "softmax", "op": "sum"}) would be read as its last
            # value without a word: the line is skipped instead, as profile_from_json does.
            # Without its line end, json's place in the line is a column of this line.
            record = loads(line.rstrip(b"\r\n"), object_pairs_hook=once_each)
        except TooDeepError:
            return "Expected a JSON object, got JSON nested too deeply"
        except KernelOptError as error:  # a key twice, an integer longer than Python converts
            return str(error)
        except ValueError as error:  # JSONDecodeError and UnicodeDecodeError
            detail = (
                syntax_error_text(error) if isinstance(error, json.JSONDecodeError) else "bad UTF-8"
            )
            return f"Expected a JSON object, got invalid JSON ({detail})"
        try:
            return parse_call_record(record, unknown_dtypes=self.unknown_dtypes)
        except KernelOptError as error:
            return str(error)
        except RecursionError:
            return "Expected a JSON object, got JSON nested too deeply"

    def run(self, handle: IO[bytes]) -> None:
        # The hot loop: locals only, one rfind/find/match per line, no JSON decode for a
        # line shape seen before. Attribute updates happen once, after the loop.
        cache: dict[Any, Any] = {}
        # Line layout -> _ShapeTemplate, or _SLOW where its lines need a full decode.
        templates: dict[_Layout, Any] = {}
        built: dict[Any, TensorArg] = {}
        aggregator, shape_type = self.aggregator, _ShapeTemplate
        key_at, match_at, group_type, values_type = _KEY, _DURATION.match, GroupTally, _ValuesLine
        template_type, values_mark = _ValuesTemplate, _VALUES_MARK
        values_split = _VALUES.split
        max_duration = MAX_DURATION_US
        records = 0
        first = handle.readline()
        mark, encoding = _encoding_of(first)
        lines: Iterable[bytes]
        if encoding != "utf-8":
            lines = _recoded(first[len(mark) :], handle, encoding)
        else:
            if first.startswith(codecs.BOM_UTF8):
                first = first[len(codecs.BOM_UTF8) :]
            lines = itertools.chain((first,), handle) if first else iter(())
        for lineno, line in enumerate(lines, 1):
            at = line.rfind(key_at)
            match = None
            # Exactly one "duration_us" key in the line, followed by a plain number: the
            # fast path. Anything else takes the full decode below.
            if at >= 0 and line.find(key_at) == at:
                match = match_at(line, at)
            if match is not None:
                key: Any = (line[:at], line[match.end() :])
                entry = cache.get(key)
                seen = float(match.group(1))
                if seen > max_duration:  # out of range: the full decode rejects it
                    entry = None
                elif entry.__class__ is group_type:
                    records += 1
                    entry.calls += 1
                    entry.timed += 1
                    entry.time += seen
                    continue
                elif entry.__class__ is values_type:
                    records += 1
                    entry.group.bump(entry.summaries, 1, 1, seen)
                    continue
            else:
                key = line
                entry = cache.get(key)
                if entry.__class__ is group_type:
                    records += 1
                    entry.calls += 1
                    continue
                if entry.__class__ is values_type:
                    records += 1
                    entry.group.bump(entry.summaries, 1, 0, 0.0)
                    continue
                if not line.strip():
                    continue
            # A miss. Lines whose values summaries change on every call (what the Recorder
            # writes) miss here every time: retry with the summaries cut out, as for the
            # duration, and read them from the line. Lines without summaries never get here
            # after their first, so their path stays as short as it was.
            found = None
            if values_mark in line:
                # One pass: split() gives the text between the summaries and, after each
                # piece, the four numbers of the summary that followed it.
                parts = values_split(line)
                if len(parts) > 1:
                    found = [tuple(parts[i : i + 4]) for i in range(1, len(parts), 5)]
                    cut = b'"values":@'.join(parts[::5])
            if found:
                at = cut.rfind(key_at)
                match = match_at(cut, at) if at >= 0 and cut.find(key_at) == at else None
                if match is not None:
                    key, seen, timed = (cut[:at], cut[match.end() :]), float(match.group(1)), 1
                else:
                    key, seen, timed = cut, 0.0, 0
                entry = cache.get(key)
                if entry.__class__ is template_type and seen <= max_duration:
                    summaries = _summaries_of(found, entry.names)
                    if summaries is not None:
                        records += 1
                        entry.group.bump(summaries, 1, timed, seen)
                        continue
                    entry = None
            records += 1
            if entry.__class__ is str:
                self.reject(lineno, entry)
                continue
            # A line of a layout seen before, its sizes new (a trace whose every call has
            # its own shape): its call is built from the layout's, without a JSON decode.
            sized = _sized(key, seen if match is not None else 0.0)
            if sized is not None:
                template = templates.get(sized.layout)
                if (
                    template.__class__ is shape_type
                    and sized.seen <= max_duration
                    and template.timed == sized.timed
                    and (found or not template.names)
                ):
                    shape = template.sized(sized.pieces, built)
                    summaries = _summaries_of(found, template.names) if found else ()
                    if shape is not None and summaries is not None:
                        group = aggregator.group_of_shape(shape)
                        group.bump(summaries, 1, sized.timed, sized.seen)
                        if entry is None:
                            # Later lines of this text (its duration and summaries aside)
                            # have these sizes too: counted from the cache, as a decoded
                            # line's are, without cutting, building and hashing a call.
                            if len(cache) >= _CACHE_LIMIT:
                                cache.clear()
                            cache[key] = template_type(group, template.names) if found else group
                        continue
            decoded = self.decode(line)
            if len(cache) >= _CACHE_LIMIT:
                cache.clear()
            if isinstance(decoded, str):
                if match is None and not found:
                    # Without a duration or summaries cut out, the key is the whole line: same
                    # line, same error. A key with either cut out may hold valid lines too,
                    # so the rejection of one line is not remembered for them.
                    cache[key] = decoded
                self.reject(lineno, decoded)
                continue
            call, duration = decoded
            shape, group, summaries = aggregator.place(call)
            if duration is None:
                group.bump(summaries, 1, 0, 0.0)
            else:
                group.bump(summaries, 1, 1, duration)
            if sized is not None and sized.layout not in templates:
                if len(templates) >= _CACHE_LIMIT:
                    templates.clear()
                templates[sized.layout] = self.template(sized, shape, duration, summaries, found)
            if entry is None:
                # The cached accumulator is trusted for later lines of this shape only when
                # the regex found the very duration the JSON decoder found.
                if match is not None:
                    fast = duration is not None and duration == float(match.group(1))
                else:
                    fast = duration is None
                if found and fast:
                    # Trusted only when the summaries cut out of the line, in order, are the
                    # very ones the decoder found.
                    names = tuple(name for name, _ in summaries)
                    fast = len(names) == len(found) and _summaries_of(found, names) == summaries
                    cache[key] = _ValuesTemplate(group, names) if fast else _SLOW
                elif not fast:
                    cache[key] = _SLOW
                elif summaries:
                    cache[key] = _ValuesLine(group, summaries)
                else:
                    cache[key] = group
        self.records += records

    @staticmethod
    def template(
        sized: _Sized,
        shape: Call,
        duration: float | None,
        summaries: tuple[tuple[str, ValuesSummary], ...],
        found: list[tuple[Any, ...]] | None,
    ) -> _ShapeTemplate | object:
        """The template of a decoded line's layout, or _SLOW: trusted only where what was
        cut out of the line (its duration, values summaries, sizes and strides) is what the
        JSON decoder found there."""
        if (duration is None) != (sized.timed == 0) or (
            duration is not None and duration != sized.seen
        ):
            return _SLOW
        names = tuple(name for name, _ in summaries)
        if found:
            if len(names) != len(found) or _summaries_of(found, names) != summaries:
                return _SLOW
        elif summaries:
            return _SLOW  # summaries the cut did not find: they would be read as the first's
        dims = _dims_of(sized.pieces)
        if dims is None:
            return _SLOW
        template = _ShapeTemplate.of(shape, sized.layout[1], dims, names, sized.timed)
        return _SLOW if template is None else template

    def trace(self, source: str) -> Trace:
        notes = list(self.problems)
        if self.skipped > len(self.problems):
            notes.append(f"... and {self.skipped - len(self.problems)} more malformed lines")
        if self.skipped:
            notes.append(f"skipped {self.skipped} of {self.records} lines as malformed")
        for dtype in sorted(self.unknown_dtypes):
            notes.append(f"unknown dtype {dtype!r}, kept as written")
        return Trace(
            source=source,
            format="jsonl",
            groups=self.aggregator.groups(),
            records=self.records,
            skipped=self.skipped,
            notes=notes,
        )


def read_jsonl(path: str | Path | IO[bytes], *, source: str | None = None) -> Trace:
    """Read a JSONL call trace into a :class:`~kernelopt.workload.calls.Trace`.

    Parameters
    ----------
    path : path-like or binary file object
        The trace; one JSON call record per line (blank lines are ignored).
    source : str, optional
        Name recorded as the trace's source (default: the path).

    Returns
    -------
    Trace
        Distinct call signatures with counts and summed durations (microseconds); malformed
        lines are counted in ``skipped`` and listed (the first 20) in ``notes``.

    Raises
    ------
    InputError
        When ``path`` is neither a path nor a binary file object, is an empty path, or names
        no existing file; or ``source`` is not a str.
    """
    if source is not None and not isinstance(source, str):
        raise InputError(
            expected("a source name (str) or None", type(source).__name__, where="source")
        )
    if not isinstance(path, (str, os.PathLike)) and not callable(getattr(path, "readline", None)):
        raise InputError(
            expected("a path or a binary file object", type(path).__name__, where="path")
        )
    if isinstance(path, (str, os.PathLike)):
        # As read_trace words it: "" names no file, and a missing one is no OSError.
        target = as_path(path)
        if not is_file(target):
            raise InputError(expected("an existing trace file", no_file(target), where="path"))
    reader = _Reader()
    with paused_gc():
        if isinstance(path, (str, os.PathLike)):
            with open(path, "rb") as handle:
                reader.run(handle)
            name = source or str(path)
        else:
            reader.run(path)
            name = source or str(getattr(path, "name", "<stream>"))
        return reader.trace(str(name))

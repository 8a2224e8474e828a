"""What the scripts in ``benchmarks/`` share: a check of ``--out`` before any timing, the
message of a script run without the CUDA device it times on, the commit their rows carry,
and the row of a host-side timing.

A script run as ``python benchmarks/<script>.py`` finds this package beside it.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Literal

import attrs

from kernelopt._errors import KernelOptError, expected
from kernelopt.bench import BenchRow, environment, row_from_measurement
from kernelopt.bench.measurement import Measurement
from kernelopt.bench.records import check_appendable

# The checkout the scripts are in: their rows name its commit wherever they are run from.
REPOSITORY = Path(__file__).resolve().parents[2]


def why_unwritable(path: Path) -> str | None:
    """Why rows could not be written to ``path``, or None where they could.

    Nothing is created: a folder yet to be made is checked at its nearest existing
    ancestor, where the write would make it.

    Parameters
    ----------
    path : pathlib.Path
        The rows file, existing or not.

    Returns
    -------
    str or None
        The reason, naming the path that stands in the way.
    """
    if path.is_dir():
        return f"{path} is a folder"
    if path.exists():
        return None if os.access(path, os.W_OK) else f"{path} is not writable"
    folder = path.absolute().parent
    while not folder.exists() and not folder.is_symlink():
        folder = folder.parent
    if not folder.is_dir():
        return f"{folder} is not a folder"
    if not os.access(folder, os.W_OK | os.X_OK):
        return f"{folder} is not writable"
    return None


# What a script does with the file its option names: appends BenchRow lines, appends lines
# of its own JSON records, or writes the whole file anew.
Writes = Literal["bench-rows", "json-lines", "whole-file"]
_APPENDED_ROWS: dict[str, Literal["bench", "json"]] = {
    "bench-rows": "bench",
    "json-lines": "json",
}


def refuse_unwritable_out(
    parser: argparse.ArgumentParser,
    path: Path,
    option: str = "--out",
    *,
    writes: Writes,
) -> None:
    """Exit 2 with a usage error when the run could not write its rows to ``path``.

    Called before the timings: a run that found out at the write lost all of them. Beyond
    a path that cannot be written (a folder, a path under a file, a folder without write
    permission), a file the run appends to is checked as the append will check it
    (:func:`kernelopt.bench.records.check_appendable`): one that is not UTF-8 (a UTF-16
    file), or whose last line is not a whole row (part of one, left by a run stopped while
    it appended), is refused too.

    Parameters
    ----------
    parser : argparse.ArgumentParser
        The script's parser, which reports the error.
    path : pathlib.Path
        Where the rows go.
    option : str, optional
        The option that named ``path`` (or whose default it is).
    writes : {"bench-rows", "json-lines", "whole-file"}
        What the script does with the file: appends :class:`kernelopt.bench.BenchRow`
        lines, appends lines of its own JSON records, or replaces the whole file.
    """
    reason = why_unwritable(path)
    if reason is not None:
        parser.error(
            f"argument {option}: "
            + expected("a file that rows can be written to", f"{path} ({reason})")
        )
    rows = _APPENDED_ROWS.get(writes)
    if rows is None:
        return
    try:
        check_appendable(path, rows=rows)
    except KernelOptError as error:  # FormatError names the file (and line) itself
        parser.error(f"argument {option}: {error}")


def append_json_lines(path: Path, records: Iterable[Mapping[str, object]]) -> None:
    """Append ``records`` to ``path``, one JSON object a line, as a script's own rows.

    The file is checked again as :func:`refuse_unwritable_out` checked it (another run
    may have written it since), and a last line without its newline (saved by an editor)
    gets one first: the first new record glued to it would make neither line JSON.

    Parameters
    ----------
    path : pathlib.Path
        The JSONL file; created, with its folder, when missing.
    records : iterable of mapping
        The records, in order; each becomes one line.

    Raises
    ------
    kernelopt.FormatError
        For a file that is not UTF-8, or whose last line is not a whole JSON object.
    """
    text = "".join(json.dumps(dict(record)) + "\n" for record in records)
    check_appendable(path, rows="json")
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+b") as handle:
        if handle.seek(0, os.SEEK_END) > 0:
            handle.seek(-1, os.SEEK_END)
            if handle.read(1) != b"\n":
                text = "\n" + text
        handle.write(text.encode("utf-8"))


def no_cuda(script: str, *, what: str = "a CUDA device", instead: str | None = None) -> bool:
    """Whether torch finds no CUDA device; where it finds none, say why on stderr.

    The message reads ``<script>: Expected <what>, got none: <why>[; or <instead>]``, where
    ``<why>`` is the library's own reason (:func:`kernelopt.bench.timer.no_cuda_reason`:
    torch missing, a CPU build of torch, or a CUDA build that sees no GPU, and what to do);
    the script then exits 2 without timing anything.

    Parameters
    ----------
    script : str
        The script's name, first in the message.
    what : str, optional
        What the script expected, in words.
    instead : str, optional
        What the user can run instead without a GPU, if anything, as an imperative
        (``"check the script on the CPU with --smoke"``).

    Returns
    -------
    bool
        True where there is no CUDA device (and the message was printed).
    """
    # Here, not at the top: the scripts that time no GPU need no torch.
    from kernelopt.bench.timer import cuda_available, no_cuda_reason

    if cuda_available():
        return False
    reason = no_cuda_reason() + (f"; or {instead}" if instead else "")
    print(f"{script}: " + expected(what, f"none: {reason}"), file=sys.stderr)
    return True


def scripts_commit() -> str | None:
    """The commit of the checkout holding these scripts.

    Returns
    -------
    str or None
        ``git rev-parse HEAD``, with ``-dirty`` where tracked files were edited since;
        None outside a git checkout.
    """
    return environment(REPOSITORY).commit


def with_scripts_commit(rows: Iterable[BenchRow]) -> list[BenchRow]:
    """``rows`` naming the commit of the scripts' checkout.

    ``row_from_measurement`` reads the commit of the folder the script runs in: run from
    anywhere else, a row would name another checkout's commit, or none.

    Parameters
    ----------
    rows : iterable of BenchRow
        The rows made by the run.

    Returns
    -------
    list of BenchRow
        The same rows, in order, with ``commit`` set.
    """
    commit = scripts_commit()
    return [attrs.evolve(row, commit=commit) for row in rows]


def host_time_row(
    samples: list[float],
    *,
    op: str,
    config: dict[str, int | float],
    metrics: dict[str, float],
    note: str = "",
) -> BenchRow:
    """A row of host-clock seconds per call, labelled as CPU time (mode and GPU ``"cpu"``),
    so no reader takes it for device time.

    Parameters
    ----------
    samples : list of float
        Seconds per call, one per timed call.
    op : str
        What was timed (``"judge"``, ``"workload_read"``).
    config : dict
        The sizes the call ran at.
    metrics : dict of str to float
        Rates derived from the samples (``draws_per_s``, ``lines_per_s``).
    note : str, optional
        What the inputs were.

    Returns
    -------
    BenchRow
        Impl ``kernelopt``, unit ``s``, backend ``cpu-perf-counter``.
    """
    timing = Measurement(samples=samples, unit="s", cache="none", backend="cpu-perf-counter")
    row = row_from_measurement(
        timing, op=op, impl="kernelopt", config=config, metrics=metrics, note=note
    )
    return attrs.evolve(row, mode="cpu", gpu="cpu")

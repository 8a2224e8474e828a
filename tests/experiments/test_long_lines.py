"""A file can be 2 MiB of one line: reading any line of it stays linear in its length.

Each case is a pattern that once tried every position of a long line against the rest of
it. The sizes are those at which the quadratic (or worse) version took more than 5 s; read
now, each takes a small fraction of a second, and 2 s leaves room for a slow machine.
"""

from __future__ import annotations

import time  # process_time: this test's CPU time, which other work on the machine does not inflate
from collections.abc import Callable

import pytest

from kernelopt.diagnose import source as diagnose_source
from kernelopt.diagnose.detectors import ignored_prior_research
from kernelopt.experiments.readers import documents, tables
from kernelopt.experiments.readers._files import TextFile
from kernelopt.experiments.readers._markdown import headings, strip_md
from kernelopt.experiments.readers._markdown import tables as markdown_tables
from kernelopt.experiments.readers._metrics import is_profiling_line, metrics_of
from kernelopt.experiments.readers._values import (
    after_arrow,
    correctness_of,
    knobs_of,
    latency_tokens,
    number,
)
from kernelopt.experiments.readers.devlog import read_devlog
from kernelopt.experiments.readers.kernels import named_paths


def _file(path: str, text: str) -> TextFile:
    return TextFile(path=path, text=text, lines=tuple(text.split("\n")))


def _devlog(title: str) -> object:
    return read_devlog(_file("devlog.md", f"## 2026-01-01 {title}\n\n## 2026-01-02 b\n"))


# name: (what is read, the size of the line).
CASES: dict[str, tuple[Callable[[int], object], int]] = {
    "a CLAUDE.md hash line": (
        lambda n: named_paths(_file("CLAUDE.md", "Kernel: k.py\n" + "ab12" * n)),
        10_000,
    ),
    "a CLAUDE.md line of paths": (lambda n: named_paths(_file("CLAUDE.md", "a.py " * n)), 3_500),
    "a line of [": (lambda n: strip_md("[" * n), 55_000),
    "a line of [a](": (lambda n: strip_md("[a](" * n), 60_000),
    "a heading of hashes": (lambda n: headings(["# " + "#" * n + "\x00"]), 30_000),
    "spaces under a table row": (
        lambda n: markdown_tables(["| a | b |", " " * n + "x"]),
        30_000,
    ),
    "spaces before a number": (lambda n: number(" " * n + "x"), 15_000),
    "spaces before an arrow": (lambda n: after_arrow(" " * n + "x"), 35_000),
    "an autotune count": (lambda n: metrics_of("autotune " + "1 " * n + "x"), 8_000),
    "spaces after dram": (lambda n: metrics_of("dram" + " " * n + "x"), 300),
    "a run of digits": (lambda n: correctness_of("1" * n + "x"), 25_000),
    "digits before a knob word": (lambda n: knobs_of("1" * n + "x splits: 4"), 30_000),
    "spaces after a knob phrase": (lambda n: knobs_of("block size" + " " * n + "x"), 25_000),
    "many counted knobs": (lambda n: knobs_of("splits: 4 " * n), 6_500),
    "comma groups before a pass": (lambda n: documents.correctness_in("1," * n), 20_000),
    "a devlog title of (": (lambda n: _devlog("(" * n + "x"), 100_000),
    "a devlog title of profiling": (lambda n: _devlog("profiling " * n), 10_000),
    "a rate column header": (lambda n: tables._rate_unit("a" * n), 60_000),
    "a heading of spaces": (lambda n: headings(["## step" + " " * n + "x"]), 1_700),
    "spaces after a timed number": (
        lambda n: is_profiling_line("ncu 1" + " " * n + "x"),
        35_000,
    ),
    "dotted metric names": (lambda n: is_profiling_line("ncu " + "sm__a." * n), 6_000),
    "a line of conditional expressions": (
        lambda n: diagnose_source._python_branches("x = " + "if " * n),
        20_000,
    ),
    "a recommendation of spaces": (lambda n: ignored_prior_research._terms(" " * n), 2_200),
}


@pytest.mark.parametrize("name", list(CASES))
def test_a_long_line_is_read_in_linear_time(name: str) -> None:
    read, size = CASES[name]
    start = time.process_time()
    read(size)
    assert time.process_time() - start < 2.0


def test_numbers_grouped_by_commas_are_found_in_linear_time() -> None:
    # Found from the start of a run of digits and commas only, not from each of its groups.
    start = time.process_time()
    assert latency_tokens("1,," * 700_000) == []
    assert time.process_time() - start < 2.0

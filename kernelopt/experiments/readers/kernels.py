"""Kernel sources named by CLAUDE.md or snapshotted in experiment folders (read as text only)."""

from __future__ import annotations

import re

from kernelopt.experiments.log import Fact, KernelSource, SourceRef
from kernelopt.experiments.readers._files import SOURCE_SUFFIXES, TextFile, suffix_of

__all__ = ["is_source", "language_of", "named_paths"]

_LANGUAGES = {
    ".py": "python",
    ".triton": "python",
    ".cu": "cuda",
    ".cuh": "cuda",
    ".cl": "opencl",
    ".cpp": "cpp",
    ".cc": "cpp",
    ".cxx": "cpp",
    ".c": "cpp",
    ".h": "cpp",
    ".hpp": "cpp",
    ".mojo": "other",
    ".diff": "diff",
    ".patch": "diff",
}
_PATH = re.compile(r"`?((?:[\w.-]+/)*[\w.-]+\.(?:py|cu|cuh|cl|cpp|cc|cxx|c|h|hpp|triton|mojo))`?")
_KERNEL_WORDS = re.compile(
    r"\b(?:kernel|edits? only|current|optimi[sz]ed|candidate|implementation|solution)\b",
    re.IGNORECASE,
)
_BASELINE_WORDS = re.compile(r"\b(?:baseline|reference|read-only|oracle|ref)\b", re.IGNORECASE)


def language_of(path: str) -> str:
    """``"python"``, ``"cuda"``, ``"opencl"``, ``"cpp"``, ``"diff"`` (a unified diff) or
    ``"other"`` from the file suffix."""
    return _LANGUAGES.get(suffix_of(path), "other")


def is_source(path: str) -> bool:
    """Whether ``path`` names a kernel source file (``.py``, ``.cu``, ``.cpp``, …) by its
    suffix."""
    return suffix_of(path) in SOURCE_SUFFIXES


def named_paths(file: TextFile) -> tuple[Fact | None, Fact | None]:
    """The kernel and baseline paths a CLAUDE.md names, as facts (path text, source line).

    A line mentioning "baseline"/"reference" names the baseline; one mentioning "kernel"/
    "edits only"/"current" names the kernel; the first of each wins.
    """
    kernel: Fact | None = None
    baseline: Fact | None = None
    for number, line in enumerate(file.lines, start=1):
        for match in _PATH.finditer(line):
            path = match.group(1)
            if "." + path.rsplit(".", 1)[-1].lower() not in SOURCE_SUFFIXES or path.startswith("."):
                continue
            fact = Fact(text=path, source=SourceRef(path=file.path, line=number))
            if baseline is None and _BASELINE_WORDS.search(line):
                baseline = fact
            elif kernel is None and _KERNEL_WORDS.search(line):
                kernel = fact
    return kernel, baseline


def source(path: str, text: str, *, role: str, experiment: int | None = None) -> KernelSource:
    """A :class:`KernelSource` for ``path`` with its language."""
    return KernelSource(
        path=path, text=text, language=language_of(path), experiment=experiment, role=role
    )

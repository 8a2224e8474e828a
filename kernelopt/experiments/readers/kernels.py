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
# A path starts where a run of path characters does (or after "//", or after a "/" that
# opens the run): whatever matches further in also matches from there, as part of a longer
# path, and trying every position of a 2 MiB hash or identifier made the search quadratic.
# Names (255 characters) and depth (64 folders) are bounded for the same reason.
_PATH = re.compile(
    r"`?(?<![\w.-])(?<![\w.-]/)"
    r"((?:[\w.-]{1,255}/){0,64}[\w.-]{1,255}\.(?:py|cu|cuh|cl|cpp|cc|cxx|c|h|hpp|triton|mojo))`?"
)
_BACKSLASH = re.compile(r"\\(?=[^\W_])")
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
    "edits only"/"current" names the kernel; the first of each wins. A path that only
    kernel words lead to (between it and the path before it on the line) is the kernel,
    whatever the rest of the line says: "Kernel: k.py.  Baseline: torch" names no baseline
    file.
    """
    kernel: Fact | None = None
    baseline: Fact | None = None
    for number, line in enumerate(file.lines, start=1):
        if kernel is not None and baseline is not None:
            break
        # A Windows path (``kernels\scale.py``) names the same file as ``kernels/scale.py``;
        # a backslash before punctuation (``\_``) is Markdown's escape, not a separator.
        text = _BACKSLASH.sub("/", line)
        # The line's words are looked up once, not once per path: a long line naming
        # thousands of paths would otherwise be searched thousands of times. The words
        # leading to each path are then taken from the sorted list, walked once.
        labels: list[tuple[int, bool]] | None = None
        line_words = (False, False)
        next_label = 0
        after_previous = 0
        for match in _PATH.finditer(text):
            path = match.group(1)
            segment_start, after_previous = after_previous, match.end()
            while path.startswith("./"):  # the folder CLAUDE.md is in: no climb
                path = path[2:]
            # A hidden folder's file is no kernel named for the log; a path that climbs
            # with ".." is kept, to be reported as not followed (read.py).
            hidden = path.startswith(".") and not path.startswith("../")
            if "." + path.rsplit(".", 1)[-1].lower() not in SOURCE_SUFFIXES or hidden:
                continue
            if labels is None:
                labels = sorted(
                    [(m.start(), True) for m in _BASELINE_WORDS.finditer(text)]
                    + [(m.start(), False) for m in _KERNEL_WORDS.finditer(text)]
                )
                line_words = (
                    any(is_baseline for _, is_baseline in labels),
                    any(not is_baseline for _, is_baseline in labels),
                )
            says_baseline = says_kernel = False
            while next_label < len(labels) and labels[next_label][0] < match.start():
                position, is_baseline = labels[next_label]
                next_label += 1
                if position >= segment_start:
                    says_baseline |= is_baseline
                    says_kernel |= not is_baseline
            fact = Fact(text=path, source=SourceRef(path=file.path, line=number))
            if says_kernel and not says_baseline:
                kernel = fact if kernel is None else kernel
            elif baseline is None and line_words[0]:
                baseline = fact
            elif kernel is None and line_words[1]:
                kernel = fact
    return kernel, baseline


def source(path: str, text: str, *, role: str, experiment: int | None = None) -> KernelSource:
    """A :class:`KernelSource` for ``path`` with its language."""
    return KernelSource(
        path=path, text=text, language=language_of(path), experiment=experiment, role=role
    )

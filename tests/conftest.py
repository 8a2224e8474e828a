"""Test configuration shared by every test module.

Without a CUDA device, Triton kernels run through the interpreter on CPU tensors; the
switch must be set before triton is first imported, hence here. Tests marked ``gpu`` are
skipped where no CUDA device is present and are run on a GPU machine before GPU work is
called done.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

try:
    import torch

    HAS_CUDA = torch.cuda.is_available()
except ImportError:  # the torch-free core is still testable
    HAS_CUDA = False

if not HAS_CUDA:
    os.environ.setdefault("TRITON_INTERPRET", "1")

REPO = Path(__file__).resolve().parents[1]
# The suite runs with --import-mode=importlib, which puts no test folder on sys.path: the
# helpers beside this file (no_cuda_words.py) are imported from here.
_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)
# The public optimization logs used as reader/detector test input sit beside the project.
CORPUS = Path(os.environ.get("KERNELOPT_CORPUS", REPO.parent / "shared" / "corpus"))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if HAS_CUDA:
        return
    skip_gpu = pytest.mark.skip(reason="needs a CUDA device")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip_gpu)


@pytest.fixture(autouse=True)
def _recursion_limit_kept() -> Iterator[None]:
    """Give each test the recursion limit it started with. mypy's API, which some tests
    run in-process, raises it to 2**14 and leaves it there, and the readers' tests of
    deeply nested JSON depend on how deep Python follows it."""
    limit = sys.getrecursionlimit()
    yield
    sys.setrecursionlimit(limit)


def require_shared(path: Path, what: str) -> Path:
    """``path`` from the project's ``shared/`` folder beside the checkout (real logs, H200
    anchors). CI must have it: there a missing one fails. A checkout without it (a vendored
    copy) skips the tests that read it, saying so."""
    if path.exists():
        return path
    message = f"Expected {what} at {path}, got nothing there"
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(f"{message} (shared/ beside the checkout; CI requires it)")


def write_files(root: Path, files: dict[str, str]) -> Path:
    """Write each ``{relative path: text}`` of ``files`` under ``root`` as UTF-8, making the
    folders; return ``root`` (a log directory built for one test)."""
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def cli_parsers() -> dict[str, argparse.ArgumentParser]:
    """Every parser of the ``kernelopt`` command line, the top one and each subcommand's,
    by its ``prog`` (``"kernelopt catalog new"``)."""
    from kernelopt import cli

    def walk(parser: argparse.ArgumentParser) -> Iterator[argparse.ArgumentParser]:
        yield parser
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for sub in dict.fromkeys(action.choices.values()):
                    yield from walk(sub)

    return {parser.prog: parser for parser in walk(cli.build_parser())}


# An experiments/summary.md of a baseline (exp 1, 60 us) and one kept attempt (exp 2, 50 us),
# for the tests that read that attempt's result.
FUSED_SUMMARY = """# Experiments Summary

| Exp | Description | Latency | Unit | Correct | Status |
|---|---|---|---|---|---|
| 1 | eager baseline | 60.0 | us | PASS | BASELINE |
| 2 | fused kernel | 50.0 | us | PASS | KEPT |
"""

# Attempt titles that share no words with the usual opportunities (split-KV, fusion, warp
# specialization) and name no catalog entry.
UNRELATED_TITLES = ["hoist reciprocal", "reorder argument checks", "narrower masks"]


def summary_table(titles: list[str]) -> str:
    """An experiments/summary.md table: a torch baseline (exp 1, 100 us), then one kept,
    correct attempt per title (exps 2, 3, ..., each 1 us faster than the one before)."""
    rows = ["| 1 | torch eager baseline | 100 | us | PASS | BASELINE |  |\n"]
    rows += [
        f"| {n} | {title} | {100 - n} | us | PASS | KEPT |  |\n"
        for n, title in enumerate(titles, start=2)
    ]
    header = (
        "| Exp | Description | Latency | Unit | Correct | Status | Tags |\n"
        "|---|---|---|---|---|---|---|\n"
    )
    return header + "".join(rows)


@pytest.fixture
def corpus() -> Path:
    """The directory of real public optimization logs (../shared/corpus)."""
    return require_shared(CORPUS, "the corpus of real logs")


@pytest.fixture
def no_cuda(monkeypatch: pytest.MonkeyPatch) -> None:
    """A machine where torch sees no CUDA device, whatever this one has: every check of the
    library asks torch, so torch itself answers no (on a GPU machine the code under test
    would otherwise find the GPU and run)."""
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)


@pytest.fixture(params=[None, "12.8"], ids=["cpu-build", "no-gpu"])
def why_no_cuda(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch, no_cuda: None
) -> str:
    """Torch sees no CUDA device, as a CPU build (``torch.version.cuda`` None) or as a CUDA
    build that sees no GPU: the words ``no_cuda_reason`` gives for the case."""
    import torch
    from no_cuda_words import BUILT_WITHOUT, SEES_NO_GPU

    monkeypatch.setattr(torch.version, "cuda", request.param)
    return BUILT_WITHOUT if request.param is None else SEES_NO_GPU

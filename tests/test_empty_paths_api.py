"""An empty path names nothing: the API refuses it rather than read the working directory."""

from __future__ import annotations

from pathlib import Path

import pytest

from kernelopt import InputError
from kernelopt.catalog import Catalog, KnowledgeTree
from kernelopt.diagnose import diagnose
from kernelopt.experiments import read_log
from kernelopt.workflow import observe_files


@pytest.mark.parametrize(
    "call",
    [
        lambda: diagnose(""),
        lambda: read_log(""),
        lambda: Catalog.load(""),
        lambda: KnowledgeTree(""),
        lambda: observe_files("", ""),
    ],
    ids=["diagnose", "read_log", "Catalog.load", "KnowledgeTree", "observe_files"],
)
def test_an_empty_path_is_refused(
    call: object, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # From a folder that holds a log, which "" would otherwise have read.
    log = tmp_path / "experiments"
    log.mkdir()
    (log / "summary.md").write_text(
        "| Exp | Description | Latency | Unit | Status |\n|---|---|---|---|---|\n"
        "| 1 | baseline | 10 | us | BASELINE |\n",
        "utf-8",
    )
    monkeypatch.chdir(tmp_path)
    with pytest.raises(InputError, match="got an empty path"):
        call()  # type: ignore[operator]

"""Commands that errors and plans suggest paste as they are: paths are shell-quoted."""

from __future__ import annotations

import json
import os
import shlex
from pathlib import Path
from typing import Any

import pytest

from kernelopt import CatalogError, InputError
from kernelopt._errors import expected
from kernelopt.catalog import EvidenceRow, KnowledgeTree, load_tree, store
from kernelopt.diagnose import Pathology, diagnose

from .catalog.conftest import make_entry, write_entry
from .diagnose.test_checks_on_disk import _seed_log


def _pasted(command: str) -> list[str]:
    """The words a shell makes of ``command``."""
    return shlex.split(command)


def test_the_lint_command_for_a_folder_that_is_no_tree_quotes_its_path(tmp_path: Path) -> None:
    root = tmp_path / "my notes"
    write_entry(root, make_entry(interactions=()))
    for name in ("logs/README.md", "plan.d/plan.md"):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("# Notes\n", encoding="utf-8")
    with pytest.raises(CatalogError) as raised:
        load_tree(root, strict=True)
    command = str(raised.value).split("`")[1]
    assert _pasted(command) == ["kernelopt", "catalog", "lint", str(root)]


def test_the_index_command_after_a_saved_update_quotes_its_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "my knowledge"
    tree = KnowledgeTree(root)
    tree.add(make_entry())
    write = store.atomic_write_text

    def index_refused(path: str | os.PathLike[str], text: str, **kwargs: Any) -> None:
        if Path(path).name == "index.md":
            raise InputError(expected("a folder kernelopt may write in", f"{root}: denied"))
        write(path, text, **kwargs)

    monkeypatch.setattr(store, "atomic_write_text", index_refused)
    row = EvidenceRow(config="b=8", before="9 us", after="7 us", change="-22 %")
    with pytest.raises(InputError) as raised:
        tree.record_evidence(
            "too-many-kv-splits", row, source_type="local experiment", source="exp/2.md"
        )
    command = str(raised.value).split("`")[1]
    assert _pasted(command) == ["kernelopt", "catalog", "index", str(root)]


def test_the_inspector_command_for_a_stale_profile_quotes_its_paths(tmp_path: Path) -> None:
    from kernelopt.workload import profile_trace, write_profile_md

    root = _seed_log(tmp_path / "log")
    trace = root / "runs" / "softmax trace.jsonl"
    trace.parent.mkdir(parents=True)
    call = {"op": "softmax", "args": {"x": {"shape": [4096, 1024], "dtype": "float16"}}}
    small = {"op": "softmax", "args": {"x": {"shape": [8, 128], "dtype": "float16"}}}
    lines = [json.dumps({**call, "duration_us": 320.0})] * 3
    lines += [json.dumps({**small, "duration_us": 5.0})] * 7
    trace.write_text("\n".join(lines) + "\n", encoding="utf-8")
    write_profile_md(profile_trace(str(trace)), str(root / "experiments" / "workload_profile.md"))
    with trace.open("a", encoding="utf-8") as more:  # calls recorded after the profile
        more.write("\n".join(lines) + "\n")
    finding = diagnose(root).finding(Pathology.OVERLOOKED_SHORTCUT)
    assert finding is not None and "may be stale" in finding.summary
    command = finding.actions[0].text.split("`")[1]
    words = _pasted(command)
    assert words[:2] == ["kernelopt", "inspect"] and words[2].endswith("softmax trace.jsonl")
    assert words[3] == "--write" and len(words) == 5

"""An optimization task cut off before its constraints: unknown constraints, not none."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from kernelopt import InputError
from kernelopt.catalog.catalog import BUILTIN_ROOT
from kernelopt.cli import main
from kernelopt.workflow import (
    Change,
    Constraints,
    OptimizationTask,
    from_dict,
    parse_handoff,
    parse_task,
)

HEAD = """\
## Optimization Task: mla_decode v2 -> v3
### Current Bottleneck: Memory-bound -- 54% of the roofline floor
### Optimizations to Apply:
1. [split-kv-flash-decoding](docs/knowledge/optimizations/split-kv-flash-decoding.md) -- split the KV axis into 8 chunks
"""  # noqa: E501
# The same hand-off cut off where its constraints would start (a message limit, a pipe
# closed early), and as written in full.
CUT = HEAD
FULL = HEAD + "\n### Constraints\n- Register budget: 128 registers per thread\n"
SAYS_NONE = HEAD + "\n### Constraints\n- none\n"
EMPTY = HEAD + "\n### Constraints\n"


def test_a_task_cut_off_before_its_constraints_does_not_read_as_none() -> None:
    task = parse_task(CUT)
    assert not task.constraints_stated and task.constraints == Constraints()
    # Rendered, it says no more than the text read: no section, and no `- none` in it.
    assert "### Constraints" not in task.render() and "- none" not in task.render()
    assert parse_task(task.render()) == task
    assert parse_handoff(CUT) == task
    assert parse_handoff(CUT.replace("\n", "\r\n")) == task


@pytest.mark.parametrize("text", [FULL, SAYS_NONE, EMPTY], ids=["full", "none", "empty"])
def test_a_constraints_section_states_them_even_empty(text: str) -> None:
    task = parse_task(text)
    assert task.constraints_stated
    assert task.render().count("### Constraints") == 1
    assert parse_task(task.render()) == task
    # Only the section's presence tells the two apart: the constraints read are the same.
    if text is not FULL:
        assert task.constraints == parse_task(CUT).constraints
        assert task != parse_task(CUT)


def test_unstated_constraints_are_refused_with_constraints() -> None:
    change = Change(what="fuse the combine")
    fields: dict[str, Any] = {
        "kernel": "k",
        "current": "a",
        "new_version": "b",
        "bottleneck": "x",
        "optimizations": [change],
    }
    assert not OptimizationTask(**fields, constraints_stated=False).constraints_stated
    with pytest.raises(
        InputError, match=r"^OptimizationTask.constraints: Expected no constraints where"
    ):
        OptimizationTask(
            **fields, constraints=Constraints(language="triton"), constraints_stated=False
        )
    with pytest.raises(InputError, match=r"^OptimizationTask.constraints_stated: Expected True"):
        OptimizationTask(**fields, constraints_stated="no")  # type: ignore[arg-type]


def test_report_task_says_the_constraints_are_unknown(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    cut = tmp_path / "cut.md"
    cut.write_text(CUT, encoding="utf-8")
    assert main(["report", "task", str(cut)]) == 0
    out, err = capsys.readouterr()
    assert out == parse_task(CUT).render() and "- none" not in out
    assert f"{cut}: no '### Constraints' section" in err and "unknown, not none" in err
    assert main(["report", "task", str(cut), "--check"]) == 1
    out, err = capsys.readouterr()
    assert "no '### Constraints' section (the hand-off may be cut off)" in err
    assert main(["report", "task", str(cut), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["constraints_stated"] is False
    assert from_dict(data, OptimizationTask) == parse_task(CUT)
    # The full hand-off checks clean, and says nothing on stderr: its link leads to the
    # entry's file in the tree beside it.
    full = tmp_path / "full.md"
    full.write_text(FULL, encoding="utf-8")
    entry = "optimizations/split-kv-flash-decoding.md"
    (tmp_path / "docs/knowledge/optimizations").mkdir(parents=True)
    shutil.copyfile(BUILTIN_ROOT / entry, tmp_path / "docs/knowledge" / entry)
    assert main(["report", "task", str(full), "--check"]) == 0
    assert main(["report", "task", str(full)]) == 0
    out, err = capsys.readouterr()
    assert err == "" and "### Constraints" in out

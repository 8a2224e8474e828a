"""A hand-off pasted inside a code fence ends at the fence's closing line.

Notes, devlogs and chat replies quote a hand-off in a fenced block between prose: the
reader takes what is inside the fence, never the closing fence line nor the prose after
it, and a code sample fenced inside one of the hand-off's own sections stays that
section's text.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from kernelopt._errors import FormatError
from kernelopt.cli import main
from kernelopt.workflow import HandoffWarning, parse_profile, parse_task, parse_version

REPO = Path(__file__).resolve().parents[2]

# Each bare hand-off ends in a list, where a closing fence line right after the last item
# would read as more of its text, and a list in the prose after the fence as more items.
TASK = """## Optimization Task: mla_decode v2 -> v3
### Current Bottleneck: Memory-bound -- 54% of the roofline floor
### Optimizations to Apply:
1. [split-kv-flash-decoding](docs/knowledge/optimizations/split-kv-flash-decoding.md) -- split the KV axis into 8 chunks -- rationale: a quarter of the SMs idle
2. fuse the LSE combine into the last split -- rationale: saves a launch

### Constraints
- Language: triton
- Register budget: 128 registers per thread
- keep the mla_decode signature
"""  # noqa: E501

# The trials last, as a designer may write them by hand (render() puts the devlog last).
VERSION = """## New Version: mla_decode v3
### Changes Applied:
- [split-kv-flash-decoding](docs/knowledge/optimizations/split-kv-flash-decoding.md) -- split the KV axis into 8 chunks
### Files:
- Created: kernels/mla_decode_v3.py
### Correctness: PASS -- rel err 1.8e-3 against the float64 reference
### Devlog Entry Written: docs/kernels/mla_decode.md
### Trial Configurations Checked
1. decode [b=32, s=1, t=4096] -- one query token, memory-bound
2. [b=32, s=16, t=4096] -- speculative decoding
"""  # noqa: E501

# No baseline: the Top 3 list is the last section.
PROFILE = """## Profile: mla_decode v3 | b=32, s=1, t=4096
### Stages
| Stage | Duration | TC% | DRAM% | Occ% | Bottleneck | Key Issue |
|-------|----------|-----|-------|------|------------|-----------|
| main | 74.18 us | 8.9 | 48.3 | - | Memory-bound | - |
### Bottleneck: Memory-bound
Root cause: Bytes set the floor.
### Top 3 Opportunities (ranked by estimated impact)
1. Head Grouping (MMA) (`head-grouping-mma-tile`) -- est. 33% gain -- trigger: dram_pct=48
2. CUDA Graphs (`cuda-graphs`) -- est. 8% gain -- trigger: launch_overhead_pct=8
"""

Parser = Callable[[str], Any]
KINDS = [
    pytest.param(parse_task, TASK, id="task"),
    pytest.param(parse_version, VERSION, id="version"),
    pytest.param(parse_profile, PROFILE, id="profile"),
]
# Prose after the fence holding a list of each kind and a level-3 heading: none of it is
# the hand-off's.
AFTER = (
    "\nThat was the hand-off. Next steps:\n\n"
    "- rerun the bench\n"
    "1. compare with v2 -- est. 5% gain -- trigger: none\n"
    "### Notes\n"
    "- the profiler ran on an H200\n"
)


def fenced(bare: str, opener: str = "```markdown", closer: str = "```") -> str:
    """``bare`` in a fenced block between prose, as notes quote a hand-off."""
    return f"Notes on the next version.\n\n{opener}\n{bare}{closer}\n{AFTER}"


@pytest.mark.parametrize(("parse", "bare"), KINDS)
@pytest.mark.parametrize(
    ("opener", "closer"),
    [("```markdown", "```"), ("```", "```"), ("~~~", "~~~"), ("````md", "`````"), ("  ```", "```")],
    ids=["backticks-info", "backticks", "tildes", "longer-closer", "indented"],
)
def test_a_fenced_hand_off_reads_as_the_bare_one(
    parse: Parser, bare: str, opener: str, closer: str
) -> None:
    record = parse(fenced(bare, opener, closer))
    assert record == parse(bare)
    assert parse(record.render()) == record


@pytest.mark.parametrize(("parse", "bare"), KINDS)
def test_the_closing_fence_line_is_no_text_of_the_last_item(parse: Parser, bare: str) -> None:
    # The fence line right after the last item, with no blank line between, would
    # continue that item's text.
    rendered = parse(fenced(bare)).render()
    assert "```" not in rendered
    assert "rerun the bench" not in rendered and "H200" not in rendered


@pytest.mark.parametrize(("parse", "bare"), KINDS)
def test_a_hand_off_after_a_closed_fence_is_read_to_its_next_heading(
    parse: Parser, bare: str
) -> None:
    # A fence before the hand-off, closed, puts nothing around it.
    text = "```python\nprint('x')\n```\n\n" + bare + "\n## Next\n- other\n"
    assert parse(text) == parse(bare)


def _with_sample(bare: str, sample: str) -> str:
    """``bare`` with ``sample`` lines after its first list item (a code sample there)."""
    lines = bare.splitlines(keepends=True)
    first = next(i for i, line in enumerate(lines) if re.match(r"(- |1\. )", line))
    return "".join(lines[: first + 1]) + sample + "".join(lines[first + 1 :])


SAMPLE = "```python\n# keep the launch grid\ngrid = (b, splits)\n```\n"


@pytest.mark.parametrize(("parse", "bare"), KINDS)
def test_a_code_sample_inside_an_item_is_refused_at_its_line(parse: Parser, bare: str) -> None:
    # Its '# comment' is no level-1 heading ending the hand-off, and its closing line does
    # not end a hand-off pasted in a fence of the same backticks: the reader reaches the
    # item, whose one line would lose the code's line breaks, and names the fence.
    with_sample = _with_sample(bare, SAMPLE)
    if parse is parse_profile:  # a Top 3 item's text keeps the sample, as it always read
        record = parse(with_sample)
        assert parse(fenced(with_sample)) == record
        assert parse(fenced(with_sample, "````markdown", "````")) == record
        assert "# keep the launch grid grid = (b, splits)" in record.render()
        return
    for text in (with_sample, fenced(with_sample), fenced(with_sample, "````markdown", "````")):
        with pytest.raises(FormatError, match=r"got a code fence at line \d+: '```python'"):
            parse(text)


def test_a_code_sample_after_a_constraint_is_refused() -> None:
    # It was joined into the item above: "keep the grid ```python # keep the launch ...".
    text = TASK.replace("- keep the mla_decode signature\n", "- keep the grid\n" + SAMPLE)
    for where in (text, fenced(text), fenced(text, "````markdown", "````")):
        with pytest.raises(FormatError, match="a code block in an item is not kept") as caught:
            parse_task(where)
        assert caught.value.section == "Constraints"


def test_a_fence_left_open_hides_no_heading() -> None:
    # A stray or cut-off fence line inside a section is text; the sections after it are
    # still read.
    text = TASK.replace("### Constraints", "```python\n### Constraints")
    with pytest.warns(HandoffWarning, match="got prose '```python'; not read"):
        assert parse_task(text).constraints.language == "triton"
    assert parse_task("Notes\n\n```markdown\n" + TASK).constraints == parse_task(TASK).constraints


@pytest.mark.parametrize(
    ("kind", "parse", "label"),
    [
        ("task", parse_task, "## Optimization Task:"),
        ("version", parse_version, "## New Version:"),
        ("profile", parse_profile, "## Profile:"),
    ],
)
def test_the_hand_offs_in_the_workflow_page_read_as_their_blocks(
    kind: str, parse: Parser, label: str
) -> None:
    text = (REPO / "docs" / "workflow.md").read_text(encoding="utf-8")
    block = re.search(rf"^```\w*\n({re.escape(label)}.*?)^```$", text, re.S | re.M)
    assert block is not None
    assert parse(text) == parse(block.group(1))


def test_report_task_prints_the_workflow_page_hand_off_without_its_fence(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(REPO)
    assert main(["report", "task", "docs/workflow.md"]) == 0
    out, _ = capsys.readouterr()
    assert out.endswith("- keep the mla_decode signature\n")
    assert "```" not in out
    # Its built-in entries' links lead to a project's own tree, which this checkout lacks.
    assert main(["report", "task", "docs/workflow.md", "--check"]) == 1
    _, err = capsys.readouterr()
    assert "'head-grouping-mma-tile' links docs/knowledge/optimizations/" in err
    assert "'dot-input-precision' links docs/knowledge/languages/triton/" in err


def test_report_task_checks_the_workflow_page_where_its_links_lead(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from kernelopt.catalog.catalog import BUILTIN_ROOT

    (tmp_path / "docs").mkdir()
    shutil.copyfile(REPO / "docs" / "workflow.md", tmp_path / "docs" / "workflow.md")
    for entry in (
        "optimizations/head-grouping-mma-tile.md",
        "languages/triton/optimizations/dot-input-precision.md",
    ):
        (tmp_path / "docs" / "knowledge" / entry).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(BUILTIN_ROOT / entry, tmp_path / "docs" / "knowledge" / entry)
    monkeypatch.chdir(tmp_path)
    assert main(["report", "task", "docs/workflow.md", "--check"]) == 0
    out, _ = capsys.readouterr()
    assert out == "docs/workflow.md: OK\n"

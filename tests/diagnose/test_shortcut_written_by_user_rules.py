"""The overlooked-shortcut item on a profile whose shortcuts a rule of the user's found.

The user registered the rule (:func:`kernelopt.workload.register_rule`) in the process that
wrote ``workload_profile.md``; the process that diagnoses the log has not: the finding the
file lists is read back as written, and the item recommends it, as ``kernelopt inspect``
of the file lists it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path

import pytest

from kernelopt import cli
from kernelopt.diagnose import diagnose
from kernelopt.diagnose.model import Pathology
from kernelopt.workload import (
    Call,
    OpProfile,
    Shortcut,
    ShortcutRule,
    TensorArg,
    Thresholds,
    profile_calls,
    register_rule,
    unregister_rule,
    write_profile_md,
)

SUMMARY = """# Experiments Summary

| Exp | Description | Latency | Unit | Correct | Status |
|---|---|---|---|---|---|
| 1 | torch baseline | 20.0 | us | PASS | BASELINE |
| 2 | triton rows kernel, one program per row block | 15.0 | us | PASS | KEPT |
"""


def _whole_blocks(op: OpProfile, _t: Thresholds) -> Iterable[Shortcut]:
    rows = op.axis("x[0]")
    if rows is not None and all(v.value % 128 == 0 for v in rows.values):
        yield Shortcut(
            rule="whole-row-blocks",
            op=op.op,
            axis="x[0]",
            message="rows are a multiple of 128 in every call: a path without the row mask",
            call_share=1.0,
            catalog_ids=("dominant-shape-specialization",),
            guard="x.shape[0] % 128 == 0",
        )


@pytest.fixture
def written_log(tmp_path: Path) -> Iterator[Path]:
    """A log whose profile a process with the rule registered wrote; the rule is gone
    after it, as in a later process."""
    root = tmp_path / "log"
    (root / "experiments").mkdir(parents=True)
    (root / "experiments" / "summary.md").write_text(SUMMARY, encoding="utf-8")
    calls = [
        Call(op="rows_op", args=(TensorArg(name="x", shape=(rows, 64), dtype="float16"),))
        for rows in (128, 256, 384) * 4
    ]
    register_rule(ShortcutRule(id="whole-row-blocks", description="-", check=_whole_blocks))
    try:
        write_profile_md(profile_calls(calls), root / "experiments" / "workload_profile.md")
    finally:
        unregister_rule("whole-row-blocks")
    yield root


def test_a_user_rule_finding_written_to_the_profile_reaches_the_item(written_log: Path) -> None:
    finding = diagnose(written_log).finding(Pathology.OVERLOOKED_SHORTCUT)
    assert finding is not None
    assert "no shortcut covering" not in finding.summary
    assert "x.shape[0] % 128 == 0" in finding.summary
    assert [a.catalog_id for a in finding.actions] == ["dominant-shape-specialization"]


def test_inspect_of_the_written_profile_lists_the_user_rule_finding(
    written_log: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    profile = written_log / "experiments" / "workload_profile.md"
    assert cli.main(["inspect", str(profile)]) == 1
    out = capsys.readouterr().out
    assert "[whole-row-blocks] rows_op: rows are a multiple of 128" in out
    assert "shortcuts: none found" not in out
    assert cli.main(["inspect", str(profile), "--json"]) == 1
    listed = json.loads(capsys.readouterr().out)["shortcuts"]
    assert [s["rule"] for s in listed] == ["whole-row-blocks"]

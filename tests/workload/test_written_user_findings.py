"""Findings of the user's own rules survive a written profile read by another process."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import pytest

from kernelopt.workload import (
    Call,
    OpProfile,
    Shortcut,
    ShortcutRule,
    TensorArg,
    Thresholds,
    find_shortcuts,
    profile_calls,
    read_profile_md,
    register_rule,
    unregister_rule,
    write_profile_md,
)


def _one_row(op: OpProfile, _t: Thresholds) -> Iterable[Shortcut]:
    rows = op.axis("x[0]")
    if rows is not None and rows.size1_share > 0:
        yield Shortcut(
            rule="one-row",
            op=op.op,
            axis="x[0]",
            message="one row: a path over the columns only",
            call_share=rows.size1_share,
            catalog_ids=("size-1-axis-shortcut", "dominant-shape-specialization"),
            guard="x.shape[0] == 1",
        )


@pytest.mark.parametrize("name", ["workload_profile.md", "workload_profile.json"])
def test_a_user_rule_finding_is_read_back_as_written(tmp_path: Path, name: str) -> None:
    calls = [
        Call(op="rows_op", args=(TensorArg(name="x", shape=(rows, 64), dtype="float16"),))
        for rows in (1, 2, 3)
    ]
    profile = profile_calls(calls)
    rule = ShortcutRule(id="one-row", description="-", check=_one_row)
    register_rule(rule)
    (written,) = [s for s in find_shortcuts(profile) if s.rule == "one-row"]
    path = write_profile_md(profile, tmp_path / name)
    unregister_rule("one-row")
    read = read_profile_md(path)
    # Before: "one-row" vanished, the file's findings recomputed with built-in rules only.
    assert read.written_shortcuts == (written,)
    assert [s for s in find_shortcuts(read) if s.rule == "one-row"] == [written]
    # The profile is its data: equal to the one written.
    assert read == profile
    # Explicit rules run those rules only; a registered rule finds it again, once.
    assert find_shortcuts(read, rules=[]) == []
    register_rule(rule)
    assert [s.rule for s in find_shortcuts(read)].count("one-row") == 1

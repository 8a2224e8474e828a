"""`kernelopt catalog match --profile` reads the shape facts a workload profile supports."""

from __future__ import annotations

from pathlib import Path

import pytest

from kernelopt import cli
from kernelopt.workload import Call, TensorArg, profile_calls, write_profile_md


def _softmax_profile(tmp_path: Path) -> Path:
    calls = [
        Call(op="softmax", args=(TensorArg(name="logits", shape=(32, 1), dtype="float32"),))
        for _ in range(9)
    ]
    path = tmp_path / "workload_profile.md"
    write_profile_md(profile_calls(calls), path)
    return path


def test_a_softmax_over_one_element_finds_the_size_1_shortcut(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    profile = _softmax_profile(tmp_path)
    assert cli.main(["catalog", "match", "--profile", str(profile), "--family", "softmax"]) == 0
    captured = capsys.readouterr()
    assert "size-1-axis-shortcut" in captured.out
    assert "softmax_len == 1 (softmax_len=1)" in captured.out
    # Facts the profile reads but no entry conditions on are no user's typing slip.
    assert captured.err == ""


def test_a_typed_shape_wins_and_op_needs_a_profile(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    profile = _softmax_profile(tmp_path)
    args = ["catalog", "match", "--profile", str(profile), "--shape", "softmax_len=4096"]
    assert cli.main(args) == 0
    assert "size-1-axis-shortcut" not in capsys.readouterr().out
    assert cli.main(["catalog", "match", "--op", "softmax", "--shape", "s_q=1"]) == 2
    assert "--op: Expected --op only with --profile" in capsys.readouterr().err

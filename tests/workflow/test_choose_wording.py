"""A refusal that asks to choose names what the caller typed: ``select_row(point=...)``
said "(choose one with --point)"; and the list to choose from shows every one of a
benchmark's implementations, where ``and 1 more (6 in all)`` hid the one wanted."""

from __future__ import annotations

from pathlib import Path

import pytest

from kernelopt._errors import InputError
from kernelopt.cli import main
from kernelopt.workflow import select_row

from .conftest import anchor_row, bench_row, write_rows


def test_select_row_names_its_argument() -> None:
    rows = [anchor_row("splits8", config={"b": b, "s": 1, "t": 4096}) for b in (1, 32)]
    with pytest.raises(InputError, match=r"\(choose one with point=\)"):
        select_row(rows)


def test_learn_names_the_option(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = [anchor_row("splits8", config={"b": b, "s": 1, "t": 4096}) for b in (1, 32)]
    before = write_rows(tmp_path / "a.jsonl", *rows)
    after = write_rows(tmp_path / "b.jsonl", *rows)
    argv = ["learn", "--before", str(before), "--after", str(after), "--entry", "cuda-graphs"]
    assert main([*argv, "--knowledge", str(tmp_path / "kn"), "--dry-run"]) == 2
    assert "(choose one with --point (point=))" in capsys.readouterr().err


def test_every_implementation_is_listed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    impls = [f"kernelopt_{name}" for name in ("naive", "a", "b", "c", "d", "split_kv")]
    rows = write_rows(tmp_path / "r.jsonl", *[bench_row(impl, 10.0) for impl in impls])
    argv = ["report", "profile", "--rows", str(rows), "--kernel", "k", "--version", "v9"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert repr(impls) in err and "more" not in err

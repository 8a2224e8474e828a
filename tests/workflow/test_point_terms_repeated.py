"""A point naming one axis twice (``b=32 b=64``, or ``h`` and its other name ``h_q``) is
refused as such, as a profile heading's point is; ``report profile --point 'b=32 b=64'``
answered that the rows held no such point ("got none").

The command line names the option (``argument --point:``), the Python functions their
``point`` argument."""

from __future__ import annotations

from pathlib import Path

import pytest

from kernelopt._errors import FormatError, InputError
from kernelopt.catalog import KnowledgeTree
from kernelopt.cli import main
from kernelopt.workflow import observe_files, parse_point, select_row

from .conftest import anchor_row, write_rows

REPEATED = [
    ("b=32 b=64", "'b=32 b=64' (b twice)"),
    ("b=32,b=32", "'b=32,b=32' (b twice)"),
    ("s=1,h=16,h_q=128", "'s=1,h=16,h_q=128' (h twice, as h and h_q)"),
]


@pytest.fixture
def rows(tmp_path: Path) -> tuple[Path, Path]:
    """Files of one point each (b=32 s=1 t=4096 h=16), before and after."""
    return (
        write_rows(tmp_path / "v1.jsonl", anchor_row("splits16")),
        write_rows(tmp_path / "v2.jsonl", anchor_row("splits8")),
    )


def _usage_error(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    """The one error line of a command refused as a usage error (exit 2)."""
    with pytest.raises(SystemExit) as exited:
        main(argv)
    assert exited.value.code == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1, err
    return err


@pytest.mark.parametrize(("point", "got"), REPEATED)
def test_report_profile_refuses_an_axis_written_twice(
    capsys: pytest.CaptureFixture[str], rows: tuple[Path, Path], point: str, got: str
) -> None:
    baseline, current = rows
    argv = ["report", "profile", "--rows", str(current), "--baseline", str(baseline)]
    argv += ["--kernel", "mla_decode", "--version", "splits8", "--point", point]
    err = _usage_error(capsys, argv)
    assert err == (
        "kernelopt report profile: error: argument --point: Expected each axis of a trial "
        f"point once, got {got}\n"
    )


def test_learn_refuses_an_axis_written_twice(
    capsys: pytest.CaptureFixture[str], rows: tuple[Path, Path], tmp_path: Path
) -> None:
    before, after = rows
    argv = ["learn", "--before", str(before), "--after", str(after)]
    argv += ["--entry", "split-kv-flash-decoding", "--knowledge", str(tmp_path / "k")]
    err = _usage_error(capsys, [*argv, "--point", "b=32 b=64", "--dry-run"])
    assert "argument --point: Expected each axis of a trial point once, got 'b=32 b=64'" in err
    assert not (tmp_path / "k").exists()


def test_a_mistyped_point_names_the_option_too(
    capsys: pytest.CaptureFixture[str], rows: tuple[Path, Path]
) -> None:
    baseline, current = rows
    argv = ["report", "profile", "--rows", str(current), "--baseline", str(baseline)]
    argv += ["--kernel", "mla_decode", "--version", "splits8", "--point", "s="]
    err = _usage_error(capsys, argv)
    assert "error: argument --point: Expected a point like 'b=32,s=1,t=4096'" in err


@pytest.mark.parametrize(("point", "got"), REPEATED)
def test_select_row_refuses_an_axis_written_twice(point: str, got: str) -> None:
    with pytest.raises(InputError) as caught:
        select_row([anchor_row("splits8")], point=point)
    assert str(caught.value) == f"point: Expected each axis of a trial point once, got {got}"


def test_observe_files_refuses_an_axis_written_twice(rows: tuple[Path, Path]) -> None:
    with pytest.raises(InputError, match=r"point: Expected each axis of a trial point once"):
        observe_files(*rows, point="b=32 b=64")


def test_the_words_are_a_profile_heading_s() -> None:
    # parse_point reads a heading's integer terms (a FormatError, its own syntax); the
    # words for an axis written twice are the same.
    with pytest.raises(FormatError) as heading:
        parse_point("b=32 b=64 s=1 t=4096")
    with pytest.raises(InputError) as filter_:
        select_row([anchor_row("splits8")], point="b=32 b=64 s=1 t=4096")
    what = "Expected each axis of a trial point once, got 'b=32 b=64 s=1 t=4096' (b twice)"
    assert str(heading.value) == what
    assert str(filter_.value) == f"point: {what}"


@pytest.mark.parametrize("point", ["b=32,s=1", "s=1 h_q=16", "decode", "t=~4096"])
def test_points_naming_each_axis_once_still_select(point: str) -> None:
    row = anchor_row("splits8", config={"b": 32, "s": 1, "t": 4096, "h": 16, "point": "t~4096"})
    assert select_row([row], point=point) is row


# The other values `learn` reads for the context are refused under the options typed as
# well: they read "family: ..." and "language: ...", the Python arguments' names.
@pytest.mark.parametrize(
    ("option", "words"),
    [
        ("--family", "--family: Expected a kernel family among any, attention, "),
        ("--language", "--language: Expected a language in cuda, cute-dsl, cutile-dsl, triton "),
    ],
)
def test_learn_names_the_context_options_it_refuses(
    capsys: pytest.CaptureFixture[str],
    rows: tuple[Path, Path],
    tmp_path: Path,
    option: str,
    words: str,
) -> None:
    before, after = rows
    argv = ["learn", "--before", str(before), "--after", str(after), "--dry-run"]
    argv += ["--entry", "split-kv-flash-decoding", "--knowledge", str(tmp_path / "k")]
    assert main([*argv, option, "bogus"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.startswith(f"kernelopt learn: error: {words}"), err
    assert err.endswith(", got 'bogus'\n") and err.count("\n") == 1


def test_learn_takes_a_family_and_language_in_another_spelling(
    capsys: pytest.CaptureFixture[str], rows: tuple[Path, Path], tmp_path: Path
) -> None:
    # Read by the catalog's rules before learn() reads them again: MLA_decode is
    # mla-decode, Triton is triton.
    before, after = rows
    tree = tmp_path / "k"
    argv = ["learn", "--before", str(after), "--after", str(before), "--json"]
    argv += ["--entry", "split-kv-flash-decoding", "--knowledge", str(tree)]
    assert main([*argv, "--family", "MLA_decode", "--language", "Triton"]) == 0
    assert '"action": "new-anti-pattern"' in capsys.readouterr().out
    created = KnowledgeTree(tree).catalog().get("split-kv-flash-decoding-regression")
    assert created.families == ("mla-decode",)
    text = (tree / "anti-patterns" / f"{created.id}.md").read_text(encoding="utf-8")
    assert "(triton) b=32 s=1 t=4096 h=16" in text  # the evidence row's context

"""Writing a result: a file written again keeps its encoding, and a result with its summary
row is written whole or not at all."""

from __future__ import annotations

import codecs
from pathlib import Path

import pytest

from kernelopt._errors import FormatError, InputError
from kernelopt._fileio import read_text
from kernelopt.experiments import (
    ResultRecord,
    ResultRow,
    append_summary,
    canonical,
    log_result,
    parse_result,
    read_log,
    render_result,
    write_plan,
    write_result,
)

_MARKS = {
    "utf-16-le": codecs.BOM_UTF16_LE,
    "utf-16-be": codecs.BOM_UTF16_BE,
    "utf-32-le": codecs.BOM_UTF32_LE,
    "utf-32-be": codecs.BOM_UTF32_BE,
}


def _record(experiment: int = 7, **changes: object) -> ResultRecord:
    base: dict[str, object] = dict(
        experiment=experiment,
        title=f"try {experiment}",
        status="KEPT",
        correctness="PASS",
        date="2026-12-05",
        rows=(ResultRow(point="b=32 s=1", impl="k", median=50.0 + experiment, unit="us"),),
    )
    base.update(changes)
    return ResultRecord(**base)  # type: ignore[arg-type]


def _save_as(path: Path, encoding: str) -> None:
    """Save ``path`` again as an editor would in ``encoding``, after its byte-order mark."""
    path.write_bytes(_MARKS[encoding] + path.read_text(encoding="utf-8").encode(encoding))


@pytest.mark.parametrize("encoding", sorted(_MARKS))
def test_a_result_written_again_keeps_its_encoding(tmp_path: Path, encoding: str) -> None:
    # PowerShell's `>` saves UTF-16 with a byte-order mark; overwrite=True wrote UTF-8 over
    # it, so the file changed encoding under the user's editor.
    path = write_result(tmp_path, _record(title="first"))
    _save_as(path, encoding)
    again = _record(title="second, 49 µs")

    write_result(tmp_path, again, overwrite=True)

    assert path.read_bytes() == _MARKS[encoding] + render_result(again).encode(encoding)
    assert parse_result(read_text(path)) == again
    assert read_log(tmp_path).experiment(7).description == "second, 49 µs"  # type: ignore[union-attr]


def test_a_utf8_result_with_a_mark_keeps_it(tmp_path: Path) -> None:
    # Notepad saves UTF-8 with a mark; the other rewriters keep it, and so does this one.
    path = write_result(tmp_path, _record(title="first"))
    path.write_bytes(codecs.BOM_UTF8 + path.read_bytes())
    again = _record(title="second")
    write_result(tmp_path, again, overwrite=True)
    assert path.read_bytes() == codecs.BOM_UTF8 + render_result(again).encode("utf-8")
    assert parse_result(read_text(path)) == again


def test_a_plan_written_again_keeps_its_encoding(tmp_path: Path) -> None:
    path = write_plan(tmp_path, 7, "# Plan\n\n1. BLOCK_N=64\n")
    _save_as(path, "utf-16-le")
    write_plan(tmp_path, 7, "# Plan\n\n1. BLOCK_N=128\n", overwrite=True)
    assert path.read_bytes() == _MARKS["utf-16-le"] + "# Plan\n\n1. BLOCK_N=128\n".encode(
        "utf-16-le"
    )


_HEADER = (
    "| Exp | Date | Description | Latency | Unit | Speedup | Correct | Status | Tags |\n"
    "|---|---|---|---|---|---|---|---|---|\n"
)
# Summaries append_summary refuses a row: text without a table, a table of other columns,
# and the canonical table shown in a code block only.
_NO_TABLE = [
    "# Experiments\n\nno table yet\n",
    "| id | change |\r\n|---|---|\r\n| 1 | x |\r\n",
    f"# Format\n\n```\n{_HEADER}```\n",
]


@pytest.mark.parametrize("summary", _NO_TABLE)
def test_a_result_the_summary_cannot_take_is_not_written(tmp_path: Path, summary: str) -> None:
    # result.md was written first, then the row was refused: a result no summary lists.
    (tmp_path / "summary.md").write_bytes(summary.encode())
    with pytest.raises(FormatError, match=r"Expected a table with columns Exp \| Date"):
        log_result(tmp_path, _record())
    assert (tmp_path / "summary.md").read_bytes() == summary.encode()
    assert not (tmp_path / "exp_7").exists()


@pytest.mark.parametrize("summary", _NO_TABLE)
def test_a_result_written_again_is_kept_when_the_summary_cannot_take_its_row(
    tmp_path: Path, summary: str
) -> None:
    # overwrite=True replaced the result, then refused its row: the old result was lost.
    path = log_result(tmp_path, _record(title="first"))
    before = path.read_bytes()
    (tmp_path / "summary.md").write_bytes(summary.encode())
    with pytest.raises(FormatError, match="Expected a table with columns"):
        log_result(tmp_path, _record(title="second"), overwrite=True)
    assert path.read_bytes() == before
    assert (tmp_path / "summary.md").read_bytes() == summary.encode()


def test_a_summary_that_is_not_text_refuses_before_the_result_is_written(tmp_path: Path) -> None:
    path = log_result(tmp_path, _record(title="first"))
    before = path.read_bytes()
    (tmp_path / "summary.md").write_bytes(b"| Exp |\xff\n")
    with pytest.raises(FormatError, match="Expected UTF-8 text"):
        log_result(tmp_path, _record(title="second"), overwrite=True)
    assert path.read_bytes() == before


def test_a_folder_named_summary_refuses_before_the_result_is_written(tmp_path: Path) -> None:
    (tmp_path / "summary.md").mkdir()
    with pytest.raises(InputError, match="Expected a file, got a folder at"):
        log_result(tmp_path, _record())
    assert not (tmp_path / "exp_7").exists()


def test_a_result_and_its_row_are_written_together(tmp_path: Path) -> None:
    (tmp_path / "summary.md").write_bytes(_HEADER.encode())
    path = log_result(tmp_path, _record())
    assert path == tmp_path / "exp_7" / "result.md"
    assert parse_result(path.read_text(encoding="utf-8")) == _record()
    log = read_log(tmp_path)
    assert [(e.number, e.latency) for e in log.experiments] == [(7, 57.0)]
    # Written again: one row, the new one, and the new result.
    log_result(tmp_path, _record(title="again", status="REVERTED"), overwrite=True)
    text = (tmp_path / "summary.md").read_text(encoding="utf-8")
    assert text.count("| 7 |") == 1 and "| again |" in text
    assert parse_result(path.read_text(encoding="utf-8")).title == "again"


def test_a_row_already_in_the_summary_is_refused_without_overwrite(tmp_path: Path) -> None:
    append_summary(tmp_path, _record())
    before = (tmp_path / "summary.md").read_bytes()
    with pytest.raises(InputError, match=r"summary\.md row for experiment 7.*overwrite=True"):
        log_result(tmp_path, _record())
    assert (tmp_path / "summary.md").read_bytes() == before
    assert not (tmp_path / "exp_7").exists()


def test_a_result_already_there_is_refused_without_overwrite(tmp_path: Path) -> None:
    path = write_result(tmp_path, _record(title="first"))
    with pytest.raises(InputError, match="pass overwrite=True"):
        log_result(tmp_path, _record(title="second"))
    assert parse_result(path.read_text(encoding="utf-8")).title == "first"
    assert not (tmp_path / "summary.md").exists()


def _failing_summary_write(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make the summary.md write fail as on a full disk; other writes go through."""
    write = canonical.atomic_write_text

    def write_or_fail(path: object, text: str, **options: object) -> None:
        if Path(str(path)).name == "summary.md":
            raise OSError(28, "No space left on device")
        write(path, text, **options)  # type: ignore[arg-type]

    monkeypatch.setattr(canonical, "atomic_write_text", write_or_fail)


def test_a_new_result_is_taken_back_when_its_row_cannot_be_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    append_summary(tmp_path, _record(1))
    before = (tmp_path / "summary.md").read_bytes()
    _failing_summary_write(monkeypatch)
    with pytest.raises(OSError, match="No space left"):
        log_result(tmp_path, _record())
    assert (tmp_path / "summary.md").read_bytes() == before
    assert not (tmp_path / "exp_7").exists()


def test_a_result_written_again_is_put_back_when_its_row_cannot_be_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = log_result(tmp_path, _record(title="first"))
    _save_as(path, "utf-16-be")
    before = path.read_bytes()
    (path.parent / "kernel.py").write_text("x = 1\n", encoding="utf-8")
    _failing_summary_write(monkeypatch)
    with pytest.raises(OSError, match="No space left"):
        log_result(tmp_path, _record(title="second"), overwrite=True)
    assert path.read_bytes() == before
    assert (path.parent / "kernel.py").read_text(encoding="utf-8") == "x = 1\n"


def test_a_result_taken_back_leaves_the_folder_it_found(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The plan was written first: taking the result back keeps the folder and the plan.
    plan = write_plan(tmp_path, 7, "# Plan\n")
    _failing_summary_write(monkeypatch)
    with pytest.raises(OSError, match="No space left"):
        log_result(tmp_path, _record())
    assert sorted(p.name for p in plan.parent.iterdir()) == ["plan.md"]

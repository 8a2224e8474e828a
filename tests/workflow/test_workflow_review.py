"""Reading back several profile hand-offs, --min-effect's range, CR-only devlogs, long lists."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from kernelopt import InputError
from kernelopt.bench import BenchRow
from kernelopt.cli import main
from kernelopt.workflow import observe_files, observe_rows, perf_rows_from_bench, update_devlog

from .conftest import POINT, anchor_row, bench_row, write_rows
from .test_task import TEXT as TASK_TEXT
from .test_version import TEXT as VERSION_TEXT


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _usage_error(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    with pytest.raises(SystemExit) as raised:
        main(list(argv))
    assert raised.value.code == 2
    return capsys.readouterr().err


@pytest.fixture
def two_points(tmp_path: Path) -> Path:
    """The hand-offs `report profile --rows` prints for rows of two trial points."""
    small = anchor_row("splits8")
    large = anchor_row("splits8", config={**POINT, "b": 64})
    return write_rows(tmp_path / "two.jsonl", small, large)


def _rows_output(capsys: pytest.CaptureFixture[str], rows: Path, *extra: str) -> str:
    code, out, _ = run(
        capsys,
        "report",
        "profile",
        "--rows",
        str(rows),
        "--kernel",
        "mla_decode",
        "--version",
        "splits8",
        *extra,
    )
    assert code == 0 and out.count("## Profile:" if not extra else '"kernel"') == 2
    return out


def test_report_profile_reads_back_every_hand_off_rows_prints(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, two_points: Path
) -> None:
    saved = tmp_path / "profiles.md"
    saved.write_text(_rows_output(capsys, two_points), encoding="utf-8")
    code, out, _ = run(capsys, "report", "profile", str(saved))
    # Both points, joined as --rows joins them: the text is a fixed point.
    assert (code, out) == (0, saved.read_text(encoding="utf-8"))
    code, out, _ = run(capsys, "report", "profile", str(saved), "--json")
    # A list, one per hand-off, as `--rows --json` prints it.
    from_rows = json.loads(_rows_output(capsys, two_points, "--json"))
    read = json.loads(out)
    assert code == 0 and [item["point"] for item in read] == [item["point"] for item in from_rows]
    assert [item["point"]["b"] for item in read] == [32, 64]


def test_report_profile_checks_every_hand_off(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, two_points: Path
) -> None:
    text = _rows_output(capsys, two_points)
    second = text.index("## Profile:", 1)
    known = "(`vectorized-coalesced-loads`)"
    assert known in text[second:]
    # Only the second hand-off names an unknown id: a check of the first alone passes.
    saved = tmp_path / "profiles.md"
    saved.write_text(
        text[:second] + text[second:].replace(known, "(`no-such-entry`)"), encoding="utf-8"
    )
    code, _, err = run(capsys, "report", "profile", str(saved), "--check")
    assert code == 1, err
    assert "b=64, s=1, t=4096, h=16: unknown entry id 'no-such-entry'" in err, err


def test_parse_profiles_reads_every_hand_off(
    capsys: pytest.CaptureFixture[str], two_points: Path
) -> None:
    from kernelopt.workflow import parse_profile, parse_profiles

    text = _rows_output(capsys, two_points)
    reports = parse_profiles(text, path="profiles.md")
    assert [report.point.b for report in reports] == [32, 64]
    assert reports[0] == parse_profile(text)
    assert "\n".join(report.render() for report in reports) == text


@pytest.mark.parametrize(
    ("command", "text", "kind"),
    [
        ("task", TASK_TEXT, "optimization task"),
        ("version", VERSION_TEXT, "new version"),
    ],
)
def test_report_refuses_a_second_task_or_version(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, command: str, text: str, kind: str
) -> None:
    # A task (or version) hand-off is one per file: the second would be dropped unseen.
    saved = tmp_path / "two.md"
    saved.write_text(text + "\n" + text.replace("mla_decode", "other"), encoding="utf-8")
    second = text.count("\n") + 2
    for extra in ((), ("--check",), ("--json",)):
        code, out, err = run(capsys, "report", command, str(saved), *extra)
        assert (code, out) == (1, ""), out
        assert f"Expected one {kind} hand-off, got 2 (lines 1 and {second})" in err, err
    # One hand-off with prose around it still reads.
    saved.write_text("Here it is:\n\n" + text, encoding="utf-8")
    code, out, _ = run(capsys, "report", command, str(saved))
    assert (code, out) == (0, text)


def test_report_names_only_the_first_lines_of_many_hand_offs(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    saved = tmp_path / "many.md"
    saved.write_text("\n".join([TASK_TEXT] * 8), encoding="utf-8")
    code, _, err = run(capsys, "report", "task", str(saved))
    step = TASK_TEXT.count("\n") + 1
    lines = ", ".join(str(1 + n * step) for n in range(5))
    assert code == 1 and f"got 8 (lines {lines} and 3 more)" in err, err


def _learn_argv(runs: Path, knowledge: Path, min_effect: str) -> tuple[str, ...]:
    return (
        "learn",
        "--before",
        str(runs / "v1.jsonl"),
        "--after",
        str(runs / "v2.jsonl"),
        "--entry",
        "split-kv-flash-decoding",
        "--knowledge",
        str(knowledge),
        "--knob",
        "num_splits",
        "--dry-run",
        "--min-effect",
        min_effect,
    )


@pytest.fixture
def runs(tmp_path: Path) -> Path:
    write_rows(tmp_path / "v1.jsonl", bench_row("v1", 74.08))
    write_rows(tmp_path / "v2.jsonl", bench_row("v2", 66.53))
    return tmp_path


@pytest.mark.parametrize(
    ("given", "shown"),
    [("1.5", "1.5"), ("1", "1.0"), ("-0.1", "-0.1"), ("nan", "nan"), ("ten", "'ten'")],
)
def test_learn_refuses_a_min_effect_outside_zero_to_one(
    capsys: pytest.CaptureFixture[str], runs: Path, knowledge: Path, given: str, shown: str
) -> None:
    err = _usage_error(capsys, *_learn_argv(runs, knowledge, given))
    assert f"argument --min-effect: Expected a fraction in [0, 1), got {shown}" in err, err


def test_learn_takes_a_min_effect_below_one(
    capsys: pytest.CaptureFixture[str], runs: Path, knowledge: Path
) -> None:
    # A 10 % speedup against a 0.4 % spread is FAST under 5 %, SAME under 50 %.
    code, out, _ = run(capsys, *_learn_argv(runs, knowledge, "0.05"))
    assert code == 0 and out.startswith("FAST"), out
    code, out, _ = run(capsys, *_learn_argv(runs, knowledge, "0.5"))
    assert code == 0 and out.startswith("SAME"), out


@pytest.mark.parametrize("min_effect", [1.0, 2.0])
def test_observe_refuses_a_min_effect_of_one_or_more(runs: Path, min_effect: float) -> None:
    message = f"min_effect: Expected a fraction in [0, 1), got {min_effect}"
    with pytest.raises(InputError, match=re.escape(message)):
        observe_rows(
            bench_row("v1", 74.08), bench_row("v2", 66.53), source="x", min_effect=min_effect
        )
    with pytest.raises(InputError, match=r"Expected a fraction in \[0, 1\)"):
        observe_files(runs / "v1.jsonl", runs / "v2.jsonl", min_effect=min_effect)


@pytest.mark.parametrize(("ends", "eol"), [(b"\r", b"\r"), (b"\n", b"\n"), (b"\r\n", b"\r\n")])
def test_update_devlog_writes_a_cr_only_devlog_with_cr(
    tmp_path: Path, ends: bytes, eol: bytes
) -> None:
    devlog = tmp_path / "k.md"
    lines = [b"# k", b"", b"## Performance", b"", b"## Notes", b"", b"end"]
    devlog.write_bytes(ends.join(lines) + ends)
    row = BenchRow(op="k", impl="v2", median=5.0, gpu="G", config={"b": 1, "s": 1, "t": 8})
    update_devlog(devlog, perf_rows_from_bench([row]))
    written = devlog.read_bytes()
    # Every line, old and new, ends the file's way: no LF among CRs, no lone CR among LFs.
    rest = written.replace(eol, b"")
    assert b"\r" not in rest and b"\n" not in rest, written
    assert written.endswith(eol + b"end" + eol)
    assert b"| v2 | b=1 s=1 t=8 | 5 us |" in written


def test_update_devlog_keeps_lone_cr_with_a_stray_lf_line(tmp_path: Path) -> None:
    devlog = tmp_path / "k.md"
    devlog.write_bytes(b"# k\r\r## Performance\n\r## Notes\r\rend\r")
    row = BenchRow(op="k", impl="v2", median=5.0, gpu="G", config={"b": 1, "s": 1, "t": 8})
    update_devlog(devlog, perf_rows_from_bench([row]))
    written = devlog.read_bytes()
    assert written.count(b"\n") == 1 and written.count(b"\r\n") == 0


def test_learn_lists_only_the_first_points_of_many(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, knowledge: Path
) -> None:
    many = [bench_row("v1", 74.08, config={**POINT, "rep": rep}) for rep in range(40)]
    before = write_rows(tmp_path / "many.jsonl", *many)
    after = write_rows(tmp_path / "after.jsonl", bench_row("v2", 66.53))
    code, _, err = run(
        capsys,
        "learn",
        "--before",
        str(before),
        "--after",
        str(after),
        "--entry",
        "split-kv-flash-decoding",
        "--knowledge",
        str(knowledge),
        "--dry-run",
    )
    assert code == 2
    assert "Expected rows of one trial point (choose one with --point (point=))" in err, err
    assert "and 28 more (40 in all)" in err and "rep=39" not in err, err
    assert len(err) < 1000


def test_refusal_lists_only_the_first_implementations_of_many(tmp_path: Path) -> None:
    # Up to 12 are listed whole (a benchmark's impls, to choose one from), more counted.
    rows = [bench_row(f"impl{n:02d}", 70.0 + n) for n in range(20)]
    before = write_rows(tmp_path / "impls.jsonl", *rows)
    after = write_rows(tmp_path / "after.jsonl", bench_row("v2", 66.53))
    with pytest.raises(InputError) as raised:
        observe_files(before, after)
    message = str(raised.value)
    assert "'impl11'] and 8 more (20 in all)" in message and "impl19" not in message, message

"""LEARN and `report profile` as docs/workflow.md walks through them: one measurement
counted once whatever its labels, options checked whatever the verdict, an UNCLEAR outcome
that says why, times never in exponent form, and errors that name the options typed."""

from __future__ import annotations

import re
import stat
from collections.abc import Sequence
from pathlib import Path

import pytest

from kernelopt import InputError
from kernelopt._numbers_text import significant
from kernelopt.bench import Comparison, Verdict
from kernelopt.catalog import parse_entry
from kernelopt.cli import main
from kernelopt.experiments.points import point_words
from kernelopt.workflow import (
    Action,
    LearnOutcome,
    Observation,
    PerfRow,
    evidence_row,
    learn,
    observe_files,
    observe_rows,
)

from .conftest import anchor_row, bench_row, write_rows

ENTRY = "split-kv-flash-decoding"
# Labels a user may give one measurement on runs after the first: each is the same numbers.
LABELS: Sequence[dict[str, str]] = (
    {"kernel": "mla_decode"},
    {},
    {"kernel": "other"},
    {"language": "triton"},
    {"kernel": "mla_decode", "language": "triton"},
)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project folder, made the working directory, with rows under ``runs/``: v1 and v2
    a FAST pair (v2 the faster), noisy1 and noisy2 rows whose spread is ±30 %."""
    monkeypatch.chdir(tmp_path)
    folder = tmp_path / "runs"
    write_rows(folder / "v1.jsonl", anchor_row("splits16"))
    write_rows(folder / "v2.jsonl", anchor_row("splits8"))
    write_rows(folder / "noisy1.jsonl", bench_row("v1", 50.96, spread=0.30))
    write_rows(folder / "noisy2.jsonl", bench_row("v2", 48.98, spread=0.30))
    write_rows(folder / "two.jsonl", anchor_row("splits8"), anchor_row("splits16"))
    return folder


def _rows_of(path: Path, source: str) -> list[str]:
    """The evidence rows' Config cells of the local-experiment blocks citing ``source``."""
    entry = parse_entry(path.read_text("utf-8"))
    return [row.config for block in entry.evidence if block.source == source for row in block.rows]


# 1. One measurement counts once, whatever kernel and language labels its runs give it.


@pytest.mark.parametrize(("before", "after"), [("v1", "v2"), ("v2", "v1")], ids=["FAST", "SLOW"])
def test_a_measurement_learned_under_other_labels_is_recorded_once(
    runs: Path, knowledge: Path, before: str, after: str
) -> None:
    # Each run naming the kernel or the language otherwise wrote the same numbers again,
    # its Config cell differing only in the labels in front.
    seen = observe_files(f"runs/{before}.jsonl", f"runs/{after}.jsonl")
    first = learn(seen, entry_id=ENTRY, knowledge=knowledge, **LABELS[0])
    assert first.path is not None and not first.recorded_before
    written = first.path.read_bytes()
    for labels in LABELS[1:]:
        for dry_run in (True, False):
            again = learn(seen, entry_id=ENTRY, knowledge=knowledge, dry_run=dry_run, **labels)
            assert again.action is Action.EVIDENCE and again.recorded_before, labels
            assert "already recorded" in again.summary()
    assert first.path.read_bytes() == written
    cited = f"../../runs/{before}.jsonl vs ../../runs/{after}.jsonl"
    assert len(_rows_of(first.path, cited)) == 1


def test_another_measurement_of_the_same_files_is_still_recorded(
    runs: Path, knowledge: Path
) -> None:
    # Only the labels are set aside: other numbers from the same files are a measurement.
    first = learn(
        observe_files("runs/v1.jsonl", "runs/v2.jsonl"),
        entry_id=ENTRY,
        knowledge=knowledge,
        kernel="mla_decode",
    )
    other = observe_rows(
        anchor_row("splits16"),
        bench_row("splits8", 60.0),
        source="runs/v1.jsonl vs runs/v2.jsonl",
    )
    second = learn(other, entry_id=ENTRY, knowledge=knowledge, kernel="mla_decode")
    assert second.action is Action.EVIDENCE and not second.recorded_before
    assert first.path is not None
    assert len(_rows_of(first.path, "../../runs/v1.jsonl vs ../../runs/v2.jsonl")) == 2


def test_the_cli_counts_a_relabelled_measurement_once(
    capsys: pytest.CaptureFixture[str], runs: Path, tmp_path: Path
) -> None:
    tree = tmp_path / "kn"
    common = ("learn", "--before", "runs/v1.jsonl", "--after", "runs/v2.jsonl")
    common += ("--entry", ENTRY, "--knowledge", str(tree))
    for extra in ((), ("--kernel", "mla_decode"), ("--language", "triton")):
        code, out, err = run(capsys, *common, *extra)
        assert code == 0, err
    entry_file = tree / "optimizations" / f"{ENTRY}.md"
    assert len(_rows_of(entry_file, "../runs/v1.jsonl vs ../runs/v2.jsonl")) == 1
    assert "already recorded" in out


# 2. --anti-pattern is checked before the verdict is known.


@pytest.mark.parametrize(
    ("anti_pattern", "words"),
    [
        ("Not Kebab", "anti_pattern: Expected a kebab-case id such as"),
        (
            ENTRY,
            f"anti_pattern: Expected an anti-pattern id to record the regression in, got "
            f"'{ENTRY}', an optimization",
        ),
    ],
)
@pytest.mark.parametrize("after", ["v2", "v1"], ids=["FAST", "SAME"])
def test_an_anti_pattern_no_regression_could_use_is_refused_whatever_the_verdict(
    runs: Path, knowledge: Path, anti_pattern: str, words: str, after: str
) -> None:
    # Checked only on SLOW, the option passed a FAST or SAME run (and its dry run) unread,
    # and failed the first run whose result was a regression.
    seen = observe_files("runs/v1.jsonl", f"runs/{after}.jsonl")
    assert seen.verdict in (Verdict.FAST, Verdict.SAME)
    for dry_run in (True, False):
        with pytest.raises(InputError, match=re.escape(words)):
            learn(
                seen,
                entry_id=ENTRY,
                knowledge=knowledge,
                anti_pattern=anti_pattern,
                dry_run=dry_run,
            )


def test_the_cli_refuses_a_malformed_anti_pattern_on_a_fast_result(
    capsys: pytest.CaptureFixture[str], runs: Path, tmp_path: Path
) -> None:
    code, out, err = run(
        capsys,
        "learn",
        "--before",
        "runs/v1.jsonl",
        "--after",
        "runs/v2.jsonl",
        "--entry",
        ENTRY,
        "--knowledge",
        str(tmp_path / "kn"),
        "--dry-run",
        "--anti-pattern",
        "Not Kebab",
    )
    assert code == 2 and out == ""
    assert "--anti-pattern: Expected a kebab-case id such as" in err


# 3. An UNCLEAR outcome says why; percentages are spelled as the rest of the library does.


def test_an_unclear_outcome_from_a_wide_spread_says_so(runs: Path, knowledge: Path) -> None:
    # The summary said "the result straddles the threshold" of rows whose change (-3.9 %)
    # lay well inside their own ±30 % spread: the spread was the reason, not the change.
    seen = observe_files("runs/noisy1.jsonl", "runs/noisy2.jsonl")
    assert seen.verdict is Verdict.UNCLEAR
    text = learn(seen, entry_id=ENTRY, knowledge=knowledge, dry_run=True).summary()
    assert "straddles" not in text
    assert "same-version spread (±30.0%) is too wide to judge a change of -3.9%" in text


def test_an_unclear_outcome_whose_interval_straddles_the_threshold_says_so(
    knowledge: Path,
) -> None:
    seen = Observation(
        comparison=Comparison(
            verdict="UNCLEAR",
            ratio=0.985,
            ratio_low=0.975,
            ratio_high=0.995,
            noise=0.004,
            threshold=0.01,
            pairs=40,
        ),
        before=50.0,
        after=49.25,
        point="b=1 s=1 t=1",
        source="x.jsonl",
    )
    text = learn(seen, entry_id=ENTRY, knowledge=knowledge).summary()
    assert "straddles the threshold (time ratio in [0.975, 0.995] against ±1.0%)" in text


def test_an_unclear_outcome_of_too_few_rounds_says_so(knowledge: Path) -> None:
    seen = Observation(
        comparison=Comparison(
            verdict="UNCLEAR",
            ratio=1.0,
            ratio_low=0.999,
            ratio_high=1.001,
            noise=0.002,
            threshold=0.01,
            pairs=2,
        ),
        before=50.0,
        after=50.0,
        point="b=1 s=1 t=1",
        source="x.jsonl",
    )
    text = learn(seen, entry_id=ENTRY, knowledge=knowledge).summary()
    assert "2 rounds are too few for a verdict at confidence 0.95" in text


def test_the_summary_writes_percentages_without_a_space(runs: Path, knowledge: Path) -> None:
    # "(-10.2 %, threshold ±1.0%": one line, two spellings of a percentage.
    seen = observe_files("runs/v1.jsonl", "runs/v2.jsonl")
    text = learn(seen, entry_id=ENTRY, knowledge=knowledge, dry_run=True).summary()
    assert f"({seen.change_pct:+.1f}%, threshold ±" in text
    assert not re.search(r"\d %", text.partition(")")[0])


# 4. Times: four significant digits, every integer digit from 10 000 on, no exponent form.


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (9999.5, "10000"),
        (9999.96, "10000"),
        (9999.4, "9999"),
        (12345.6, "12346"),
        (47.0812, "47.08"),
        (66.6, "66.6"),
        (1.2344e-05, "0.00001234"),
        (0.1, "0.1"),
        (0.0, "0"),
    ],
)
def test_numbers_are_written_positionally(value: float, text: str) -> None:
    assert significant(value) == text


@pytest.mark.parametrize(
    ("before", "after", "unit", "cells"),
    [
        (9999.7, 9000.0, "us", ("10000 µs", "9000 µs")),
        (1.2344e-05, 1.0e-05, "s", ("0.00001234 s", "0.00001 s")),
    ],
)
def test_evidence_times_are_never_in_exponent_form(
    before: float, after: float, unit: str, cells: tuple[str, str]
) -> None:
    # 9999.7 printed as "1e+04 µs" and 1.2344e-05 as "1.234e-05 s".
    seen = Observation(
        comparison=Comparison(
            verdict="FAST",
            ratio=after / before,
            ratio_low=0.5,
            ratio_high=0.95,
            noise=0.0,
            threshold=0.01,
        ),
        before=before,
        after=after,
        unit=unit,
        point="b=1 s=1 t=1",
        source="x.jsonl",
    )
    row = evidence_row(seen)
    assert (row.before, row.after) == cells
    summary = LearnOutcome(action=Action.EVIDENCE, applied=ENTRY, observation=seen).summary()
    assert f"{cells[1]} against {cells[0]}" in summary


# 5 and 6. `report profile`: no option dropped unread, errors naming the options typed.


def _profile(capsys: pytest.CaptureFixture[str], rows: str, *extra: str) -> tuple[int, str]:
    code, _, err = run(
        capsys, "report", "profile", "--rows", rows, "--kernel", "mla_decode", *extra
    )
    return code, err


def test_baseline_impl_without_baseline_is_refused(
    capsys: pytest.CaptureFixture[str], runs: Path
) -> None:
    code, err = _profile(capsys, "runs/v2.jsonl", "--version", "splits8", "--baseline-impl", "x")
    assert code == 2
    assert "Expected --baseline-impl only with --baseline, got it without" in err


@pytest.mark.parametrize(
    ("extra", "words"),
    [
        (
            ("--version", "splits8", "--family", "bogus"),
            "error: --family: Expected a kernel family",
        ),
        (("--version", "a\nb", "--impl", "splits8"), "error: --version: Expected a non-empty name"),
        (("--version", "v9"), "(choose one with --impl)"),
        (("--version", "v9", "--impl", "nope"), "runs/two.jsonl: Expected rows of impl 'nope'"),
    ],
)
def test_report_profile_errors_name_the_options(
    capsys: pytest.CaptureFixture[str], runs: Path, extra: tuple[str, ...], words: str
) -> None:
    # They said `family:`, `version:` and `rows:`, and "choose one with --impl (impl=)":
    # the names of the library's arguments, which the command line does not take.
    code, err = _profile(capsys, "runs/two.jsonl", *extra)
    assert code == 2 and words in err
    assert "impl=" not in err and not re.search(r"error: (family|version|rows):", err)


def test_report_profile_names_a_devlog_it_may_not_write(
    capsys: pytest.CaptureFixture[str], runs: Path
) -> None:
    devlog = runs / "devlog.md"
    devlog.write_text("# devlog\n", "utf-8")
    devlog.chmod(stat.S_IRUSR)
    try:
        code, err = _profile(
            capsys, "runs/v2.jsonl", "--version", "splits8", "--devlog", str(devlog)
        )
    finally:
        devlog.chmod(stat.S_IRUSR | stat.S_IWUSR)
    assert code == 2
    assert "error: --devlog: Expected a devlog file that may be written" in err


def test_report_profile_lists_the_points_the_rows_hold(
    capsys: pytest.CaptureFixture[str], runs: Path
) -> None:
    # "Expected rows of 'splits8' at point 'b=999', got none" named none to choose from.
    code, err = _profile(capsys, "runs/v2.jsonl", "--version", "splits8", "--point", "b=999")
    assert code == 2
    assert "Expected one of ['b=32 s=1 t=4096 h=16']" in err
    assert "got point 'b=999'" in err


# 7. A trial point that is neither text nor a mapping.


@pytest.mark.parametrize("point", [5, None, [("b", 1)]])
def test_a_point_of_another_type_is_refused_in_words(point: object) -> None:
    # PerfRow(point=5) failed with "argument of type 'int' is not iterable".
    words = f"point: Expected key=value text or a mapping, got {point!r}"
    with pytest.raises(InputError, match=re.escape(words)):
        point_words(point)  # type: ignore[arg-type]
    with pytest.raises(InputError, match=re.escape(words)):
        PerfRow(version="v1", point=point, time=1.0)  # type: ignore[arg-type]

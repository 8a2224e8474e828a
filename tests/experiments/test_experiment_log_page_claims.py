"""What docs/experiment-log.md says of the writers and readers, checked as a user meets it:
a link loop where summary.md or LESSONS.md goes, a blank plan, a time written in seconds
in a table cell, the version a profile's heading names, and diff snapshots read and
replayed by ``parse_diff`` and ``apply_diff``."""

from __future__ import annotations

from pathlib import Path

import pytest

from kernelopt._errors import InputError
from kernelopt.experiments import (
    ResultRecord,
    ResultRow,
    append_lesson,
    append_summary,
    log_result,
    read_log,
    write_plan,
    write_result,
)
from kernelopt.experiments.diffs import apply_diff, parse_diff


def _record(experiment: int = 1) -> ResultRecord:
    return ResultRecord(
        experiment=experiment,
        title=f"try {experiment}",
        status="KEPT",
        correctness="PASS",
        rows=(ResultRow(point="b=32 s=1", impl="k", median=50.0, unit="us"),),
    )


def _loop(root: Path, name: str) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    link = root / name
    link.symlink_to(link.name)  # a link to itself
    return link


@pytest.mark.parametrize(
    ("name", "write"),
    [
        ("summary.md", lambda root: append_summary(root, _record())),
        ("summary.md", lambda root: log_result(root, _record())),
        ("LESSONS.md", lambda root: append_lesson(root, "BLOCK_N=128 spills")),
        ("exp_1/result.md", lambda root: write_result(root, _record())),
        ("exp_1/plan.md", lambda root: write_plan(root, 1, "# Plan\n", overwrite=True)),
    ],
)
def test_a_link_loop_where_the_file_goes_is_refused_by_name(
    tmp_path: Path, name: str, write: object
) -> None:
    # The lock taken on the resolved path raised a bare RuntimeError ("Symlink loop from
    # ..."), and a first write_result called the loop "an existing file".
    root = tmp_path / "experiments"
    (root / "exp_1").mkdir(parents=True)
    link = _loop(root, name)
    with pytest.raises(InputError, match="Expected a file or a link to one, got a loop of"):
        write(root)  # type: ignore[operator]
    # Refused before anything was written: no result, no row, not even a lock file.
    assert link.is_symlink()
    assert {path.relative_to(root).as_posix() for path in root.rglob("*")} == {"exp_1", name}


@pytest.mark.parametrize("text", ["", "\n", "   \n\t\n", "\ufeff"])
def test_a_blank_plan_is_refused_before_writing(tmp_path: Path, text: str) -> None:
    # Written, the readers list it as an "empty file" and read no plan.
    with pytest.raises(InputError, match=r"text: Expected plan text that is not blank, got"):
        write_plan(tmp_path, 4, text)
    assert not (tmp_path / "exp_4").exists()


def test_a_plan_with_text_is_read_back(tmp_path: Path) -> None:
    write_plan(tmp_path / "experiments", 4, "# Plan\n\n1. num_warps=8\n")
    assert read_log(tmp_path).unread == ()


_SECONDS = (
    "| Exp | Description | Latency | Status |\n|---|---|---|---|\n"
    "| 1 | baseline | 1.5 s | BASELINE |\n"
    "| 2 | fused | 0.9s | KEPT |\n"
    "| 3 | tiles | 950 ms | KEPT |\n"
)


def test_a_time_in_seconds_in_a_latency_cell_keeps_its_unit(tmp_path: Path) -> None:
    # "1.5 s" was read without a unit, so it was compared with none of the other times.
    (tmp_path / "experiments").mkdir()
    (tmp_path / "experiments" / "summary.md").write_text(_SECONDS)
    log = read_log(tmp_path, catalog=[])
    assert [(e.latency, e.unit) for e in log.experiments] == [
        (1.5, "s"),
        (0.9, "s"),
        (950.0, "ms"),
    ]


def test_seconds_in_prose_stay_unread(tmp_path: Path) -> None:
    # "5 s" may be five of anything in a sentence: only a column of times says seconds.
    (tmp_path / "experiments").mkdir()
    (tmp_path / "experiments" / "summary.md").write_text(
        "| Exp | Description | Status |\n|---|---|---|\n| 1 | ran 5 s of warmup | KEPT |\n"
    )
    assert read_log(tmp_path, catalog=[]).experiments[0].latency is None


def test_a_floor_table_in_seconds_places_the_row(tmp_path: Path) -> None:
    folder = tmp_path / "experiments" / "exp_1"
    folder.mkdir(parents=True)
    (folder / "result.md").write_text(
        "# Exp 1: big batch\n\n"
        "| Shape | Time | Floor | Bound |\n|---|---|---|---|\n"
        "| b=4096 | 2.0 s | 1.5 s | memory |\n"
    )
    experiment = read_log(tmp_path, catalog=[]).experiment(1)
    assert experiment is not None
    (floor,) = experiment.floors
    assert (floor.floor, floor.unit, floor.fraction) == (1.5, "s", 0.75)


@pytest.mark.parametrize(
    ("name", "version", "experiment"),
    [
        ("mla_decode exp 5", "", 5),
        ("mla_decode v2 exp 5", "v2", 5),
        ("mla_decode v2 (exp 5)", "v2", 5),
        ("mla_decode (exps 26, 30, 32), profiled in exp 35", "", 35),
        ("mla_decode after exp_7", "", 7),
        ("mla_decode exp 2026-05-26", "", None),
        ("mla_decode v2", "v2", None),
        ("mla exp 5 v3", "v3", 5),
        ("mla_decode", "", None),
    ],
)
def test_the_version_a_profile_heading_names_is_no_experiment_number(
    tmp_path: Path, name: str, version: str, experiment: int | None
) -> None:
    # "## Profile: mla_decode exp 5 | ..." gave version "5": the experiment's number.
    root = tmp_path / "experiments"
    root.mkdir()
    (root / "summary.md").write_text(
        "| Exp | Description | Latency | Status |\n|---|---|---|---|\n"
        + "".join(f"| {n} | try {n} | {100 - n} us | KEPT |\n" for n in range(1, 9))
    )
    (root / "profile.md").write_text(
        f"## Profile: {name} | b=32, s=1, t=4096\n\n### Bottleneck: Memory-bound\n"
    )
    profile = read_log(tmp_path, catalog=[]).profile
    assert profile is not None
    assert (profile.version, profile.experiment) == (version, experiment)


def test_the_example_profile_names_experiment_5_and_no_version() -> None:
    example = Path(__file__).resolve().parents[2] / "examples/logs/mla-decode-plateau"
    profile = read_log(example).profile
    assert profile is not None
    assert (profile.version, profile.experiment) == ("", 5)


_DIFF = "--- a/k.py\n+++ b/k.py\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n"


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: parse_diff(b"--- a\n"), "text: Expected the diff as a str, got bytes"),  # type: ignore[arg-type]
        (lambda: parse_diff(None), "text: Expected the diff as a str, got NoneType"),  # type: ignore[arg-type]
        (lambda: parse_diff(_DIFF, path=3), "path: Expected None or a str, got int"),  # type: ignore[arg-type]
        (
            lambda: apply_diff(None, parse_diff(_DIFF)[0]),  # type: ignore[arg-type]
            "base: Expected the base text as a str, got NoneType",
        ),
        (lambda: apply_diff("a\nb\n", _DIFF), "file: Expected a FileDiff"),  # type: ignore[arg-type]
        (
            lambda: apply_diff("a\nb\n", parse_diff(_DIFF)[0], exact="no"),  # type: ignore[arg-type]
            "exact: Expected a bool, got 'no'",
        ),
    ],
)
def test_diff_arguments_of_the_wrong_type_are_named(call: object, message: str) -> None:
    # They raised TypeError or AttributeError from inside, and exact="no" read as True.
    with pytest.raises(InputError, match=message):
        call()  # type: ignore[operator]


def test_a_diff_saved_with_a_byte_order_mark_reads_its_first_header() -> None:
    # "\ufeff--- a/k.py" hid the header: "Expected a '---'/'+++' file header before the
    # first hunk, got none".
    (file,) = parse_diff("\ufeff" + _DIFF)
    assert (file.path, file.added, file.removed) == ("k.py", ("c",), ("b",))


def test_a_base_with_a_byte_order_mark_takes_the_diff_and_keeps_its_mark() -> None:
    (file,) = parse_diff(_DIFF)
    assert apply_diff("\ufeffa\nb\n", file, exact=True) == "\ufeffa\nc\n"


@pytest.mark.parametrize("number", [True, 5.0, "5", None])
def test_looking_up_an_experiment_by_a_number_of_another_type_is_refused(number: object) -> None:
    # True found experiment 1 and 5.0 experiment 5, while "5" found none: no word of it.
    example = Path(__file__).resolve().parents[2] / "examples/logs/mla-decode-plateau"
    log = read_log(example)
    with pytest.raises(InputError, match=r"number: Expected an integer, got"):
        log.experiment(number)  # type: ignore[arg-type]
    assert log.experiment(5) is not None and log.experiment(99) is None

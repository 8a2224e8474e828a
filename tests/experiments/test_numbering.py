"""Experiment numbers: the writer never writes over or beside an experiment that exists."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kernelopt._errors import InputError
from kernelopt.experiments import (
    ResultRecord,
    append_lesson,
    experiment_dir,
    log_result,
    read_log,
    render_result,
    write_plan,
    write_result,
)


def _record(experiment: int, title: str = "t") -> ResultRecord:
    return ResultRecord(experiment=experiment, title=title, status="KEPT", correctness="PASS")


@pytest.mark.parametrize("number", [-1, 100_000, True, 2.0])
def test_numbers_the_readers_cannot_find_are_refused(tmp_path: Path, number: object) -> None:
    with pytest.raises(InputError, match=r"Expected an (experiment number|integer) in 0\.\.99999"):
        experiment_dir(tmp_path, number)  # type: ignore[arg-type]
    with pytest.raises(InputError, match=r"Expected an (experiment number|integer) in 0\.\.99999"):
        write_plan(tmp_path, number, "x")  # type: ignore[arg-type]
    with pytest.raises(InputError, match=r"experiment: Expected an integer in 0\.\.99999"):
        append_lesson(tmp_path, "x", experiment=number)  # type: ignore[arg-type]
    assert list(tmp_path.iterdir()) == []


def test_an_experiment_in_another_folder_spelling_is_not_written_beside(tmp_path: Path) -> None:
    (tmp_path / "exp_007").mkdir()
    (tmp_path / "exp_007" / "result.md").write_text(render_result(_record(7, "hand")))
    for overwrite in (False, True):
        with pytest.raises(InputError, match="exp_007"):
            write_result(tmp_path, _record(7, "new"), overwrite=overwrite)
    assert not (tmp_path / "exp_7").exists()
    write_result(tmp_path, _record(8))  # another number is fine


@pytest.mark.parametrize("name", ["exp_007", "EXP_7", "exp_7-old", "7-slug"])
@pytest.mark.parametrize("held", [("plan.md",), ("result.md",), ()])
def test_no_writer_writes_a_number_another_folder_holds(
    tmp_path: Path, name: str, held: tuple[str, ...]
) -> None:
    # The readers take exp_7/ and the other folder as one experiment: a plan alone (or an
    # empty folder) there is that experiment already, not room for a second folder.
    other = tmp_path / name
    other.mkdir()
    for file in held:
        (other / file).write_text("by hand\n")
    before = sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*"))
    where = re.escape(str(other))
    with pytest.raises(InputError, match=rf"record\.experiment: .*{where} .*result\.md by hand"):
        write_result(tmp_path, _record(7))
    with pytest.raises(InputError, match=rf"record\.experiment: .*{where}"):
        log_result(tmp_path, _record(7))
    for overwrite in (False, True):
        with pytest.raises(InputError, match=rf"^experiment: Expected no other folder .*{where}"):
            write_plan(tmp_path, 7, "# Plan\n", overwrite=overwrite)
    # Nothing written, not even the summary's lock file.
    assert sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*")) == before
    assert read_log(tmp_path, catalog=[]).warnings == ()


def test_the_folder_of_the_number_itself_is_written_again(tmp_path: Path) -> None:
    write_plan(tmp_path, 7, "# Plan\n")
    write_result(tmp_path, _record(7))
    write_plan(tmp_path, 7, "# Plan, again\n", overwrite=True)
    assert sorted(p.name for p in (tmp_path / "exp_7").iterdir()) == ["plan.md", "result.md"]
    assert [e.number for e in read_log(tmp_path, catalog=[]).experiments] == [7]


def test_a_result_whose_heading_names_another_number_is_reported(tmp_path: Path) -> None:
    (tmp_path / "exp_7").mkdir()
    (tmp_path / "exp_7" / "result.md").write_text(render_result(_record(8, "moved")))
    log = read_log(tmp_path, catalog=[])
    assert [e.number for e in log.experiments] == [7]
    assert any("exp_7/result.md" in w and "Experiment 8" in w for w in log.warnings)

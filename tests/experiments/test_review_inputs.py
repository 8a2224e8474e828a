"""read_log and append_lesson name the argument at fault, and a lesson of the wrong type is
refused as a type error, not as a lesson of the wrong form."""

from __future__ import annotations

from pathlib import Path

import pytest

from kernelopt._errors import InputError
from kernelopt.experiments import append_lesson, read_log


def test_a_missing_log_directory_names_the_path_argument(tmp_path: Path) -> None:
    missing = tmp_path / "nope"
    with pytest.raises(InputError) as caught:
        read_log(missing)
    assert str(caught.value) == f"path: Expected an existing log directory, got {missing}"


def test_a_file_for_the_log_directory_names_the_path_argument(tmp_path: Path) -> None:
    notes = tmp_path / "notes.md"
    notes.write_text("# notes\n")
    with pytest.raises(InputError, match=r"^path: Expected a directory holding an experiment log"):
        read_log(notes)


def test_a_negative_until_names_the_until_argument(tmp_path: Path) -> None:
    with pytest.raises(InputError) as caught:
        read_log(tmp_path, until=-1)
    assert str(caught.value) == "until: Expected until as an experiment number >= 0, got -1"


@pytest.mark.parametrize(("lesson", "kind"), [(5, "int"), (None, "NoneType"), (b"x", "bytes")])
def test_a_lesson_that_is_no_str_is_a_type_error(tmp_path: Path, lesson: object, kind: str) -> None:
    with pytest.raises(InputError) as caught:
        append_lesson(tmp_path, lesson)  # type: ignore[arg-type]
    assert str(caught.value) == f"text: Expected the lesson as a str, got {kind}"
    assert not (tmp_path / "LESSONS.md").exists()


@pytest.mark.parametrize("lesson", ["", "   ", "two\nlines"])
def test_a_lesson_of_the_wrong_form_names_the_text_argument(tmp_path: Path, lesson: str) -> None:
    with pytest.raises(InputError, match=r"^text: Expected a one-line lesson, got "):
        append_lesson(tmp_path, lesson)


def test_a_one_line_lesson_is_still_written(tmp_path: Path) -> None:
    path = append_lesson(tmp_path, "BLOCK_N=128 spills registers", experiment=5)
    assert path.read_text().endswith("- [exp 5] BLOCK_N=128 spills registers\n")

"""Recorder options that are bools are refused as anything else, before a file is touched."""

from __future__ import annotations

from pathlib import Path

import pytest

from kernelopt._errors import InputError
from kernelopt.workload import Recorder


@pytest.mark.parametrize("value", ["no", 0, 1, None, "False"])
def test_append_that_is_no_bool_is_refused(tmp_path: Path, value: object) -> None:
    path = tmp_path / "calls.jsonl"
    path.write_text('{"op":"f","args":{}}\n')
    with pytest.raises(InputError, match=r"^append: Expected append as a bool, got "):
        Recorder(path, append=value)  # type: ignore[arg-type]
    # Refused before the path was opened: the earlier calls are all still there.
    assert path.read_text() == '{"op":"f","args":{}}\n'


def test_append_message_shows_a_string_quoted(tmp_path: Path) -> None:
    with pytest.raises(InputError) as caught:
        Recorder(tmp_path / "calls.jsonl", append="no")  # type: ignore[arg-type]
    assert str(caught.value) == "append: Expected append as a bool, got 'no'"
    assert not (tmp_path / "calls.jsonl").exists()


@pytest.mark.parametrize("value", [True, False])
def test_append_bools_are_accepted(tmp_path: Path, value: bool) -> None:
    with Recorder(tmp_path / "calls.jsonl", append=value) as recorder:
        recorder.record("f", {"n": 1})
    assert (tmp_path / "calls.jsonl").read_text().count("\n") == 1


def test_options_after_the_path_are_keyword_only(tmp_path: Path) -> None:
    with pytest.raises(TypeError):
        Recorder(tmp_path / "calls.jsonl", "host")  # type: ignore[misc]

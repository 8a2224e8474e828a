"""What a user of kernelopt.workload is told where a call, a table or a path is not what it
seems: a recorder option naming no argument, a tie at the top of the shapes, a dim torch
refuses, a profile written over itself, a table of two time columns, a folder where no
file can be created."""

from __future__ import annotations

import errno
import json
import subprocess
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

import kernelopt._fileio as fileio
from kernelopt import cli
from kernelopt._errors import InputError
from kernelopt.workload import (
    Call,
    Recorder,
    RecorderWarning,
    ScalarArg,
    TensorArg,
    WorkloadProfile,
    find_shortcuts,
    profile_calls,
    profile_trace,
    read_profile_md,
    write_profile_md,
)

# ------------------------------------------------------------- a values= name no call had


def _record_decode(recorder: Recorder, calls: int = 3) -> None:
    """Record ``calls`` MLA decode calls through a function decorated by ``recorder``."""

    @recorder(op="mla_decode")
    def mla_decode(q, kv_cache, block_table, cache_seqlens, softmax_scale):  # type: ignore[no-untyped-def]
        return None

    for _ in range(calls):
        mla_decode(
            np.zeros((2, 1, 16, 576), dtype=np.float16),
            np.zeros((8, 64, 1, 576), dtype=np.float16),
            np.zeros((2, 4), dtype=np.int32),
            np.array([100, 120], dtype=np.int32),
            softmax_scale=0.0417,
        )


def test_a_values_name_no_recorded_call_had_is_said_at_the_end_of_the_block(
    tmp_path: Path,
) -> None:
    # values=("cache_seqlen",) recorded no summary, and the length rules never fired.
    recorder = Recorder(tmp_path / "calls.jsonl", values=("cache_seqlen",), append=False)
    with pytest.warns(RecorderWarning) as caught, recorder:
        _record_decode(recorder)
    (warning,) = caught.list
    assert str(warning.message) == (
        f"{tmp_path / 'calls.jsonl'}: values: Expected names of arguments the recorded calls "
        "had (q, kv_cache, block_table, cache_seqlens and softmax_scale), got cache_seqlen, "
        "which no recorded call had (3 calls): no values summary of it was recorded"
    )
    assert issubclass(RecorderWarning, UserWarning)
    # Said once: closing again, or recording more, adds no second warning.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _record_decode(recorder, calls=1)
        recorder.close()


def test_names_the_calls_had_give_no_warning_and_strides_are_checked_too(
    tmp_path: Path,
) -> None:
    matched = Recorder(
        tmp_path / "a.jsonl", values=("cache_seqlens",), strides=("block_table",), append=False
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with matched:
            _record_decode(matched)
    typo = Recorder(tmp_path / "b.jsonl", strides=("blocktable",), append=False)
    with pytest.warns(RecorderWarning, match="strides: Expected names of arguments") as caught:
        typo.record("mla_decode", {"q": np.zeros((2, 1)), "block_table": np.zeros((2, 4))})
        typo.close()
    assert "got blocktable, which no recorded call had (1 call): no strides of it were " in str(
        caught.list[0].message
    )


def test_a_recorder_that_records_nothing_or_ends_in_an_error_is_not_warned_then(
    tmp_path: Path,
) -> None:
    idle = Recorder(tmp_path / "idle.jsonl", values=("lens",))
    failing = Recorder(tmp_path / "failing.jsonl", values=("lens",), append=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        idle.close()  # no call recorded: nothing to compare the names with
        # Under -W error, a warning raised at the end of a failing block replaced its error.
        with pytest.raises(KeyError), failing:
            failing.record("f", {"x": 1})
            raise KeyError("the block's own error")
    # Said later instead: at the next close, or at exit.
    with pytest.warns(RecorderWarning, match="got lens, which no recorded call had"):
        failing.close()


def test_a_recorder_never_closed_says_so_at_exit(tmp_path: Path) -> None:
    code = f"""
from kernelopt.workload import Recorder
recorder = Recorder({str(tmp_path / "c.jsonl")!r}, values=("lens", "cache_seqlens"))
recorder.record("f", {{"x": 1, "cache_seqlens": 3}})
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "RecorderWarning: " in done.stderr
    assert "values: Expected names of arguments the recorded calls had (x and cache_seqlens)" in (
        done.stderr
    )
    assert "got lens, which no recorded call had (1 call)" in done.stderr
    assert len((tmp_path / "c.jsonl").read_text().splitlines()) == 1


# ------------------------------------------------------------------ a tie at the top


def _softmax_calls(sizes: list[int], *, durations: list[float] | None = None) -> list[Call]:
    calls = []
    for i, n in enumerate(sizes):
        calls.append(
            Call(
                op="softmax",
                args=(
                    TensorArg(name="x", shape=(64, n), dtype="float16"),
                    ScalarArg(name="dim", value=-1),
                ),
                duration_us=None if durations is None else durations[i],
            )
        )
    return calls


@pytest.mark.parametrize("order", [[512, 256, 512, 256], [256, 512, 256, 512]])
def test_a_tie_of_the_top_two_shapes_has_no_dominant_shape(order: list[int]) -> None:
    # At 50/50 the rule fired for whichever shape was recorded first.
    rules = [s.rule for s in find_shortcuts(profile_calls(_softmax_calls(order)))]
    assert "dominant-shape" not in rules
    timed = _softmax_calls(order * 2, durations=[5.0, 5.0] * 4)
    assert "dominant-shape" not in [s.rule for s in find_shortcuts(profile_calls(timed))]


def test_one_shape_ahead_of_the_next_still_dominates() -> None:
    (found,) = [
        s
        for s in find_shortcuts(profile_calls(_softmax_calls([512, 256, 512])))
        if s.rule == "dominant-shape"
    ]
    assert found.guard == "x.shape[dim] == 512"
    # By time: equal calls, one shape takes more of the time.
    timed = _softmax_calls([512, 256], durations=[9.0, 1.0])
    (by_time,) = [s for s in find_shortcuts(profile_calls(timed)) if s.rule == "dominant-shape"]
    assert by_time.guard == "x.shape[dim] == 512"


# -------------------------------------------------------------- a dim torch refuses


def _one_call(op: str, shape: tuple[int, ...], dim: object) -> WorkloadProfile:
    call = Call(
        op=op,
        args=(TensorArg(name="x", shape=shape, dtype="float16"), ScalarArg(name="dim", value=dim)),
    )
    return profile_calls([call])


def test_a_softmax_over_a_list_of_dims_is_noted_not_read_as_a_reduction_over_both() -> None:
    # torch.softmax(x, [0, 1]) raises; read as a softmax over both dims, a [1, 1] tensor
    # was a size-1 softmax: "softmax gives 1.0".
    profile = _one_call("softmax", (1, 1), (0, 1))
    assert profile.notes == (
        "softmax: signature softmax: dim: Expected one int dim (torch's softmax takes no list "
        "of dims), got [0, 1]; its axes keep their argument names",
    )
    assert "size1-reduction" not in [s.rule for s in find_shortcuts(profile)]
    assert profile.op().axis("n") is None
    topk = _one_call("aten::topk", (4, 8), (0, 1))
    assert "torch's topk takes no list of dims" in topk.notes[0]
    # A one-entry list names its dim unmistakably.
    assert _one_call("softmax", (4, 1), (1,)).op().axis("n").max == 1  # type: ignore[union-attr]


@pytest.mark.parametrize("dim", [(1, 1), (1, -1)])
def test_a_dim_given_twice_is_noted_not_read_as_one_dim(dim: tuple[int, int]) -> None:
    # torch.sum(x, [1, 1]) raises "dim 1 appears multiple times"; it was read as n = 1.
    profile = _one_call("sum", (4, 1), dim)
    assert profile.notes == (
        f"sum: signature reduction: dim: Expected each dim once, got {list(dim)} (dim 1 given "
        "more than once, which torch refuses); its axes keep their argument names",
    )
    assert "size1-reduction" not in [s.rule for s in find_shortcuts(profile)]
    assert _one_call("sum", (4, 1), (0, 1)).op().axis("n").max == 4  # type: ignore[union-attr]


def test_a_refused_dim_in_a_recorded_trace_is_a_note_of_the_profile(tmp_path: Path) -> None:
    path = tmp_path / "calls.jsonl"
    lines = [
        {"op": "softmax", "args": {"x": {"shape": [1, 1], "dtype": "float16"}, "dim": [0, 1]}},
        {"op": "softmax", "args": {"x": {"shape": [8, 1], "dtype": "float16"}, "dim": 1}},
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    profile = profile_trace(path)
    assert any("got [0, 1]; its axes keep their argument names" in note for note in profile.notes)
    assert profile.op().calls == 2


# ------------------------------------------------------- a profile written over itself


@pytest.fixture
def written_profile(tmp_path: Path, data: Path) -> Iterator[Path]:
    """A workload_profile.md kernelopt wrote from the MLA decode trace."""
    path = tmp_path / "p.md"
    write_profile_md(profile_trace(data / "mla_decode_calls.jsonl"), path)
    yield path


def test_inspect_refuses_to_write_a_profile_over_itself(
    written_profile: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The profile read back names the trace as its source, so it was rewritten over itself.
    before = written_profile.read_bytes()
    assert cli.main(["inspect", str(written_profile), "--write", str(written_profile)]) == 2
    err = capsys.readouterr().err
    assert (
        f"--write: Expected a path other than the file the profile was read from, got "
        f"{written_profile}, the workload profile given to read (writing would replace it)"
    ) in err
    assert written_profile.read_bytes() == before
    # Another spelling of the same file is the same file.
    other = written_profile.parent / "." / written_profile.name
    assert cli.main(["inspect", str(written_profile), "--write", str(other)]) == 2
    assert written_profile.read_bytes() == before


# ---------------------------------------------------- a table of several time columns


def test_a_table_of_two_time_columns_reads_the_first_and_says_so() -> None:
    text = """# Workload profile: softmax

| n | Count | Host time (us) | Kernel time (us) |
|---|------:|---------------:|-----------------:|
| 1 | 900   | 100            | 10               |
| 512 | 100 | 50             | 90               |
"""
    profile = read_profile_md(text)
    assert (
        "line 3: times read from Host time (us), the first of 2 such columns; not read: "
        "Kernel time (us)"
    ) in profile.notes
    assert [(s.axes, s.time_us) for s in profile.op().shapes] == [
        ((("n", 1.0),), 100.0),
        ((("n", 512.0),), 50.0),
    ]


def test_a_table_of_two_percent_columns_reads_the_first() -> None:
    # A running total beside the share of each row was read as the share.
    text = """# Workload profile: softmax

| n | % of calls | cumulative % |
|---|-----------:|-------------:|
| 1 | 90%        | 90%          |
| 512 | 10%      | 100%         |
"""
    profile = read_profile_md(text)
    assert [s.call_share for s in profile.op().shapes] == [0.9, 0.1]
    assert any("shares of calls read from % of calls" in note for note in profile.notes)


# ----------------------------------------------- a folder where no file can be created


def _no_new_file(*_args: object, **_kwargs: object) -> tuple[int, str]:
    # What /proc answers to a new file: the folder is there, no file can be made in it.
    raise FileNotFoundError(errno.ENOENT, "No such file or directory")


def test_a_folder_where_no_file_can_be_created_is_named_as_such(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # "got /proc: No such file or directory" although /proc is there.
    target = tmp_path / "x.md"
    monkeypatch.setattr(fileio.tempfile, "mkstemp", _no_new_file)
    with pytest.raises(InputError) as caught:
        fileio.atomic_write_text(target, "text")
    assert str(caught.value) == (
        f"Expected a folder kernelopt may write in, got {tmp_path}: no file can be created "
        f"there, so {target} cannot be written (No such file or directory)"
    )
    assert not target.exists()


def test_inspect_names_the_folder_and_the_file_it_cannot_write(
    tmp_path: Path,
    data: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setattr(fileio.tempfile, "mkstemp", _no_new_file)
    target = tmp_path / "x.md"
    code = cli.main(["inspect", str(data / "mla_decode_calls.jsonl"), "--write", str(target)])
    assert code == 2
    assert f"got {tmp_path}: no file can be created there, so {target} cannot be written" in (
        capsys.readouterr().err
    )


def test_a_folder_that_cannot_be_made_in_an_existing_one_is_named_as_such(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # /proc/sub/x.md: "got /proc/sub: No such file or directory" said nothing of /proc.
    def no_new_folder(self: Path, *_args: object, **_kwargs: object) -> None:
        raise FileNotFoundError(errno.ENOENT, "No such file or directory", str(self))

    monkeypatch.setattr(Path, "mkdir", no_new_folder)
    with pytest.raises(InputError) as caught:
        fileio.atomic_write_text(tmp_path / "sub" / "x.md", "text")
    assert str(caught.value) == (
        f"Expected a folder that can be created, got {tmp_path / 'sub'}: no folder can be "
        f"created in {tmp_path} (No such file or directory)"
    )

"""``write_experiment`` writes only a verdict the log's readers read, and no speed claim for
a wrong kernel.

A verdict of one line per point (``decode: FAST ...`` then ``prefill: FAST ...``) was
written and read back by ``read_log`` as no verdict, without a word; a FAST verdict was
written for a version whose correctness was FAIL.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kernelopt._errors import InputError
from kernelopt.bench import Comparison, Measurement, to_result_row, write_experiment
from kernelopt.experiments import ABVerdict, read_log

ROW = to_result_row(Measurement(samples=[10.0, 10.2, 10.1]), point="tokens=64", impl="v2")
FAST = Comparison(
    verdict="FAST", ratio=0.5, ratio_low=0.49, ratio_high=0.51, noise=0.004, threshold=0.01
)


def _write(root: Path, verdict: object, correctness: str = "PASS") -> None:
    write_experiment(
        root,
        experiment=1,
        title="vectorized loads",
        rows=[ROW] if correctness != "FAIL" else [],
        status="NEUTRAL" if correctness != "FAIL" else "REVERTED",
        correctness=correctness,
        verdict=verdict,  # type: ignore[arg-type]
    )


def test_a_verdict_per_point_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    with pytest.raises(
        InputError,
        match=r"^verdict: Expected a verdict whose first word is FAST, SLOW, SAME or UNCLEAR.*"
        r"put the verdicts of other points in notes\), got 'decode: FAST 0.5x'$",
    ):
        _write(tmp_path, "decode: FAST 0.5x\nprefill: FAST 0.6x")
    assert not (tmp_path / "exp_1").exists()


@pytest.mark.parametrize("verdict", ["Promote.", "fast 0.5x", "FASTER", ""])
def test_a_verdict_in_other_words_is_refused(tmp_path: Path, verdict: str) -> None:
    with pytest.raises(InputError, match=r"^verdict: Expected a verdict whose first word"):
        _write(tmp_path, verdict)


@pytest.mark.parametrize(
    ("verdict", "read"),
    [("FAST 0.500x [0.49, 0.51]", ABVerdict.FAST), ("**SAME**", ABVerdict.SAME), (FAST, None)],
)
def test_a_verdict_the_readers_take_is_written_and_read(
    tmp_path: Path, verdict: object, read: ABVerdict | None
) -> None:
    _write(tmp_path, verdict)
    assert read_log(tmp_path).experiments[0].verdict is (read or ABVerdict.FAST)


@pytest.mark.parametrize("verdict", ["FAST 0.5x", FAST])
def test_fast_with_correctness_fail_is_refused(tmp_path: Path, verdict: object) -> None:
    with pytest.raises(
        InputError,
        match=r"^verdict: Expected no FAST verdict for a version that failed correctness .*"
        r"got verdict FAST with correctness FAIL$",
    ):
        _write(tmp_path, verdict, correctness="FAIL")
    assert not (tmp_path / "exp_1").exists()


def test_a_slow_verdict_with_correctness_fail_is_written(tmp_path: Path) -> None:
    _write(tmp_path, "SLOW 2.0x", correctness="FAIL")
    assert read_log(tmp_path).experiments[0].verdict is ABVerdict.SLOW


@pytest.mark.parametrize(
    ("status", "correctness", "said"),
    [
        (
            "FAIL",
            "FAIL",
            "status: Expected one of 'BASELINE', 'KEPT', 'NEUTRAL', 'REVERTED', "
            "'FAILED', got 'FAIL' (FAILED for status; FAIL is a correctness verdict)",
        ),
        (
            "FAILED",
            "FAILED",
            "correctness: Expected one of 'PASS', 'FAIL', 'UNKNOWN', got "
            "'FAILED' (FAIL for correctness; FAILED is a status)",
        ),
        ("PASS", "PASS", "got 'PASS' (PASS is a correctness verdict)"),
        ("KEPT", "KEPT", "got 'KEPT' (KEPT is a status)"),
    ],
)
def test_a_word_of_the_other_field_is_named_as_such(
    tmp_path: Path, status: str, correctness: str, said: str
) -> None:
    with pytest.raises(InputError) as caught:
        write_experiment(
            tmp_path, experiment=1, title="t", rows=[], status=status, correctness=correctness
        )
    assert str(caught.value).endswith(said)
    assert not any(tmp_path.iterdir())


def test_an_unknown_word_gets_no_hint(tmp_path: Path) -> None:
    with pytest.raises(InputError) as caught:
        write_experiment(
            tmp_path, experiment=1, title="t", rows=[], status="done", correctness="FAIL"
        )
    assert str(caught.value).endswith("got 'done'")

"""A LayerNorm backward taken through the whole loop on the CPU: EVALUATE and LEARN on
versions that failed correctness, LEARN's verdict from rows without samples, the mode
LEARN judged, the shortfall EVALUATE shows and the name a bad target point is refused by.

The rows are the user's own (``bench.jsonl`` of that run): host-clock medians, p20 and
p80 in us of a ``ln_bwd`` at rows=64 hidden=512, without raw samples.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import attrs
import pytest

from kernelopt import InputError
from kernelopt.bench import BenchRow, Comparison, Measurement, Verdict, append_rows
from kernelopt.cli import main
from kernelopt.workflow import (
    Target,
    evaluate,
    learn,
    observe_comparison,
    observe_files,
    observe_rows,
)

POINT = {"hidden": 512, "rows": 64}
# impl: (n, median, p20, p80, min), as the user's run wrote them.
TIMES = {
    "v1": (1, 962305.007, 962305.007, 962305.007, 962305.007),
    "v2": (5, 264871.014, 192146.1812, 358032.0258, 176051.794),
    "v3": (3, 331811.516, 300916.6814, 336100.1894, 280320.125),
    "v6": (4, 390131.8385, 328444.2896, 451028.5742, 262957.895),
}
FAIL_V3 = (
    "rows: Expected rows of a version that passed correctness to judge a target, got rows "
    "of v3 with correctness FAIL (at hidden=512 rows=64)"
)


def user_row(impl: str, **fields: Any) -> BenchRow:
    """The user's row of ``impl``, with ``fields`` (correctness, mode, times) changed."""
    n, median, p20, p80, low = TIMES[impl]
    values: dict[str, Any] = {
        "op": "ln_bwd",
        "impl": impl,
        "config": dict(POINT),
        "backend": "cpu-perf-counter",
        "cache": "none",
        "gpu": "cpu",
        "n": n,
        "median": median,
        "p20": p20,
        "p80": p80,
        "min": low,
        "floor": 20.0192,
        "timestamp": "2026-12-07T15:03:20+00:00",
        **fields,
    }
    return BenchRow(**values)


def user_file(path: Path, *rows: BenchRow) -> Path:
    append_rows(path, rows)
    return path


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def learn_argv(rows: Path, before: str, after: str, entry: str, knowledge: Path) -> list[str]:
    return [
        "learn",
        "--before",
        str(rows),
        "--after",
        str(rows),
        "--before-impl",
        before,
        "--after-impl",
        after,
        "--entry",
        entry,
        "--allow-host-clock",
        "--knowledge",
        str(knowledge),
        "--family",
        "normalization",
    ]


# --- 1. a version that failed correctness is judged by nobody ----------------------------


def test_evaluate_refuses_a_kernel_whose_row_says_correctness_fail() -> None:
    rows = [user_row("v1", correctness="PASS"), user_row("v3", correctness="FAIL")]
    target = Target(speedup=1.2, baseline="v1")
    with pytest.raises(InputError) as refused:
        evaluate(target, rows, impl="v3", allow_host_clock=True)
    assert str(refused.value) == FAIL_V3


def test_evaluate_judges_a_kernel_over_a_baseline_that_failed() -> None:
    rows = [user_row("v1", correctness="FAIL"), user_row("v2", correctness="PASS")]
    result = evaluate(Target(speedup=1.2, baseline="v1"), rows, impl="v2", allow_host_clock=True)
    assert result.met and result.points[0].checks[0].value == pytest.approx(3.633, abs=1e-3)


def test_evaluate_judges_rows_that_state_no_correctness_as_before() -> None:
    rows = [user_row("v1"), user_row("v3")]
    result = evaluate(Target(speedup=1.2, baseline="v1"), rows, impl="v3", allow_host_clock=True)
    assert result.met


def test_evaluate_refuses_a_failed_row_that_counts_not_one_it_replaced() -> None:
    failed = user_row("v3", correctness="FAIL", timestamp="2026-12-07T15:00:00+00:00")
    fixed = user_row("v3", correctness="PASS")
    target = Target(speedup=1.2, baseline="v1")
    assert evaluate(target, [user_row("v1"), failed, fixed], allow_host_clock=True).met
    with pytest.raises(InputError, match="correctness FAIL"):
        evaluate(target, [user_row("v1"), fixed, failed], allow_host_clock=True)


@pytest.mark.parametrize("side", ["before", "after"])
def test_observe_rows_refuses_either_side_that_failed(side: str) -> None:
    rows = {"before": user_row("v1"), "after": user_row("v2")}
    rows[side] = attrs.evolve(rows[side], correctness="FAIL")
    impl = rows[side].impl
    with pytest.raises(InputError) as refused:
        observe_rows(rows["before"], rows["after"], source="bench.jsonl")
    assert str(refused.value) == (
        f"{side}: Expected a row of a version that passed correctness to learn from, got "
        f"{impl} with correctness FAIL (source: bench.jsonl)"
    )


def test_observe_files_names_the_file_the_side_and_the_version(tmp_path: Path) -> None:
    rows = user_file(
        tmp_path / "bench.jsonl",
        user_row("v1", correctness="PASS"),
        user_row("v3", correctness="FAIL"),
    )
    with pytest.raises(InputError) as refused:
        observe_files(rows, rows, before_impl="v1", after_impl="v3")
    assert str(refused.value) == (
        f"{rows}: Expected a row of a version that passed correctness to learn from, got "
        "the after row, v3, with correctness FAIL"
    )


def test_observe_comparison_refuses_a_version_said_to_fail() -> None:
    comparison = Comparison(
        verdict="FAST",
        ratio=0.9,
        ratio_low=0.88,
        ratio_high=0.92,
        noise=0.01,
        threshold=0.01,
        pairs=8,
        baseline=Measurement(samples=[100.0] * 4, gpu="cpu"),
        candidate=Measurement(samples=[90.0] * 4, gpu="cpu"),
    )
    with pytest.raises(InputError) as refused:
        observe_comparison(
            comparison,
            point=POINT,
            source="experiments/exp_3/result.md",
            after_label="v3",
            after_correctness="FAIL",
        )
    assert str(refused.value) == (
        "after_correctness: Expected a row of a version that passed correctness to learn "
        "from, got v3 with correctness FAIL (source: experiments/exp_3/result.md)"
    )
    seen = observe_comparison(
        comparison, point=POINT, source="x", before_correctness="PASS", after_correctness="PASS"
    )
    assert (seen.before_correctness, seen.after_correctness) == ("PASS", "PASS")


def test_learn_refuses_an_observation_of_a_failed_version_before_writing(tmp_path: Path) -> None:
    seen = observe_rows(
        user_row("v2", n=40), user_row("v1", n=40), source="bench.jsonl"
    )  # a clear change: the verdict alone would write
    assert seen.verdict is Verdict.SLOW
    knowledge = tmp_path / "kb"
    with pytest.raises(InputError) as refused:
        learn(
            attrs.evolve(seen, after_correctness="FAIL"),
            entry_id="persistent-grid",
            knowledge=knowledge,
            allow_host_clock=True,
        )
    assert str(refused.value) == (
        "observation: Expected an observation of versions that passed correctness to learn "
        "from, got the after side v1 with correctness FAIL (source: bench.jsonl)"
    )
    assert not knowledge.exists() and not (tmp_path / "kb.lock").exists()


def test_learn_command_refuses_a_failed_row_and_writes_nothing(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    rows = user_file(
        tmp_path / "bench.jsonl",
        user_row("v1", correctness="PASS", n=40),
        user_row("v3", correctness="FAIL", n=40),
    )
    knowledge = tmp_path / "kb"
    code, out, err = run(capsys, *learn_argv(rows, "v1", "v3", "persistent-grid", knowledge))
    assert (code, out) == (2, "")
    assert (
        f"{rows}: Expected a row of a version that passed correctness to learn from, got the "
        "after row, v3, with correctness FAIL"
    ) in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bench.jsonl", "bench.jsonl.lock"]


# --- 2. rows without samples are never judged more surely than compare would -------------


def test_rows_whose_bands_overlap_make_no_anti_pattern(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    rows = user_file(tmp_path / "bench.jsonl", user_row("v2"), user_row("v6"))
    knowledge = tmp_path / "kb"
    code, out, _ = run(capsys, *learn_argv(rows, "v2", "v6", "buffer-persistence", knowledge))
    assert code == 1 and out.startswith("UNCLEAR: v6 vs v2 at hidden=512 rows=64 on cpu: ")
    assert (
        "the two rows' p20–p80 bands overlap (before 192146–358032 µs, after 328444–451029 "
        "µs), so a change of +47.3% may be the spread's"
    ) in out
    assert "row_from_measurement(..., keep_samples=True)" in out
    assert not knowledge.exists()


def test_rows_of_fewer_than_four_samples_record_nothing(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    rows = user_file(tmp_path / "bench.jsonl", user_row("v1"), user_row("v3"))
    knowledge = tmp_path / "kb"
    code, out, _ = run(capsys, *learn_argv(rows, "v1", "v3", "persistent-grid", knowledge))
    assert code == 1 and out.startswith("UNCLEAR: v3 vs v1 ")
    assert "the before row holds 1 sample and the after row 3, too few to state a spread" in out
    assert not knowledge.exists()


def test_the_band_span_is_the_interval_and_bands_apart_still_decide() -> None:
    overlap = observe_rows(user_row("v2"), user_row("v6"), source="x").comparison
    assert overlap.verdict is Verdict.UNCLEAR
    assert overlap.ratio_low == pytest.approx(328444.2896 / 358032.0258)
    assert overlap.ratio_high == pytest.approx(451028.5742 / 192146.1812)
    apart = observe_rows(user_row("v1", n=40), user_row("v3", n=40), source="x")
    assert apart.verdict is Verdict.FAST


def test_a_row_without_a_band_states_no_spread() -> None:
    bare = user_row("v2", n=40, p20=0.0, p80=0.0, min=0.0)
    seen = observe_rows(user_row("v1", n=40), bare, source="x")
    assert seen.verdict is Verdict.UNCLEAR
    assert seen.caveat.startswith("the after row states no p20–p80 band")


# --- 3. the summary names the mode judged -------------------------------------------------


def test_learn_names_the_mode_it_judged_and_the_ones_left_out(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    rows = user_file(
        tmp_path / "bench.jsonl",
        user_row("v1", n=40, mode="cold", backend="cuda-events", gpu="NVIDIA H200"),
        user_row("v1", n=40, mode="graph", backend="cuda-events", gpu="NVIDIA H200"),
        user_row("v3", n=40, mode="cold", backend="cuda-events", gpu="NVIDIA H200"),
        user_row("v3", n=40, mode="graph", backend="cuda-events", gpu="NVIDIA H200"),
    )
    argv = [*learn_argv(rows, "v1", "v3", "persistent-grid", tmp_path / "kb"), "--dry-run"]
    code, out, _ = run(capsys, *argv)
    assert code == 0
    assert (
        "against 962305 µs, timed graph (the rows written last; the files also time the point "
        "cold: choose with --mode (mode=)) (-65.5%"
    ) in out
    code, out, _ = run(capsys, *argv, "--mode", "cold", "--json")
    summary = json.loads(out)["summary"]
    assert code == 0 and "against 962305 µs, timed cold (-65.5%" in summary


# --- 4. the shortfall agrees with the value shown ---------------------------------------


def test_the_shortfall_is_the_difference_of_the_numbers_shown() -> None:
    row = user_row("v2", metrics={"floor_pct": 72.729}, backend="cuda-events", gpu="")
    text = evaluate(Target(floor_pct=80, median=264871), [row]).render()
    assert "| hidden=512 rows=64 | floor_pct | 72.73 % | >= 80 % | 7.27 pp | short |" in text
    # 264871.014 is shown with the digits that tell it from the bound, and so is its gap.
    assert "| hidden=512 rows=64 | median | 264871.01 us | <= 264871 us | 0.01 us | short |" in text


# --- 5. a bad point is refused under the argument's name -----------------------------------


def test_an_unknown_target_point_is_refused_as_target_points() -> None:
    with pytest.raises(InputError) as refused:
        Target(floor_pct=80, points=("bogus",))
    assert str(refused.value).startswith(
        "Target.points: Expected a point like 'b=32,s=1,t=4096' or a trial name"
    )
    assert str(refused.value).endswith(", got 'bogus'")

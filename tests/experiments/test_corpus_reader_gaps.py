"""What the readers take from a profile's own advice, from options a note turned down, from
sources that disagree on an experiment's time, and from a profile that names its stalls
rather than a bound: each rule on a small log, then on the real log that shows it."""

from __future__ import annotations

from pathlib import Path

from kernelopt.diagnose import Pathology, diagnose
from kernelopt.experiments import read_log
from kernelopt.experiments.readers import bottleneck_of
from kernelopt.experiments.readers._metrics import is_profiling_line
from tests.conftest import write_files

_SUMMARY = (
    "# Experiments Summary\n\n"
    "| Exp | Description | Total_ms | Pass | Notes |\n"
    "|-----|-------------|----------|------|-------|\n"
)


def _summary(rows: list[tuple[int, str, float, str]]) -> str:
    """An experiments/summary.md of ``(number, description, Total_ms, notes)`` rows."""
    return _SUMMARY + "".join(
        f"| {number} | {title} | {total} | PASS | {notes} |\n"
        for number, title, total, notes in rows
    )


# --- profile.md's Recommendation(s) section -----------------------------------------------

_ATTEMPTS = [
    (1, "Initial port baseline", 0.9, "baseline"),
    (2, "Vectorized loads", 0.85, "NEW BEST"),
    (3, "Unroll the transpose loop", 0.8, "NEW BEST"),
    (4, "Hoist offsets out of the loop", 0.79, "Neutral"),
    (5, "Narrower index types", 0.78, "Neutral"),
]
_PROFILE = (
    "# Profiling Report (Post Exp 2)\n\n"
    "## Headline\nThe resize kernel is within 2x of the bandwidth floor.\n\n"
    "## Recommendation\nKernel-level work is exhausted. Focus shifts to:\n"
    "1. Host-side: double-buffering to hide upload latency\n"
    "2. DMA-BUF path: eliminate the host copies entirely\n"
)


def _profiled_log(root: Path, profile: str = _PROFILE) -> Path:
    return write_files(
        root,
        {"experiments/summary.md": _summary(_ATTEMPTS), "experiments/profile.md": profile},
    )


def test_a_profile_recommendation_section_is_read_for_the_experiments_after_it(
    tmp_path: Path,
) -> None:
    log = read_log(_profiled_log(tmp_path))
    advice = [r for r in log.recommendations if r.source.path == "experiments/profile.md"]
    assert [r.text for r in advice] == [
        "Host-side: double-buffering to hide upload latency",
        "DMA-BUF path: eliminate the host copies entirely",
    ]
    assert [r.source.line for r in advice] == [8, 9]
    # The profile followed exp 2: exps 3 and after could act on it.
    assert {(r.experiment, r.after) for r in advice} == {(2, 3)}


def test_advice_of_a_profile_no_attempt_took_up_is_reported_ignored(tmp_path: Path) -> None:
    diagnosis = diagnose(_profiled_log(tmp_path))
    finding = diagnosis.finding(Pathology.IGNORED_PRIOR_RESEARCH)
    assert finding is not None
    cited = {item.source for item in finding.evidence}
    assert cited == {"experiments/profile.md:8", "experiments/profile.md:9"}


def test_a_profile_recommendation_stands_before_until_only_after_its_experiment(
    tmp_path: Path,
) -> None:
    root = _profiled_log(tmp_path)
    texts = {r.text for r in read_log(root, until=3).recommendations}
    assert "Host-side: double-buffering to hide upload latency" in texts
    # Written after exp 2: the log as it stood before exp 2 had no such profile.
    assert not read_log(root, until=2).recommendations


def test_a_profile_top3_stays_its_opportunities_and_is_not_read_twice(tmp_path: Path) -> None:
    profile = (
        "## Profile: resize exp 2 | 320x240\n"
        "### Bottleneck: Memory-bound\n"
        "### Top 3 Opportunities (ranked by estimated impact)\n"
        "1. Kernel Fusion (`kernel-fusion`) -- est. 40% gain\n\n"
        "### Recommendations\n"
        "- Double-buffer the uploads behind the kernel\n"
    )
    log = read_log(_profiled_log(tmp_path, profile))
    assert log.profile is not None
    assert [item.text for item in log.profile.opportunities] == ["Kernel Fusion"]
    assert [r.text for r in log.recommendations] == ["Double-buffer the uploads behind the kernel"]


def test_an_experiment_profile_recommendations_are_that_experiments(tmp_path: Path) -> None:
    root = write_files(
        tmp_path,
        {
            "experiments/summary.md": _summary(_ATTEMPTS),
            "experiments/exp_3/profile.md": "# Profile\n\n## Recommendations\n"
            "- Overlap the upload with the previous frame's kernel\n",
        },
    )
    log = read_log(root)
    assert [(r.text, r.experiment, r.after) for r in log.recommendations] == [
        ("Overlap the upload with the previous frame's kernel", 3, 4)
    ]


def test_opencl_adreno_profile_recommendations_are_read(corpus: Path) -> None:
    log = read_log(corpus / "opencl-adreno")
    advice = {r.text: r for r in log.recommendations}
    assert "Host-side: double-buffering to hide upload latency" in advice
    assert advice["Host-side: double-buffering to hide upload latency"].after == 8
    # Read as advice, and answered: CONVERGENCE.md lists both host-side options under
    # "Remaining Host-Level Opportunities (Not in kernel.cl scope)".
    diagnosis = diagnose(corpus / "opencl-adreno")
    assert diagnosis.finding(Pathology.IGNORED_PRIOR_RESEARCH) is None
    declined = {(o.text, str(o.source)) for o in read_log(corpus / "opencl-adreno").declined}
    assert {source for _text, source in declined} >= {
        "experiments/CONVERGENCE.md:28",
        "experiments/CONVERGENCE.md:29",
    }


# --- options a note turned down ---------------------------------------------------------

_DECLINING_RESULT = (
    "# Experiment 2: profile the dispatch\n\n- Status: KEPT\n- Latency: 50 us\n\n"
    "### Remaining optimization space (not pursued this iteration)\n\n"
    "- **Stable pointer caching for the gate arguments**: saves 1 us; micro-optimization.\n"
    "- **Bypass the FFI layer**: saves 10 us; risk very high.\n\n"
    "### Decision for this iteration\n\nNo kernel change: the rest is overhead.\n\n"
    "Rejected ideas:\n\n- Rewrite the launcher in C for the last microsecond\n\n"
    "### Next steps\n\n- Fuse the gate kernel into the main kernel\n"
)


def test_a_list_whose_heading_declines_its_options_is_no_advice(tmp_path: Path) -> None:
    root = write_files(
        tmp_path,
        {
            "experiments/exp_1/result.md": "# Experiment 1: baseline\n\n- Status: BASELINE\n"
            "- Latency: 60 us\n",
            "experiments/exp_2/result.md": _DECLINING_RESULT,
        },
    )
    log = read_log(root)
    assert [r.text for r in log.recommendations] == ["Fuse the gate kernel into the main kernel"]


def test_gdn_prefill_declined_options_are_not_recommendations(corpus: Path) -> None:
    log = read_log(corpus / "gdn-prefill-devlog")
    assert not [r for r in log.recommendations if "ctypes" in r.text]
    finding = diagnose(corpus / "gdn-prefill-devlog").finding(Pathology.IGNORED_PRIOR_RESEARCH)
    assert finding is not None
    assert not [item for item in finding.evidence if "ctypes" in item.quote]


# --- sources that disagree on an experiment's time --------------------------------------

_REPORT = (
    "# Convergence Report\n\n"
    "| Exp | Direction | Result |\n|-----|-----------|--------|\n"
    "| 1 | Buffer-based baseline | 0.718ms |\n| 2 | Transpose unroll | 0.603ms |\n"
)
_RESULT_1 = (
    "# Experiment 1: Initial Port Baseline\nStatus: PASS\n\n## Results\n"
    "| Resolution | Kernel_ms | Total_ms |\n|------------|-----------|----------|\n"
    "| 320x240 | 0.238 | 0.714 |\n| 1920x1080 | 0.555 | 1.032 |\n"
)
_TWO = [(1, "Initial port baseline", 0.879, "New best"), (2, "Transpose unroll", 0.603, "-16%")]


def test_a_summary_time_that_stands_alone_gives_way_to_the_result(tmp_path: Path) -> None:
    root = write_files(
        tmp_path,
        {
            "experiments/summary.md": _summary(_TWO),
            "experiments/CONVERGENCE.md": _REPORT,
            "experiments/exp_1/result.md": _RESULT_1,
        },
    )
    log = read_log(root)
    first = log.experiments[0]
    assert (first.latency, first.unit) == (0.714, "ms")
    assert str(first.refs["latency"]) == "experiments/exp_1/result.md:7"
    (warning,) = [w for w in log.warnings if w.startswith("exp 1:")]
    for named in (
        "0.879 ms in experiments/summary.md:5",
        "0.718 ms in experiments/CONVERGENCE.md:5",
        "0.714 ms in experiments/exp_1/result.md:7",
        "0.714 ms (experiments/exp_1/result.md:7) was used",
    ):
        assert named in warning


def test_two_sources_alone_keep_the_first_time(tmp_path: Path) -> None:
    root = write_files(
        tmp_path,
        {"experiments/summary.md": _summary(_TWO), "experiments/CONVERGENCE.md": _REPORT},
    )
    log = read_log(root)
    assert log.experiments[0].latency == 0.879
    assert any("0.879 ms (experiments/summary.md:5) was used" in w for w in log.warnings)


def test_a_result_that_holds_the_first_time_keeps_it(tmp_path: Path) -> None:
    result = _RESULT_1.replace("| 1920x1080 | 0.555 | 1.032 |", "| 1920x1080 | 0.555 | 0.879 |")
    root = write_files(
        tmp_path,
        {
            "experiments/summary.md": _summary(_TWO),
            "experiments/CONVERGENCE.md": _REPORT,
            "experiments/exp_1/result.md": result,
        },
    )
    log = read_log(root)
    assert log.experiments[0].latency == 0.879
    assert str(log.experiments[0].refs["latency"]) == "experiments/summary.md:5"


def test_opencl_adreno_baseline_is_the_time_its_result_and_report_agree_on(
    corpus: Path,
) -> None:
    log = read_log(corpus / "opencl-adreno")
    by = {e.number: e for e in log.experiments}
    assert by[1].latency == 0.714
    assert str(by[1].refs["latency"]) == "experiments/exp_1/result.md:9"
    # The log's own "-16% vs baseline" for exp 8, not +31%.
    assert round(1 - by[8].latency / by[1].latency, 2) == 0.16
    (warning,) = [w for w in log.warnings if w.startswith("exp 1:")]
    assert "experiments/summary.md:5" in warning and "experiments/CONVERGENCE.md:13" in warning


# --- a profile that names its stalls, not a bound ---------------------------------------


def test_a_scoreboard_stall_or_an_underfilled_kernel_is_latency_bound() -> None:
    assert bottleneck_of("- Dominant stall reason: `long scoreboard`") == ("latency", 0)
    assert bottleneck_of("Notes\n- The kernel is underfilled at the GPU level.") == ("latency", 1)
    assert bottleneck_of("If the kernel is underfilled, add CTAs.") is None
    # A stated bound outranks the cue, on whatever line it is.
    assert bottleneck_of("- Dominant stall reason: long scoreboard\nIt is memory-bound.") == (
        "memory",
        1,
    )


def test_a_stall_reason_line_is_profiling_data() -> None:
    assert is_profiling_line("- Dominant stall reason: `long scoreboard`")
    assert not is_profiling_line("- Top long-scoreboard consumers:")


def test_a_note_naming_its_dominant_stall_states_a_latency_bound(tmp_path: Path) -> None:
    root = write_files(
        tmp_path,
        {
            "notes.md": "# Decode kernel notes\n\n## Baseline\n\n"
            "- Achieved occupancy: about `11.86%`\n"
            "- Dominant stall reason: `long scoreboard`\n\n"
            "## Experiment Summary\n\n| Experiment | Mini result | Outcome |\n| --- | --- | --- |\n"
            "| Tile reuse | `3.699 us -> 3.789 us` | Failed |\n"
            "| Warp broadcast | `3.709 us -> 4.150 us` | Failed |\n",
        },
    )
    log = read_log(root)
    assert "notes.md:6" in {str(fact.source) for fact in log.profiling}
    check = next(c for c in diagnose(root).checks if c.pathology is Pathology.WRONG_BOTTLENECK)
    assert "latency-bound (notes.md:6)" in check.sentence


def test_gdn_decode_profiling_notes_state_a_latency_bound(corpus: Path) -> None:
    diagnosis = diagnose(corpus / "gdn-decode-experiments")
    check = next(c for c in diagnosis.checks if c.pathology is Pathology.WRONG_BOTTLENECK)
    assert "states no bound" not in check.sentence
    assert "latency-bound (gdn_decode_kernel7_experiments_2026-03-25.md:16)" in check.sentence

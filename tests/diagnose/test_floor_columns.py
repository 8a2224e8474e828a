"""result.md's Floor and Of-floor columns are a stated place on the roofline: where the row
says which ceiling sets the floor, the kernel is memory- or compute-bound; a row under 20 %
of its floor is latency-bound; otherwise the share of the floor reached is the evidence
quoted, not "states no bound"."""

from __future__ import annotations

from pathlib import Path

from kernelopt.diagnose import Diagnosis, diagnose
from kernelopt.diagnose.floors import COMPUTE, MEMORY, ceiling_of, latest_floors
from kernelopt.diagnose.model import Pathology
from kernelopt.experiments import read_log
from kernelopt.experiments.canonical import log_result
from kernelopt.experiments.records import Correctness, ResultRecord, ResultRow, Status

POINT = "b=32 s=1 t=4096 h=16"
# (number, title, median us, status): no title aims at memory or at compute.
STEPS = (
    (1, "split the key loop across programs", 60.0, Status.KEPT),
    (2, "persistent grid over the batch", 59.0, Status.KEPT),
    (3, "reorder argument checks", 58.8, Status.NEUTRAL),
)


def _canonical_log(root: Path, floor: float) -> Path:
    """A log kernelopt.bench would write: each result's rows timed on the device, each
    with its roofline ``floor`` (us), and no profile.md."""
    experiments = root / "experiments"
    for number, title, median, status in STEPS:
        rows = (
            ResultRow(point=POINT, impl="kernel", median=median, unit="us", floor=floor),
            ResultRow(point=POINT, impl="kernel", median=median * 2, unit="us", mode="graph"),
        )
        record = ResultRecord(
            experiment=number,
            title=title,
            status=status,
            correctness=Correctness.PASS,
            date="2026-01-0" + str(number),
            rows=rows,
        )
        log_result(experiments, record)
    return root


def _sentence(diagnosis: Diagnosis) -> str:
    checks = diagnosis.checks
    return next(c.sentence for c in checks if c.pathology is Pathology.WRONG_BOTTLENECK)


def _missing(diagnosis: Diagnosis) -> tuple[str, ...]:
    checks = diagnosis.checks
    return next(tuple(c.missing) for c in checks if c.pathology is Pathology.WRONG_BOTTLENECK)


def test_a_floor_whose_ceiling_no_row_names_is_quoted_as_the_evidence(tmp_path: Path) -> None:
    diagnosis = diagnose(_canonical_log(tmp_path, floor=35.28), catalog=None)

    assert _sentence(diagnosis) == (
        "The latest result places the kernel on the roofline (exp 3: b=32 s=1 t=4096 h=16 "
        "kernel at 60.0% of its roofline floor (35.28 us); experiments/exp_3/result.md:10) but "
        "does not say which ceiling sets the floor (bytes or FLOPs), so recent work is not "
        "judged against compute/memory."
    )
    assert _missing(diagnosis) == (
        "which ceiling sets the roofline floor (a Bound column in result.md: memory or "
        "compute), or a bottleneck statement in profile.md",
    )


def test_a_row_far_under_its_floor_is_latency_bound(tmp_path: Path) -> None:
    # 8.82 us of floor in 58.8 us: 15 % of the binding ceiling used, neither bytes nor
    # FLOPs are what the time waits on (kernelopt.bench.report.classify says the same).
    diagnosis = diagnose(_canonical_log(tmp_path, floor=8.82), catalog=None)

    assert _sentence(diagnosis) == (
        "The kernel is latency-bound (exp 3: b=32 s=1 t=4096 h=16 kernel at 15.0% of its "
        "roofline floor (8.82 us): under 20% of it; experiments/exp_3/result.md:10); 0 of the "
        "3 recent attempts judged tune inside the kernel."
    )


def test_under_until_the_floor_is_the_latest_before_the_cut(tmp_path: Path) -> None:
    root = _canonical_log(tmp_path, floor=35.28)
    sentence = _sentence(diagnose(root, until=3, catalog=None))
    assert "(exp 2: b=32 s=1 t=4096 h=16 kernel at 59.8% of its roofline floor" in sentence
    assert "experiments/exp_2/result.md:10" in sentence


SUMMARY = """# Experiments Summary

| Exp | Description | Latency | Unit | Correct | Status |
|---|---|---|---|---|---|
| 1 | eager baseline | 60.0 | us | PASS | BASELINE |
| 2 | fused kernel | 50.0 | us | PASS | KEPT |
| 3 | bigger MMA tiles for the tensor cores | 50.4 | us | PASS | REVERTED |
| 4 | unroll the dot loop, more FMA per instruction | 50.2 | us | PASS | REVERTED |
| 5 | tf32 dot precision for the MMA | 50.1 | us | PASS | REVERTED |
"""
HAND_RESULT = """# Experiment 5: tf32 dot precision for the MMA

- Status: REVERTED

| Point | Median (us) | Floor (us) | Of floor | Bound |
|---|---|---|---|---|
| b=32 h=16 | 50.1 | 35.07 | 70.0% | {bound} |
"""


def _hand_log(root: Path, bound: str) -> Path:
    (root / "experiments" / "exp_5").mkdir(parents=True)
    (root / "experiments" / "summary.md").write_text(SUMMARY, encoding="utf-8")
    text = HAND_RESULT.format(bound=bound)
    (root / "experiments" / "exp_5" / "result.md").write_text(text, encoding="utf-8")
    return root


def test_a_row_naming_the_ceiling_states_the_bound(tmp_path: Path) -> None:
    diagnosis = diagnose(_hand_log(tmp_path, "memory (bytes at 3.35 TB/s)"), catalog=None)

    finding = diagnosis.finding(Pathology.WRONG_BOTTLENECK)
    assert finding is not None
    assert finding.summary == (
        "The kernel is memory-bound (exp 5: b=32 h=16 at 70.0% of its roofline floor (35.07 "
        "us, set by memory)) but 3 of the 3 recent attempts judged (exps 3, 4, 5) optimize "
        "compute (exp 2, a new best by 16.7%, not counted)."
    )
    assert finding.evidence[0].source == "experiments/exp_5/result.md:7"


def test_a_row_naming_flops_is_compute_bound(tmp_path: Path) -> None:
    diagnosis = diagnose(_hand_log(tmp_path, "FLOPs"), catalog=None)

    assert diagnosis.finding(Pathology.WRONG_BOTTLENECK) is None
    assert _sentence(diagnosis).startswith(
        "The kernel is compute-bound (exp 5: b=32 h=16 at 70.0% of its roofline floor "
        "(35.07 us, set by compute)); 0 of the 3 recent attempts judged aim at memory"
    )


def test_a_hand_written_of_floor_column_is_a_profiling_metric(tmp_path: Path) -> None:
    # No profiler is named anywhere: the share of the floor is the profiling data.
    root = _hand_log(tmp_path, "")
    log = read_log(root)
    assert log.experiments[-1].metrics["floor_pct"] == 70.0

    sentence = _sentence(diagnose(root, catalog=None))
    assert sentence.startswith(
        "The latest result places the kernel on the roofline (exp 5: b=32 h=16 at 70.0% of "
        "its roofline floor (35.07 us); experiments/exp_5/result.md:7)"
    )


def test_the_share_of_the_floor_is_a_metric_the_remedies_are_matched_on(tmp_path: Path) -> None:
    # profile.md states the bound; the results state only where the kernel stands against
    # its floor (30 %): the catalog's trigger on floor_pct < 50 is matched on it.
    experiments = tmp_path / "experiments"
    titles = (
        (1, "fused kernel", 50.0, Status.KEPT),
        (2, "bigger MMA tiles for the tensor cores", 50.4, Status.REVERTED),
        (3, "unroll the dot loop, more FMA per instruction", 50.2, Status.REVERTED),
        (4, "tf32 dot precision for the MMA", 50.1, Status.REVERTED),
    )
    for number, title, median, status in titles:
        row = ResultRow(point="b=32 h=16", impl="kernel", median=median, unit="us", floor=15.03)
        record = ResultRecord(
            experiment=number,
            title=title,
            status=status,
            correctness=Correctness.PASS,
            date=f"2026-01-0{number}",
            rows=(row,),
        )
        log_result(experiments, record)
    profile = "# Profile\n\n### Bottleneck: Memory-bound\n\nRoot cause: bytes.\n"
    (experiments / "profile.md").write_text(profile, encoding="utf-8")

    finding = diagnose(tmp_path).finding(Pathology.WRONG_BOTTLENECK)
    assert finding is not None
    assert [action.catalog_id for action in finding.actions] == ["roofline-analysis"]
    assert "floor_pct=30" in finding.actions[0].text


def _table_log(root: Path, table: str) -> Path:
    """The log of SUMMARY whose exp 5 result is ``table``, written by hand."""
    (root / "experiments" / "exp_5").mkdir(parents=True)
    (root / "experiments" / "summary.md").write_text(SUMMARY, encoding="utf-8")
    text = f"# Experiment 5: tf32 dot precision for the MMA\n\n- Status: REVERTED\n\n{table}"
    (root / "experiments" / "exp_5" / "result.md").write_text(text, encoding="utf-8")
    return root


def _share(root: Path) -> float:
    log = read_log(root)
    (reading,) = latest_floors(log, log.experiments)
    return round(reading.fraction, 4)


UNITLESS = """| Point | Time | Floor | Of floor | Bound |
|---|---|---|---|---|
| b=1 | 45.6 | 35.7 | {share} | memory |
"""


def test_a_fraction_in_the_of_floor_column_is_no_percent(tmp_path: Path) -> None:
    # Read as a percent, 0.78 was 0.78 % of the floor: a kernel 128 times off it.
    root = _table_log(tmp_path, UNITLESS.format(share="0.78"))
    assert _share(root) == round(35.7 / 45.6, 4)

    finding = diagnose(root, catalog=None).finding(Pathology.WRONG_BOTTLENECK)
    assert finding is not None
    assert finding.summary.startswith(
        "The kernel is memory-bound (exp 5: b=1 at 78.3% of its roofline floor (35.7, set "
        "by memory))"
    )


def test_beside_a_floor_and_a_time_the_share_is_floor_over_time(tmp_path: Path) -> None:
    # 7.8 is neither 7.8 % nor a fraction of 7.8: the row's own numbers say 78 %.
    root = _table_log(tmp_path, UNITLESS.format(share="7.8"))
    assert _share(root) == round(35.7 / 45.6, 4)


def test_a_share_with_a_percent_sign_is_a_percent(tmp_path: Path) -> None:
    root = _table_log(tmp_path, UNITLESS.format(share="70%"))
    assert _share(root) == 0.7


SHARE_ONLY = """| Point | Of floor | Bound |
|---|---|---|
| b=1 | {share} | memory |
"""


def test_a_bare_share_alone_is_a_fraction_up_to_one_and_a_half(tmp_path: Path) -> None:
    assert _share(_table_log(tmp_path / "fraction", SHARE_ONLY.format(share="0.78"))) == 0.78
    assert _share(_table_log(tmp_path / "loose", SHARE_ONLY.format(share="1.2"))) == 1.2
    assert _share(_table_log(tmp_path / "percent", SHARE_ONLY.format(share="78"))) == 0.78


def test_a_bound_ruled_out_names_no_ceiling(tmp_path: Path) -> None:
    assert ceiling_of("not memory-bound") is None
    assert ceiling_of("no tensor cores") is None
    assert ceiling_of("compute, not memory") == COMPUTE
    assert ceiling_of("memory-bound") == MEMORY

    sentence = _sentence(diagnose(_hand_log(tmp_path, "not memory-bound"), catalog=None))
    assert sentence.startswith(
        "The latest result places the kernel on the roofline (exp 5: b=32 h=16 at 70.0% of "
        "its roofline floor (35.07 us); experiments/exp_5/result.md:7) but does not say "
        "which ceiling sets the floor"
    )

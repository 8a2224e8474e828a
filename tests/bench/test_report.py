"""The profile hand-off: exact text, bottleneck classification, gains from the roofline."""

from __future__ import annotations

import re
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import attrs
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from kernelopt._errors import InputError, KernelOptError
from kernelopt.bench import (
    BaselineMetric,
    Bottleneck,
    Ceilings,
    Cost,
    Measurement,
    Opportunity,
    ProfileReport,
    Roofline,
    Stage,
    TrialPoint,
    mla_decode_cost,
    profile_report,
)
from kernelopt.bench.report import NO_COUNTERS, classify
from kernelopt.workflow import parse_profile

from ..conftest import require_shared

# The ceilings measured in /work/shared/anchors/h200-2026-12-02.json.
H200 = Ceilings(
    gpu="NVIDIA H200",
    copy_bytes_per_s=4.2497501013921815e12,
    matmul_flop_per_s=693.6596691456391e12,
)
POINT = TrialPoint(b=32, s=1, t=4096, extra={"h": 16})
LINE = Roofline(ceilings=H200, cost=mla_decode_cost(b=32, s_q=1, h_q=16, seqlens=4096))


def timed(us: float, mode: str = "cold") -> Measurement:
    return Measurement(samples=[us] * 5, mode=mode)


def test_render_is_the_contract_text() -> None:
    report = ProfileReport(
        kernel="mla_decode",
        version="v3",
        point={"b": 32, "s": 16, "t": 4096},
        stages=[
            Stage(
                name="split | partial",
                duration=41.25,
                tc_pct=12.0,
                dram_pct=61.04,
                bottleneck="Memory-bound",
                key_issue="uncoalesced loads",
            ),
            Stage(name="combine", duration=3.0, occupancy_pct=50.0, bottleneck="Latency-bound"),
        ],
        bottleneck=Bottleneck.MEMORY,
        root_cause="One.\nTwo.",
        opportunities=[
            Opportunity(name="A", entry_id="a-id", gain_pct=33.4, trigger="dram_pct=61"),
            Opportunity(name="B", entry_id="b-id", gain_pct=8.0, trigger="launch_overhead_pct=8"),
            Opportunity(name="C", entry_id="c-id", gain_pct=2.0, trigger="x=1"),
            Opportunity(name="D", entry_id="d-id", gain_pct=1.0, trigger="y=1"),
        ],
        baseline=[
            BaselineMetric(metric="Median (us)", previous=80.0, current=44.25, unit="us"),
            BaselineMetric(metric="DRAM %", previous=40.0, current=61.04, unit="%"),
        ],
    )
    assert report.render() == (
        "## Profile: mla_decode v3 | b=32, s=16, t=4096\n"
        "### Stages\n"
        "| Stage | Duration | TC% | DRAM% | Occ% | Bottleneck | Key Issue |\n"
        "|-------|----------|-----|-------|------|------------|-----------|\n"
        "| split / partial | 41.25 us | 12.0 | 61.0 | n/a (no counters) | Memory-bound "
        "| uncoalesced loads |\n"
        "| combine | 3 us | n/a (no counters) | n/a (no counters) | 50.0 | Latency-bound |  |\n"
        "### Bottleneck: Memory-bound\n"
        "Root cause: One. Two.\n"
        "### Top 3 Opportunities (ranked by estimated impact)\n"
        "1. A (`a-id`) -- est. 33% gain -- trigger: dram_pct=61\n"
        "2. B (`b-id`) -- est. 8% gain -- trigger: launch_overhead_pct=8\n"
        "3. C (`c-id`) -- est. 2% gain -- trigger: x=1\n"
        "\n"
        "### vs Baseline\n"
        "| Metric | Previous | Current | Change |\n"
        "|--------|----------|---------|--------|\n"
        "| Median (us) | 80 | 44.25 | -44.7% |\n"
        "| DRAM % | 40 | 61.04 | +21.0 pp |\n"
    )


def test_no_baseline_and_no_opportunity() -> None:
    text = ProfileReport(
        kernel="k",
        version="v1",
        point=POINT,
        stages=[Stage(name="kernel", duration=1.0)],
        bottleneck="Latency-bound",
        root_cause="r",
    ).render()
    assert text.splitlines()[0] == "## Profile: k v1 | b=32, s=1, t=4096, h=16"
    assert "(none: no catalog trigger fired on these metrics)" in text
    assert "vs Baseline" not in text


def test_classification_follows_the_roofline() -> None:
    assert classify(LINE.place(50.0)) is Bottleneck.MEMORY  # 72 % of the copy rate
    assert classify(LINE.place(400.0)) is Bottleneck.LATENCY  # 9 %: waits, not moves
    compute = Roofline(ceilings=H200, cost=Cost(flops=694e12 * 1e-3, bytes=1.0))
    assert classify(compute.place(1.25, unit="ms")) is Bottleneck.COMPUTE
    assert classify(LINE.place(400.0), latency_below_pct=5.0) is Bottleneck.MEMORY


def entry(entry_id: str, name: str, kind: str = "optimization") -> Any:
    return SimpleNamespace(id=entry_id, name=name, kind=SimpleNamespace(value=kind))


class FakeCatalog:
    """Answers match_metrics like kernelopt.catalog.Catalog, from fixed matches."""

    def __init__(self, matches: Sequence[Any]) -> None:
        self.matches = matches
        self.asked: Mapping[str, float] | None = None

    def match_metrics(self, metrics: Mapping[str, float]) -> Sequence[Any]:
        self.asked = dict(metrics)
        return self.matches


def match(entry_id: str, name: str, score: float, *reasons: str, kind: str = "optimization") -> Any:
    return SimpleNamespace(entry=entry(entry_id, name, kind), score=score, reasons=reasons)


def test_opportunities_gain_from_the_roofline_and_the_measured_launch_overhead() -> None:
    catalog = FakeCatalog(
        [
            match("hot-l2-timing", "Hot L2", 9.0, "metric dram_pct > 100", kind="anti-pattern"),
            match("vectorized-loads", "Vector loads", 1.0),
            match("split-kv", "Split KV", 2.0, "metric dram_pct < 70 (dram_pct=48)"),
            match("cuda-graphs", "CUDA graphs", 5.0, "metric launch_overhead_pct > 5"),
        ]
    )
    # peer Triton at s=1, h=16 in the anchors: 74.18 us with events, 66.53 us in a graph
    report = profile_report(
        kernel="mla_decode",
        version="peer",
        point=POINT,
        measurement=timed(74.176),
        graph=timed(66.526, "graph"),
        roofline=LINE,
        catalog=catalog,
        extra_metrics={"kv_splits": 8.0},
    )
    assert catalog.asked is not None
    assert catalog.asked["kv_splits"] == 8.0
    assert catalog.asked["launch_overhead_pct"] == pytest.approx(100 * (74.176 - 66.526) / 74.176)
    gap = 100 * (74.176 - LINE.floor("us")) / 74.176
    ids = [o.entry_id for o in report.opportunities]
    assert ids == ["split-kv", "vectorized-loads", "cuda-graphs"]  # anti-pattern left out
    # A change inside the kernel cannot save the time spent launching it.
    assert report.opportunities[0].gain_pct == pytest.approx(gap - 10.31, abs=0.01)
    # Each trigger says what its gain is: an upper bound, or the measured launch overhead.
    assert report.opportunities[0].trigger == (
        "dram_pct=48.3 (upper bound: the time above the roofline floor)"
    )
    assert report.opportunities[1].trigger == "- (upper bound: the time above the roofline floor)"
    assert report.opportunities[2].trigger == (
        "launch_overhead_pct=10.3 (measured: the share of time CUDA graphs removed)"
    )
    assert report.opportunities[2].gain_pct == pytest.approx(10.31, abs=0.01)
    assert report.bottleneck is Bottleneck.MEMORY
    stage = report.stages[0]
    assert stage.duration == pytest.approx(74.176) and stage.occupancy_pct is None
    assert NO_COUNTERS in report.render()
    assert "35.79 us at 4.25 TB/s" in report.root_cause


def test_latency_bound_root_cause_mentions_graphs() -> None:
    report = profile_report(
        kernel="k",
        version="v",
        point=POINT,
        measurement=timed(400.0),
        graph=timed(300.0, "graph"),
        roofline=LINE,
        catalog=FakeCatalog([]),
    )
    assert report.bottleneck is Bottleneck.LATENCY
    assert "CUDA graphs remove 25% of the time" in report.root_cause


def test_a_host_clock_timing_says_so_in_the_report() -> None:
    cpu = attrs.evolve(timed(74.176), backend="cpu-perf-counter")
    report = profile_report(
        kernel="k", version="v", point=POINT, measurement=cpu, roofline=LINE,
        catalog=FakeCatalog([]),
    )  # fmt: skip
    assert report.root_cause.startswith("Timed with the host clock (CPU), not CUDA events")
    assert "Timed with the host clock" in report.render()
    gpu = profile_report(kernel="k", version="v", point=POINT, measurement=timed(74.176),
                         roofline=LINE, catalog=FakeCatalog([]))  # fmt: skip
    assert "host clock" not in gpu.root_cause


def test_baseline_table_from_a_previous_measurement() -> None:
    report = profile_report(
        kernel="k",
        version="v2",
        point=POINT,
        measurement=timed(66.0),
        baseline=timed(116.4),
        roofline=LINE,
        catalog=FakeCatalog([]),
    )
    rows = {row.metric: row for row in report.baseline}
    assert rows["Median (us)"].change == "-43.3%"
    assert rows["Floor %"].current == pytest.approx(100 * LINE.floor("us") / 66.0)
    assert rows["Floor %"].change.endswith(" pp")


def test_builtin_catalog_is_used_by_default() -> None:
    from kernelopt.catalog import Catalog

    report = profile_report(
        kernel="k", version="v", point=POINT, measurement=timed(74.0), roofline=LINE
    )
    catalog = Catalog.builtin()
    for item in report.opportunities:
        assert item.entry_id in catalog
        assert item.gain_pct >= 0


def test_missing_catalog_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "kernelopt.catalog", None)
    with pytest.raises(KernelOptError, match="built-in catalog"):
        profile_report(kernel="k", version="v", point=POINT, measurement=timed(74.0), roofline=LINE)


def test_trigger_names_every_metric_of_the_condition_in_order() -> None:
    reason = "metric arith_intensity < ridge (arith_intensity=30, ridge=163) and dram_pct < 80"
    catalog = FakeCatalog([match("kv-tile-shared-load", "Shared K/V tile load", 1.0, reason)])
    report = profile_report(
        kernel="k",
        version="v",
        point=POINT,
        measurement=timed(74.18),
        roofline=LINE,
        catalog=catalog,
    )
    assert report.opportunities[0].trigger == (
        "arith_intensity=30, ridge=163, dram_pct=48.3 "
        "(upper bound: the time above the roofline floor)"
    )


def test_cells_are_stripped_and_change_follows_the_printed_values() -> None:
    report = ProfileReport(
        kernel="k",
        version="v",
        point=POINT,
        stages=[Stage(name=" padded | name\n", duration=1.0, key_issue="  ")],
        bottleneck=Bottleneck.MEMORY,
        root_cause="r",
        baseline=[
            # printed 1.000 -> 1.000 ("1" and "1"): no change, whatever the unrounded values
            BaselineMetric(metric="Median", previous=1.00004, current=0.99996, unit="us"),
            BaselineMetric(metric=" DRAM % ", previous=30.754, current=48.246, unit="%"),
            BaselineMetric(metric="P80 (us)", previous=116.44, current=74.176, unit="us"),
            BaselineMetric(metric="Launches (ms)", previous=2.0, current=1.0, unit="us"),
            BaselineMetric(metric="Calls", previous=0.0, current=3.0),
        ],
    )
    lines = report.render().splitlines()
    assert lines[4] == "| padded / name | 1 us | n/a (no counters) | n/a (no counters) | " + (
        "n/a (no counters) |  |  |"
    )
    table = lines[lines.index("| Metric | Previous | Current | Change |") + 2 :]
    assert table == [
        "| Median (us) | 1 | 1 | +0.0% |",
        "| DRAM % | 30.75 | 48.25 | +17.5 pp |",
        "| P80 (us) | 116.4 | 74.18 | -36.3% |",
        "| Launches (ms) (us) | 2 | 1 | -50.0% |",
        "| Calls | 0 | 3 | n/a |",
    ]
    # a row rebuilt from the printed values prints the same Change
    again = BaselineMetric(metric="P80 (us)", previous=116.4, current=74.18, unit="us")
    assert again.change == report.baseline[2].change


def test_what_the_heading_or_a_table_could_not_hold_is_refused() -> None:
    # The heading "## Profile: <kernel> <version> | ..." splits the version off at the last
    # space; a stage unit sits after the duration in one cell; a trigger is one cell.
    with pytest.raises(InputError, match="version: Expected a non-empty name without spaces"):
        ProfileReport(kernel="k", version="v2 fast", point=POINT, stages=[],
                      bottleneck="Memory-bound", root_cause="x")  # fmt: skip
    with pytest.raises(InputError, match="kernel: Expected a non-empty one-line name"):
        ProfileReport(kernel="mla\ndecode", version="v2", point=POINT, stages=[],
                      bottleneck="Memory-bound", root_cause="x")  # fmt: skip
    with pytest.raises(InputError, match="unit: Expected a non-empty name"):
        Stage(name="k", duration=1.5, unit="")
    with pytest.raises(InputError, match="trigger: Expected one line of text"):
        Opportunity(name="n", entry_id="e", gain_pct=1.0, trigger="a\nb")
    with pytest.raises(InputError, match="duration: Expected a finite number >= 0, got 'fast'"):
        Stage(name="k", duration="fast")  # type: ignore[arg-type]
    with pytest.raises(InputError, match="tc_pct: Expected a finite number or None, got nan"):
        Stage(name="k", duration=1.0, tc_pct=float("nan"))
    with pytest.raises(InputError, match="gain_pct: Expected a finite number"):
        Opportunity(name="n", entry_id="e", gain_pct=None, trigger="t")  # type: ignore[arg-type]
    with pytest.raises(InputError, match="previous: Expected a finite number, got inf"):
        BaselineMetric(metric="m", previous=float("inf"), current=1.0)
    spaced = ProfileReport(kernel="mla decode", version="v2", point=POINT,
                           stages=[Stage(name="kernel", duration=1.0)],
                           bottleneck="Memory-bound", root_cause="x")  # fmt: skip
    back = parse_profile(spaced.render())
    with pytest.raises(InputError, match="stages: Expected at least one stage, got none"):
        ProfileReport(kernel="k", version="v2", point=POINT, stages=[],
                      bottleneck="Memory-bound", root_cause="x")  # fmt: skip
    assert (back.kernel, back.version) == ("mla decode", "v2")


# Any character but surrogates, and the ones markdown or the hand-off give a meaning.
_FREE = st.one_of(
    st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=12),
    st.text(alphabet="ab |`#-:;,.[]()*\t\n\r\x0b\x0c\x85\u2028é µ", min_size=1, max_size=10),
)


def _made(build: Any) -> Any:
    try:
        return build()
    except InputError:
        assume(False)


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.data())
def test_a_rendered_profile_reads_back_to_the_same_text(data: st.DataObject) -> None:
    # Cells are normalized when rendered (a pipe becomes '/'); what is printed must then
    # read back and print again unchanged, or be refused when the record is made.
    draw = data.draw
    stage = _made(
        lambda: Stage(name=draw(_FREE), duration=1.5, bottleneck=draw(_FREE), key_issue=draw(_FREE))
    )
    opportunity = _made(
        lambda: Opportunity(
            name=draw(_FREE), entry_id=draw(_FREE), gain_pct=12.0, trigger=draw(_FREE)
        )
    )
    metric = _made(lambda: BaselineMetric(metric=draw(_FREE), previous=1.0, current=2.0))
    report = _made(
        lambda: ProfileReport(
            kernel=draw(_FREE),
            version="v2",
            point=POINT,
            stages=[stage],
            bottleneck=Bottleneck.MEMORY,
            root_cause=draw(_FREE),
            opportunities=[opportunity],
            baseline=[metric],
        )
    )
    text = report.render()
    assert parse_profile(text).render() == text


def test_family_keeps_opportunities_to_the_kernels_family() -> None:
    # A row softmax far below the memory roofline: without a family the metric triggers
    # alone also fire MLA- and decode-only entries, which no softmax can apply.
    from kernelopt.bench import Cost, TrialPoint
    from kernelopt.catalog import Catalog

    catalog = Catalog.builtin()
    line = Roofline(ceilings=H200, cost=Cost(flops=5 * 8192, bytes=4 * 8192))
    args: dict[str, Any] = dict(
        kernel="softmax", version="v1", point=TrialPoint(b=32, s=1, t=256),
        measurement=timed(20.0), roofline=line,
    )  # fmt: skip
    # Without family=, the kernel's name gives it: "softmax" keeps MLA entries out too.
    unfiltered = {o.entry_id for o in profile_report(**args).opportunities}
    assert unfiltered and not unfiltered & {"kv-tile-shared-load", "split-kv-flash-decoding"}
    report = profile_report(**args, family="softmax")
    ids = {o.entry_id for o in report.opportunities}
    assert ids and all({"softmax", "any"} & set(catalog.get(i).families) for i in ids)
    assert not ids & {"kv-tile-shared-load", "split-kv-flash-decoding"}
    with pytest.raises(InputError, match="family"):
        profile_report(**args, family="softmx")


def test_a_baseline_timed_another_way_is_refused() -> None:
    # A graph replay against a cold call read as a -43 % change where the kernel itself
    # changed little: the table compares like with like or not at all.
    with pytest.raises(
        InputError,
        match=r"baseline: Expected a baseline timed in mode 'cold', .*, got 'graph'",
    ):
        profile_report(
            kernel="k", version="v2", point=POINT, measurement=timed(116.4),
            baseline=timed(66.0, mode="graph"), roofline=LINE, catalog=FakeCatalog([]),
        )  # fmt: skip
    same = profile_report(
        kernel="k", version="v2", point=POINT, measurement=timed(66.0, mode="graph"),
        baseline=timed(70.0, mode="graph"), roofline=LINE, catalog=FakeCatalog([]),
    )  # fmt: skip
    assert same.baseline[0].change == "-5.7%"


SEED = Path(__file__).resolve().parents[2].parent / "shared" / "seeds"


def test_a_built_report_follows_the_seeds_profiler_contract() -> None:
    # The contract as the workflow seed writes it, its placeholders in brackets.
    text = require_shared(SEED / "001_90bb0d321877a669.txt", "the workflow seed").read_text()
    block = text.split("Profiler -> Orchestrator (compact output)", 1)[1]
    block = block.split("Orchestrator -> Designer", 1)[0].strip().splitlines()
    template = [line for line in block if line.strip() and not line.startswith("|---")]
    report = profile_report(
        kernel="mla_decode", version="v2", point=POINT, measurement=timed(74.18),
        graph=timed(66.53, mode="graph"), baseline=timed(116.4), roofline=LINE,
        catalog=FakeCatalog(
            [match("split-kv-flash-decoding", "Split-KV", 1.0, "metric dram_pct < 70")]
        ),
    )  # fmt: skip
    rendered = [line for line in report.render().splitlines() if line.strip()]
    rendered = [line for line in rendered if not line.startswith("|---")]
    # Each template line's fixed text, in order; "(if applicable)" says when, not what.
    at = 0
    for line in template:
        fixed = re.split(r"\[[^\]]*\]|X", line.replace(" (if applicable)", ""))
        pattern = ".*".join(re.escape(part) for part in fixed)
        while not re.fullmatch(pattern, rendered[at]):
            at += 1  # table rows sit between template lines; past the end, an IndexError
        at += 1
    assert rendered[0].startswith("## Profile: mla_decode v2 | b=32, s=1, t=4096")


@pytest.mark.parametrize(
    ("point", "why"),
    [
        # int() read 32.7 as 32 and a text axis raised a bare ValueError.
        ({"b": 32.7, "s": 1, "t": 4096}, "b: Expected an integer >= 1, got 32.7"),
        ({"b": 32, "s": 1, "t": 4096, "dtype": "bf16"}, "extra['dtype']: Expected an int"),
        ({"b": True, "s": 1, "t": 4096}, "b: Expected an integer >= 1, got True"),
    ],
)
def test_a_point_mapping_that_is_no_trial_point_is_refused(
    point: dict[str, object], why: str
) -> None:
    with pytest.raises(InputError, match=re.escape(why)):
        profile_report(
            kernel="k",
            version="v",
            point=point,  # type: ignore[arg-type]
            measurement=timed(74.0),
            roofline=LINE,
            catalog=FakeCatalog([]),
        )


def test_a_point_mapping_may_hold_numpy_integers() -> None:
    np = pytest.importorskip("numpy")
    report = ProfileReport(
        kernel="k",
        version="v",
        point={"b": np.int64(8), "s": 1, "t": 64, "h": np.int32(16)},
        stages=[Stage(name="kernel", duration=1.0)],
        bottleneck="Memory-bound",
        root_cause="r",
    )
    assert report.point == TrialPoint(b=8, s=1, t=64, extra={"h": 16})
    assert type(report.point.b) is int and type(report.point.extra["h"]) is int


def test_a_launch_overhead_passed_as_a_metric_sets_the_gains_as_a_graph_timing_does() -> None:
    catalog = FakeCatalog(
        [
            match("split-kv", "Split KV", 2.0, "metric dram_pct < 70"),
            match("cuda-graphs", "CUDA graphs", 5.0, "metric launch_overhead_pct > 5"),
        ]
    )
    report = profile_report(
        kernel="mla_decode",
        version="peer",
        point=POINT,
        measurement=timed(74.176),
        roofline=LINE,
        catalog=catalog,
        extra_metrics={"launch_overhead_pct": 10.0},
    )
    gap = 100 * (74.176 - LINE.floor("us")) / 74.176
    gains = {o.entry_id: o.gain_pct for o in report.opportunities}
    # Graphs save the launch overhead measured, not the whole 51.8 % above the floor.
    assert gains["cuda-graphs"] == pytest.approx(10.0)
    assert gains["split-kv"] == pytest.approx(gap - 10.0)


def test_a_graph_timing_that_is_no_graph_replay_is_refused() -> None:
    # A hot timing passed as graph= read its L2 gain as launch overhead: 25 % of the
    # time said to be removable by CUDA graphs.
    with pytest.raises(InputError, match=r"graph: Expected a timing in mode 'graph', got 'hot'"):
        profile_report(
            kernel="k", version="v2", point=POINT, measurement=timed(400.0),
            graph=timed(300.0, mode="hot"), roofline=LINE, catalog=FakeCatalog([]),
        )  # fmt: skip


@pytest.mark.parametrize("unit", ["\u00b5s", "\u03bcs"])
def test_a_baseline_time_in_microseconds_shows_its_unit_however_it_is_spelled(unit: str) -> None:
    metric = BaselineMetric(metric="Median", previous=74.0, current=66.5, unit=unit)
    assert metric.unit == "us" and metric.label == "Median (us)"


def test_long_times_keep_their_integer_digits_and_read_back() -> None:
    report = ProfileReport(
        kernel="k",
        version="v1",
        point=POINT,
        stages=[Stage(name="main", duration=69933.0), Stage(name="tail", duration=3.25)],
        bottleneck="Memory-bound",
        root_cause="r",
        baseline=[BaselineMetric(metric="Median (us)", previous=123456.0, current=69933.0)],
    )
    text = report.render()
    assert "| main | 69933 us |" in text and "| tail | 3.25 us |" in text
    assert "| Median (us) | 123456 | 69933 |" in text
    assert "e+" not in text
    read = parse_profile(text)
    assert [stage.duration for stage in read.stages] == [69933.0, 3.25]
    assert (read.baseline[0].previous, read.baseline[0].current) == (123456.0, 69933.0)

"""The profile hand-off built from benchmark rows."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import SimpleNamespace
from typing import Any

import attrs
import pytest

from kernelopt import InputError
from kernelopt.bench import Bottleneck, Ceilings, Cost, Measurement, Roofline, profile_report
from kernelopt.workflow import parse_profile, profile_from_rows

from .conftest import SHAPE, anchor_row, bench_row

H200 = Ceilings(  # /work/shared/anchors/h200-2026-12-02.json
    gpu="NVIDIA H200",
    copy_bytes_per_s=4.2497501013921815e12,
    matmul_flop_per_s=693.6596691456391e12,
)


class FixedCatalog:
    """Answers match_metrics with fixed matches, recording what it was asked."""

    def __init__(self, *matches: Any) -> None:
        self.matches = matches
        self.asked: Mapping[str, float] = {}

    def match_metrics(self, metrics: Mapping[str, float]) -> Sequence[Any]:
        self.asked = dict(metrics)
        return self.matches


def match(entry_id: str, score: float, reason: str, kind: str = "optimization") -> Any:
    entry = SimpleNamespace(id=entry_id, name=entry_id.title(), kind=SimpleNamespace(value=kind))
    return SimpleNamespace(entry=entry, score=score, reasons=(reason,))


def test_a_report_per_point_from_roofline_shares() -> None:
    rows = [
        anchor_row("splits8"),
        bench_row(
            "splits8",
            520.0,
            config={"b": 32, "s": 16, "t": 4096, "h": 16},
            metrics={
                "dram_pct": 10.0,
                "tc_pct": 60.0,
                "floor_pct": 20.2,
                "arith_intensity": 480.0,
                "ridge": 163.2,
            },
        ),
    ]
    catalog = FixedCatalog(
        match("too-many-kv-splits", 9.0, "metric kv_splits > 8", kind="anti-pattern"),
        match("software-pipelining", 2.0, "metric dram_pct < 70 (dram_pct=53.8)"),
        match("cuda-graphs", 5.0, "metric launch_overhead_pct > 5"),
    )
    decode, spec = profile_from_rows(rows, kernel="mla_decode", version="splits8", catalog=catalog)
    assert str(decode.point) == "b=32 s=1 t=4096 h=16"
    assert decode.bottleneck is Bottleneck.MEMORY
    assert decode.root_cause.startswith(
        "Arithmetic intensity 30 FLOP/B is below the ridge 163 FLOP/B, so bytes set the floor, "
        "54% of the measured time."
    )
    stage = decode.stages[0]
    assert (stage.duration, stage.dram_pct, stage.key_issue) == (
        66.53,
        53.8,
        "54% of roofline floor",
    )
    # Anti-patterns are not opportunities; without a measured launch overhead the gain of
    # every remedy is the time above the floor: 100 - 53.8 %.
    assert [o.entry_id for o in decode.opportunities] == ["cuda-graphs", "software-pipelining"]
    assert decode.opportunities[1].gain_pct == pytest.approx(46.2)
    assert decode.opportunities[1].trigger == (
        "dram_pct=53.8 (upper bound: the time above the roofline floor)"
    )
    assert spec.bottleneck is Bottleneck.COMPUTE
    assert parse_profile(decode.render()).render() == decode.render()


def test_latency_bound_and_launch_overhead() -> None:
    row = bench_row(
        "v1",
        20.0,
        metrics={
            "dram_pct": 12.0,
            "tc_pct": 1.0,
            "floor_pct": 10.0,
            "launch_overhead_pct": 35.0,
            **SHAPE,
        },
    )
    catalog = FixedCatalog(match("cuda-graphs", 1.0, "metric launch_overhead_pct > 5"))
    [report] = profile_from_rows([row], kernel="k", version="v1", catalog=catalog)
    assert report.bottleneck is Bottleneck.LATENCY
    assert "CUDA graphs remove 35% of the time" in report.root_cause
    assert report.opportunities[0].gain_pct == 35.0


def test_baseline_table_from_the_previous_rows() -> None:
    [report] = profile_from_rows(
        [anchor_row("splits8")],
        kernel="mla_decode",
        version="splits8",
        baseline=[
            anchor_row("splits16"),
            bench_row("splits16", 1.0, config={"b": 1, "s": 1, "t": 1}),
        ],
        catalog=FixedCatalog(),
    )
    table = {row.metric: (row.previous, row.current, row.change) for row in report.baseline}
    assert table["Median (us)"] == (74.08, 66.53, "-10.2%")
    assert table["Floor %"] == (48.3, 53.8, "+5.5 pp")
    assert set(table) == {"Median (us)", "P80 (us)", "Floor %", "DRAM %", "TC %"}


def test_rows_with_samples_and_ceilings_give_profile_reports_own_report() -> None:
    row = anchor_row("splits8", samples=30)
    catalog = FixedCatalog(match("software-pipelining", 2.0, "metric dram_pct < 70"))
    [report] = profile_from_rows(
        [row], kernel="mla_decode", version="splits8", ceilings=H200, catalog=catalog
    )
    measured = Measurement(samples=row.samples, gpu=row.gpu)
    seconds = measured.seconds
    cost = Cost(
        flops=row.metrics["tc_pct"] / 100 * H200.matmul_flop_per_s * seconds,
        bytes=row.metrics["dram_pct"] / 100 * H200.copy_bytes_per_s * seconds,
    )
    expected = profile_report(
        kernel="mla_decode",
        version="splits8",
        point={"b": 32, "s": 1, "t": 4096, "h": 16},
        measurement=measured,
        roofline=Roofline(ceilings=H200, cost=cost),
        catalog=catalog,
    )
    assert report == expected
    assert "GB/s" in report.root_cause  # absolute rates: only this path can state them


def test_choosing_rows() -> None:
    rows = [bench_row("a", 1.0), bench_row("b", 2.0)]
    with pytest.raises(InputError, match="one implementation"):
        profile_from_rows(rows, kernel="k", version="v", catalog=FixedCatalog())
    [report] = profile_from_rows(rows, kernel="k", version="b", catalog=FixedCatalog())
    assert report.stages[0].duration == 2.0
    # A kernel's own axes are its point; a config of no integer axis has none.
    [own] = profile_from_rows(
        [bench_row("a", 1.0, config={"n": 4})], kernel="k", version="a", catalog=FixedCatalog()
    )
    assert own.point == "n=4"
    with pytest.raises(InputError, match=r"integer axes .* got 'dtype=bf16' \(none\)"):
        profile_from_rows(
            [bench_row("a", 1.0, config={"dtype": "bf16"})],
            kernel="k",
            version="a",
            catalog=FixedCatalog(),
        )
    with pytest.raises(InputError, match="roofline metrics"):
        profile_from_rows(
            [bench_row("a", 1.0, metrics={})], kernel="k", version="a", catalog=FixedCatalog()
        )
    with pytest.raises(InputError, match="at point"):
        profile_from_rows(rows, kernel="k", version="a", point="s=16", catalog=FixedCatalog())


def test_rows_of_the_decode_benchmark_name_their_axes_s_q_t_max_and_h_q() -> None:
    # benchmarks/mla_decode.py writes the draft tokens as s_q and the longest cache as t_max.
    metrics = {"dram_pct": 53.0, "tc_pct": 72.0, "arith_intensity": 240.0, "ridge": 160.0}
    decode = {"b": 32, "s_q": 1, "h_q": 128, "t_max": 4096, "page": 64}
    rows = [
        bench_row("seesaw", 74.7, config=decode, metrics=metrics),
        bench_row("seesaw", 125.2, config=decode | {"s_q": 16, "h_q": 16}, metrics=metrics),
    ]
    [report] = profile_from_rows(
        rows, kernel="mla", version="seesaw", point="s=1 h_q=128", catalog=FixedCatalog()
    )
    assert (report.point.b, report.point.s, report.point.t) == (32, 1, 4096)
    assert report.point.extra == {"h_q": 128, "page": 64}
    assert report.stages[0].duration == 74.7
    # h names the query heads too (h_q in these rows).
    [by_h] = profile_from_rows(
        rows, kernel="mla", version="seesaw", point="s=16 h=16", catalog=FixedCatalog()
    )
    assert by_h.stages[0].duration == 125.2
    with pytest.raises(InputError, match="at point"):
        profile_from_rows(
            rows, kernel="mla", version="seesaw", point="t=512", catalog=FixedCatalog()
        )
    # The FP8 cache's row at the same sizes is another hand-off, and its heading says so.
    fp8 = bench_row("seesaw", 60.0, config=decode | {"kv": "fp8"}, metrics=metrics)
    both = profile_from_rows(
        [rows[0], fp8], kernel="mla", version="seesaw", point="s=1", catalog=FixedCatalog()
    )
    headings = [r.render().split("\n", 1)[0] for r in both]
    assert headings == [
        "## Profile: mla seesaw | b=32, s=1, t=4096, h_q=128, page=64",
        "## Profile: mla seesaw[kv=fp8] | b=32, s=1, t=4096, h_q=128, page=64",
    ]
    assert parse_profile(both[1].render()).version == "seesaw[kv=fp8]"


MEMORY_ROW = {
    "dram_pct": 53.8,
    "tc_pct": 9.89,
    "floor_pct": 53.8,
    "arith_intensity": 30.0,
    "ridge": 163.2,
    "launch_overhead_pct": 60.0,
}


@pytest.mark.parametrize(("launch", "graphs_first"), [(20.0, False), (30.0, True)])
def test_opportunities_rank_by_gain_then_match_score_and_say_the_gain_is_a_bound(
    launch: float, graphs_first: bool
) -> None:
    row = bench_row("v2", 66.53, metrics={**MEMORY_ROW, "launch_overhead_pct": launch})
    catalog = FixedCatalog(
        match("cuda-graphs", 2.0, f"metric launch_overhead_pct > 5 (launch_overhead_pct={launch})"),
        match("software-pipelining", 2.5, "metric dram_pct < 60 and tc_pct < 60"),
        match("kv-tile-shared-load", 2.5, "metric arith_intensity < ridge and dram_pct < 80"),
        match("online-softmax", 3.0, "metric arith_intensity < ridge and dram_pct > 50"),
    )
    [report] = profile_from_rows([row], kernel="k", version="v2", catalog=catalog)
    # 46.2 % of the time is above the floor; what launching costs, no change inside the
    # kernel saves. Equal gains rank by score, then by the trigger that tests the side of
    # the ridge and DRAM%.
    kernel_side = ["online-softmax", "kv-tile-shared-load", "software-pipelining"]
    order = ["cuda-graphs", *kernel_side] if graphs_first else [*kernel_side, "cuda-graphs"]
    assert [o.entry_id for o in report.opportunities] == order
    gains = {o.entry_id: o.gain_pct for o in report.opportunities}
    assert gains["online-softmax"] == pytest.approx(46.2 - launch)
    assert gains["cuda-graphs"] == launch
    triggers = {o.entry_id: o.trigger for o in report.opportunities}
    assert triggers["online-softmax"].endswith("(upper bound: the time above the roofline floor)")
    assert triggers["cuda-graphs"] == (
        f"launch_overhead_pct={launch:g} (measured: the share of time CUDA graphs removed)"
    )
    assert "upper bound" in report.render()


ONLINE_SOFTMAX_KERNEL = """
@triton.jit
def k(K, V):
    m_i = tl.full([16], float("-inf"), tl.float32)
    l_i = tl.zeros([16], tl.float32)
    for start in tl.range(0, n, 64, num_stages=3):
        pass
"""


def test_techniques_the_kernel_has_are_not_suggested() -> None:
    row = bench_row("v2", 66.53, metrics=MEMORY_ROW)
    catalog = FixedCatalog(
        match("online-softmax", 3.0, "metric arith_intensity < ridge and dram_pct > 50"),
        match("software-pipelining", 2.5, "metric dram_pct < 60 and tc_pct < 60"),
        match("kv-tile-shared-load", 2.5, "metric arith_intensity < ridge and dram_pct < 80"),
    )
    [report] = profile_from_rows(
        [row], kernel="k", version="v2", catalog=catalog, kernel_source=ONLINE_SOFTMAX_KERNEL
    )
    # m_i/l_i is an online softmax, num_stages a pipeline: only the shared tile is left.
    assert [o.entry_id for o in report.opportunities] == ["kv-tile-shared-load"]
    [named] = profile_from_rows(
        [row], kernel="k", version="v2", catalog=catalog, present={"kv-tile-shared-load"}
    )
    assert [o.entry_id for o in named.opportunities] == ["online-softmax", "software-pipelining"]
    with pytest.raises(InputError, match="collection of entry ids"):
        profile_from_rows([row], kernel="k", version="v2", catalog=catalog, present="x")


def test_the_exact_report_also_drops_present_techniques() -> None:
    row = anchor_row("splits8", samples=30)
    catalog = FixedCatalog(match("software-pipelining", 2.0, "metric dram_pct < 70"))
    [report] = profile_from_rows(
        [row],
        kernel="mla_decode",
        version="splits8",
        ceilings=H200,
        catalog=catalog,
        present=("software-pipelining",),
    )
    assert report.opportunities == () and "GB/s" in report.root_cause


def test_share_only_rows_timed_on_the_cpu_say_so() -> None:
    metrics = {"dram_pct": 53.0, "tc_pct": 9.0, "arith_intensity": 30.0, "ridge": 160.0}
    decode = {"b": 32, "s": 1, "t": 4096}
    for fields, warned in (({"backend": "cpu-perf-counter"}, True), ({}, False)):
        row = bench_row("v", 74.7, config=decode, metrics=metrics, **fields)
        [report] = profile_from_rows([row], kernel="k", version="v", catalog=FixedCatalog())
        assert report.root_cause.startswith("Timed with the host clock (CPU)") is warned


def test_a_host_clock_row_written_as_mode_cpu_gives_its_report() -> None:
    # BenchRow takes mode "cpu" (the log format's host-clock mode); rebuilt as a
    # Measurement, whose modes are the timer's, it raised "Expected one of cold, hot, graph".
    row = anchor_row("splits8", samples=30)
    for fields in ({"mode": "cpu"}, {"mode": "cpu", "backend": "cpu-perf-counter"}):
        cpu = attrs.evolve(row, **fields)
        [report] = profile_from_rows(
            [cpu], kernel="mla_decode", version="splits8", ceilings=H200, catalog=FixedCatalog()
        )
        assert report.root_cause.startswith("Timed with the host clock (CPU)")


def test_a_row_of_a_call_that_moves_no_bytes_is_compute_bound() -> None:
    # row_from_measurement leaves the infinite intensity out of such a row (JSON has no
    # inf); its bytes_per_s of 0 still places it, above any ridge.
    from kernelopt.bench import row_from_measurement

    line = Roofline(ceilings=H200, cost=Cost(flops=693.6596691456391e6, bytes=0))
    measured = Measurement(samples=[2.0, 2.0, 2.0], gpu="NVIDIA H200")
    row = row_from_measurement(
        measured,
        op="o",
        impl="v1",
        config={"b": 1, "s": 1, "t": 8},
        metrics=line.place(measured).metrics(),
    )
    (report,) = profile_from_rows([row], kernel="k", version="v1", catalog=FixedCatalog())
    assert report.bottleneck is Bottleneck.COMPUTE
    assert "Arithmetic intensity inf FLOP/B is above the ridge" in report.root_cause


def test_family_keeps_suggestions_to_the_kernels_family() -> None:
    # A softmax's rows under the memory roofline: the MLA tile load and split-KV fire on
    # the metrics alone, and are no opportunity for it.
    from kernelopt.catalog import Catalog

    row = bench_row("v1", 20.0, config={"b": 32, "s": 1, "t": 256}, op="softmax",
                    metrics={"dram_pct": 30.0, "tc_pct": 0.5, "floor_pct": 30.0,
                             "arith_intensity": 1.25, "ridge": 163.2})  # fmt: skip
    # Without a family, the kernel's name gives it; a name of none offers only entries
    # for every family, and says so.
    [named] = profile_from_rows([row], kernel="softmax", version="v1")
    [unnamed] = profile_from_rows([row], kernel="row_kernel", version="v1")
    assert "kv-tile-shared-load" not in {o.entry_id for o in unnamed.opportunities}
    assert "only entries for every kernel family" in unnamed.note and named.note == ""
    [report] = profile_from_rows([row], kernel="softmax", version="v1", family="softmax")
    assert named.opportunities == report.opportunities
    catalog = Catalog.builtin()
    ids = [o.entry_id for o in report.opportunities]
    assert ids and all({"softmax", "any"} & set(catalog.get(i).families) for i in ids)
    with pytest.raises(InputError, match="family"):
        profile_from_rows([row], kernel="softmax", version="v1", family="softmx")


def test_mode_chooses_the_rows_timed_that_way() -> None:
    rows = [
        bench_row("splits8", 120.0, mode="cold", metrics={**anchor_row("splits8").metrics}),
        anchor_row("splits8", mode="graph"),
    ]
    [graph] = profile_from_rows(rows, kernel="k", version="splits8", mode="graph")
    catalog = FixedCatalog()
    [cold] = profile_from_rows(rows, kernel="k", version="splits8", mode="cold", catalog=catalog)
    assert (graph.stages[0].duration, cold.stages[0].duration) == (66.53, 120.0)
    # The graph row of the point gives the cold report its launch overhead.
    assert catalog.asked["launch_overhead_pct"] == pytest.approx(100 * (120.0 - 66.53) / 120.0)
    # Without a mode, the point timed two ways is refused (the graph row counted unsaid).
    with pytest.raises(InputError, match="timed one way"):
        profile_from_rows(rows, kernel="k", version="splits8")
    with pytest.raises(InputError, match="mode 'hot'"):
        profile_from_rows(rows, kernel="k", version="splits8", mode="hot")


def test_the_baseline_table_compares_rows_of_the_versions_gpu() -> None:
    # The H100 row of the baseline came last and was compared with the H200 version:
    # the vs-Baseline table showed the devices' difference as the version's gain.
    h100 = bench_row("splits16", 120.0, gpu="NVIDIA H100")
    [report] = profile_from_rows(
        [anchor_row("splits8")],
        kernel="mla_decode",
        version="splits8",
        baseline=[anchor_row("splits16"), h100],
        catalog=FixedCatalog(),
    )
    table = {row.metric: row.previous for row in report.baseline}
    assert table["Median (us)"] == 74.08
    [alone] = profile_from_rows(
        [anchor_row("splits8")],
        kernel="mla_decode",
        version="splits8",
        baseline=[h100],
        catalog=FixedCatalog(),
    )
    assert alone.baseline == ()


def test_rows_of_the_version_on_two_gpus_are_refused() -> None:
    rows = [anchor_row("splits8"), bench_row("splits8", 80.0, gpu="NVIDIA H100")]
    with pytest.raises(InputError, match=r"^rows: Expected rows of splits8 from one GPU"):
        profile_from_rows(rows, kernel="mla_decode", version="splits8", catalog=FixedCatalog())

"""The roofline: costs, floors, metrics, the ceilings cache, and the anchors it must reproduce."""

from __future__ import annotations

import importlib.util
import json
import math
from pathlib import Path

import pytest

from kernelopt._errors import DeviceError, FormatError, InputError, KernelOptError
from kernelopt.bench import (
    Ceilings,
    Cost,
    Measurement,
    Roofline,
    copy_cost,
    elementwise_cost,
    launch_overhead_pct,
    load_ceilings,
    matmul_cost,
    measure_ceilings,
    mla_decode_cost,
    plot_roofline,
    roofline_layout,
)
from kernelopt.bench.roofline import ceilings_path, save_ceilings
from kernelopt.bench.timer import cuda_available
from kernelopt.kernels.mla import mla_decode_floor_us

from ..conftest import require_shared

ANCHORS = Path(__file__).resolve().parents[2].parent / "shared" / "anchors"
H200 = Ceilings(gpu="NVIDIA H200", copy_bytes_per_s=4.25e12, matmul_flop_per_s=694e12)


def test_cost_helpers_count_flops_and_bytes() -> None:
    mm = matmul_cost(8192, 8192, 8192)
    assert mm.flops == 2 * 8192**3
    assert mm.bytes == 3 * 8192 * 8192 * 2
    assert copy_cost(1000) == Cost(flops=0, bytes=2000, name="copy 1000 B")
    ew = elementwise_cost(100, inputs=2, outputs=1, elt_bytes=2, flops_per_element=3)
    assert (ew.flops, ew.bytes) == (300.0, 600.0)
    both = mm + ew
    assert both.flops == mm.flops + 300 and both.name == "matmul 8192x8192x8192 + elementwise 100"
    assert math.isinf(Cost(flops=1, bytes=0).arith_intensity)


def test_cost_of_accepts_a_cost_a_mapping_or_a_function() -> None:
    cost = Cost(flops=10, bytes=5)
    assert Cost.of(cost) is cost
    assert Cost.of({"flops": 10, "bytes": 5}) == cost
    assert Cost.of(lambda: {"flops": 10, "bytes": 5}) == cost
    with pytest.raises(InputError, match="flops and bytes"):
        Cost.of({"flops": 10})
    # What was given is named: a misspelt key is one letter off, not missing.
    with pytest.raises(InputError, match=r"got one without bytes or flops \(its keys: 'flop'\)$"):
        Cost.of({"flop": 10})
    with pytest.raises(InputError, match=r"got an empty mapping$"):
        Cost.of({})
    with pytest.raises(InputError, match="a Cost, a mapping or a function"):
        Cost.of(3)  # type: ignore[arg-type]
    with pytest.raises(InputError, match="finite number >= 0"):
        Cost(flops=-1, bytes=0)


@pytest.mark.parametrize(
    ("value", "got"), [("abc", "'abc'"), ("1e9", "'1e9'"), (None, "None"), (True, "True")]
)
def test_a_cost_that_is_not_a_number_is_an_input_error(value: object, got: str) -> None:
    # float() used to turn "1e9" into a number silently, and "abc" or None into a bare
    # ValueError or TypeError that the command-line tool shows as a traceback.
    with pytest.raises(InputError, match=f"flops: Expected a finite number >= 0, got {got}"):
        Cost(flops=value, bytes=1)  # type: ignore[arg-type]
    with pytest.raises(InputError, match=f"bytes: Expected a finite number >= 0, got {got}"):
        Cost.of({"flops": 1, "bytes": value})
    assert Cost(flops=3, bytes=2.5) == Cost(flops=3.0, bytes=2.5)


def test_floor_is_the_larger_time_and_names_the_bound() -> None:
    memory = Roofline(ceilings=H200, cost=Cost(flops=1e9, bytes=8e9))
    assert memory.bound == "memory"
    assert memory.floor("s") == pytest.approx(8e9 / 4.25e12)
    compute = Roofline(ceilings=H200, cost=matmul_cost(8192, 8192, 8192))
    assert compute.bound == "compute"
    assert compute.floor("ms") == pytest.approx(2 * 8192**3 / 694e12 * 1e3)
    assert compute.arith_intensity > compute.ridge > memory.arith_intensity
    assert H200.ridge == pytest.approx(694e12 / 4.25e12)
    with pytest.raises(InputError, match="Expected a unit"):
        memory.floor("fortnights")


def test_placed_point_metrics() -> None:
    line = Roofline(ceilings=H200, cost=Cost(flops=4.25e9, bytes=4.25e9))  # floor 1 ms (memory)
    point = line.place(2.0, unit="ms", launch_overhead_pct=5.0)
    metrics = point.metrics()
    assert metrics["floor_pct"] == pytest.approx(50.0)
    assert metrics["dram_pct"] == pytest.approx(50.0)
    assert metrics["tc_pct"] == pytest.approx(100 * 4.25e9 / 2e-3 / 694e12)
    assert metrics["arith_intensity"] == pytest.approx(1.0)
    assert metrics["ridge"] == pytest.approx(H200.ridge)
    assert metrics["launch_overhead_pct"] == 5.0
    # absolute rates, so a row that carries them can be placed again on other ceilings
    assert metrics["flop_per_s"] == pytest.approx(4.25e9 / 2e-3)
    assert metrics["bytes_per_s"] == pytest.approx(4.25e9 / 2e-3)
    assert point.gap_s == pytest.approx(1e-3) and point.gap_pct == pytest.approx(50.0)
    measured = Measurement(samples=[2000.0, 2000.0, 2000.0])
    assert line.place(measured).floor_pct == pytest.approx(50.0)
    assert "launch_overhead_pct" not in line.place(measured).metrics()
    with pytest.raises(InputError, match="positive time"):
        line.place(0.0)


def test_launch_overhead_is_what_graphs_remove() -> None:
    events = Measurement(samples=[55.9, 55.9, 55.9])
    graph = Measurement(samples=[46.0, 46.0, 46.0], mode="graph")
    assert launch_overhead_pct(events, graph) == pytest.approx(100 * 9.9 / 55.9)
    assert launch_overhead_pct(graph, events) == 0.0


def _anchor(name: str) -> dict[str, object]:
    path = require_shared(ANCHORS / name, "the anchor measurements")
    data: dict[str, object] = json.loads(path.read_text())
    return data


@pytest.mark.parametrize("name", ["h200-2026-12-02.json", "h200-2026-12-02-flashmla.json"])
def test_mla_floors_reproduce_the_h200_anchors(name: str) -> None:
    # The anchors record their measured ceilings and the floor of every MLA point (b=32,
    # t=4096, bf16); the same formula over the same ceilings must give the same floor.
    data = _anchor(name)
    ceilings = Ceilings(
        gpu="NVIDIA H200",
        copy_bytes_per_s=float(data["copy_tbps"]) * 1e12,  # type: ignore[arg-type]
        matmul_flop_per_s=float(data["matmul_tflops"]) * 1e12,  # type: ignore[arg-type]
    )
    rows = data["rows"]
    assert isinstance(rows, list) and rows
    for row in rows:
        cost = mla_decode_cost(b=32, s_q=row["s"], h_q=row["h"], seqlens=4096)
        line = Roofline(ceilings=ceilings, cost=cost)
        assert line.floor("us") == pytest.approx(row["floor_us"], rel=1e-9)
        # The kernels' own formula, which the benchmark and the MLA docs quote, agrees.
        floor_us = mla_decode_floor_us(
            [4096] * 32, batch=32, s_q=row["s"], h_q=row["h"], elt_bytes=2,
            matmul_tflops=float(data["matmul_tflops"]),  # type: ignore[arg-type]
            copy_tbps=float(data["copy_tbps"]),  # type: ignore[arg-type]
        )  # fmt: skip
        assert floor_us == pytest.approx(row["floor_us"], rel=1e-9)
        assert line.place(row["us_events"]).floor_pct / 100 == pytest.approx(
            row["floor_us"] / row["us_events"]
        )


def test_mla_decode_cost_with_ragged_lengths_sums_them() -> None:
    even = mla_decode_cost(b=2, s_q=1, h_q=16, seqlens=100)
    ragged = mla_decode_cost(b=2, s_q=1, h_q=16, seqlens=[50, 150])
    assert (even.flops, even.bytes) == (ragged.flops, ragged.bytes)


def test_ceilings_cache_round_trip(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KERNELOPT_CACHE_DIR", str(tmp_path / "cache"))
    assert ceilings_path() == tmp_path / "cache" / "ceilings.json"
    assert load_ceilings("NVIDIA H200") is None
    other = Ceilings(gpu="NVIDIA H100", copy_bytes_per_s=3e12, matmul_flop_per_s=7e14)
    save_ceilings(H200)
    save_ceilings(other)
    assert load_ceilings("NVIDIA H200") == H200
    assert load_ceilings("NVIDIA H100") == other
    data = json.loads(ceilings_path().read_text())
    assert data["format"] == 1 and sorted(data["devices"]) == ["NVIDIA H100", "NVIDIA H200"]


def test_xdg_cache_home_is_honoured(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KERNELOPT_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert ceilings_path() == tmp_path / "kernelopt" / "ceilings.json"


def test_a_foreign_or_broken_cache_is_never_overwritten(tmp_path: Path) -> None:
    path = tmp_path / "ceilings.json"
    path.write_text("{not json")
    with pytest.raises(FormatError, match=r"ceilings\.json:1"):
        load_ceilings("x", path=path)
    with pytest.raises(FormatError):
        save_ceilings(H200, path=path)
    assert path.read_text() == "{not json"
    entry = {"gpu": "g", "copy_bytes_per_s": 1.0, "matmul_flop_per_s": 1.0, "bogus": 1}
    path.write_text(json.dumps({"format": 1, "devices": {"g": entry}}))
    with pytest.raises(FormatError, match="bogus"):
        load_ceilings("g", path=path)
    del entry["copy_bytes_per_s"], entry["bogus"]
    path.write_text(json.dumps({"format": 1, "devices": {"g": entry}}))
    with pytest.raises(FormatError, match="copy_bytes_per_s"):
        load_ceilings("g", path=path)
    path.write_text(json.dumps({"format": 2, "devices": {}}))
    with pytest.raises(FormatError, match="ceilings cache"):
        load_ceilings("g", path=path)


def test_an_unreadable_cache_is_a_clear_error(tmp_path: Path) -> None:
    # A bare UnicodeDecodeError or IsADirectoryError reached `kernelopt bench ceilings`
    # as a traceback.
    path = tmp_path / "ceilings.json"
    path.write_bytes(b"\xff\xfe{}")
    with pytest.raises(FormatError, match="UTF-8"):
        load_ceilings("g", path=path)
    with pytest.raises(FormatError):
        save_ceilings(H200, path=path)
    assert path.read_bytes() == b"\xff\xfe{}"
    folder = tmp_path / "folder"
    folder.mkdir()
    with pytest.raises(InputError, match="readable ceilings cache"):
        load_ceilings("g", path=folder)


def test_measure_ceilings_needs_cuda(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    if cuda_available():  # small sizes: the real ceilings are checked by bench_verify.py
        found = measure_ceilings(path=path, copy_bytes=1 << 26, matmul_n=1024, max_time_ms=50)
        assert found.copy_bytes_per_s > 0 and load_ceilings(found.gpu, path=path) == found
    else:
        with pytest.raises(DeviceError, match="CUDA device to measure ceilings"):
            measure_ceilings(path=path)


def test_plot_roofline(tmp_path: Path) -> None:
    line = Roofline(ceilings=H200, cost=matmul_cost(4096, 4096, 4096))
    point = line.place(500.0)
    if importlib.util.find_spec("matplotlib") is None:
        with pytest.raises(
            KernelOptError, match=r"matplotlib to draw the roofline .*kernelopt\[plot\]"
        ):
            plot_roofline([point], tmp_path / "r.png")
    else:
        target = plot_roofline([point], tmp_path / "r.png", labels=["gemm"])
        assert target.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with pytest.raises(InputError, match="at least one roofline point"):
        plot_roofline([], tmp_path / "r.png")


def test_roofline_layout_leaves_zero_flop_points_off_the_log_axes() -> None:
    # A copy has no FLOPs: intensity 0 and rate 0 have no place on log axes (the range
    # computation divided by 0 on the H200 before).
    copy = Roofline(ceilings=H200, cost=copy_cost(1 << 30)).place(505.7)
    gemm = Roofline(ceilings=H200, cost=matmul_cost(8192, 8192, 8192)).place(1600.9)
    free = Roofline(ceilings=H200, cost=Cost(flops=1e6, bytes=0)).place(1.0)  # intensity inf
    layout = roofline_layout([copy, gemm, free], labels=["copy", "matmul", "registers"])
    assert 0 < layout.low < H200.ridge / 100 and layout.high > H200.ridge * 10
    assert math.isfinite(layout.high / layout.low)
    assert [label for _, _, label in layout.drawn] == [
        f"matmul ({gemm.floor_pct:.0f}% of floor)",
        f"registers ({free.floor_pct:.0f}% of floor)",
    ]
    assert layout.drawn[0][0] == pytest.approx(gemm.roofline.arith_intensity)
    assert layout.drawn[0][1] == pytest.approx(gemm.flop_per_s / 1e12)
    assert layout.drawn[1][0] == layout.high  # no bytes: drawn at the right edge
    assert layout.skipped == (
        f"copy (0 FLOP: {copy.dram_pct:.0f}% of the copy bandwidth, "
        f"{copy.floor_pct:.0f}% of floor)",
    )
    only_copy = roofline_layout([copy])
    assert only_copy.drawn == () and only_copy.low == pytest.approx(H200.ridge / 200)
    assert only_copy.skipped[0].startswith("point 1 (0 FLOP")
    with pytest.raises(InputError, match=r"^labels: Expected 2 labels, one per point, got 1$"):
        roofline_layout([copy, gemm], labels=["copy"])
    with pytest.raises(InputError, match=r"^labels: Expected 1 label, one per point, got 2$"):
        roofline_layout([copy], labels=["copy", "gemm"])
    other = Ceilings(gpu="other", copy_bytes_per_s=1e12, matmul_flop_per_s=1e14)
    with pytest.raises(InputError, match="one device's ceilings"):
        roofline_layout([copy, Roofline(ceilings=other, cost=copy_cost(8)).place(1.0)])


def test_the_ceilings_cache_takes_a_path_as_text(tmp_path: Path) -> None:
    ceilings = Ceilings(gpu="G", copy_bytes_per_s=4e12, matmul_flop_per_s=6e14)
    where = str(tmp_path / "ceilings.json")
    assert save_ceilings(ceilings, path=where) == Path(where)
    assert load_ceilings("G", path=where) == ceilings


@pytest.mark.parametrize("rate", [True, "1e12", float("inf"), 0.0])
def test_a_ceiling_rate_must_be_a_positive_number(rate) -> None:
    with pytest.raises(InputError, match=r"copy_bytes_per_s: Expected a finite number > 0"):
        Ceilings(gpu="g", copy_bytes_per_s=rate, matmul_flop_per_s=1e14)


def test_a_bad_time_is_named_as_given_and_text_is_no_time() -> None:
    # -5 us was reported in seconds ("got -4.9999999999999996e-06"), and "5" was read as
    # 5 us where every count of a Cost refuses text.
    line = Roofline(ceilings=H200, cost=Cost(flops=1e9, bytes=1e6))
    with pytest.raises(InputError, match=r"^measured: Expected a positive time, got -5 us$"):
        line.place(-5)
    with pytest.raises(InputError, match=r"^measured: Expected a positive time, got nan ms$"):
        line.place(float("nan"), unit="ms")
    for value in ("5", True, None):
        with pytest.raises(InputError, match=r"^measured: Expected a Measurement or a number"):
            line.place(value)  # type: ignore[arg-type]


def test_a_roofline_of_something_else_is_refused_when_made() -> None:
    # A mapping in place of a Cost was taken, and the first floor read raised
    # "AttributeError: 'dict' object has no attribute 'flops'".
    with pytest.raises(InputError, match=r"^cost: Expected a Cost \(Cost\.of reads a mapping\)"):
        Roofline(ceilings=H200, cost={"flops": 1e9, "bytes": 1e6})  # type: ignore[arg-type]
    with pytest.raises(InputError, match=r"^ceilings: Expected Ceilings, got str"):
        Roofline(ceilings="NVIDIA H200", cost=Cost(flops=1, bytes=1))  # type: ignore[arg-type]


def test_a_launch_overhead_that_is_no_percentage_is_refused() -> None:
    # A NaN share was carried into the metrics, and the row made of them refused later,
    # after the timing, far from the call that passed it.
    line = Roofline(ceilings=H200, cost=Cost(flops=1e9, bytes=1e6))
    for value in (float("nan"), -1.0, "5"):
        with pytest.raises(InputError, match=r"^launch_overhead_pct: Expected a finite number"):
            line.place(10.0, launch_overhead_pct=value)  # type: ignore[arg-type]
    assert line.place(10.0, launch_overhead_pct=0).metrics()["launch_overhead_pct"] == 0.0

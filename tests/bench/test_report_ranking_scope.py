"""profile_report's Top 3 for a launch-bound kernel, a Triton kernel and a kernel of its
own axes.

A latency-bound quantizer (3.63 us cold, 1.94 us in a graph) was told to try software
pipelining at "52 %" ahead of CUDA graphs at 46.6 %: the first an upper bound, the
second measured, and neither said which. Drawing a roofline was ranked as a remedy, and
a Triton kernel was offered CUDA's warp specialization.
"""

from __future__ import annotations

import pytest

from kernelopt._errors import InputError
from kernelopt.bench import Bottleneck, Ceilings, Cost, Measurement, Roofline, profile_report
from kernelopt.catalog import Catalog

from .test_report import FakeCatalog, match

H100 = Ceilings(gpu="NVIDIA H100", copy_bytes_per_s=3.02e12, matmul_flop_per_s=674e12)
# 0.1 us of bytes at 3.02 TB/s, 3 % of the 3.63 us measured: a latency-bound call whose
# bound (97 % less the 46.6 % launches take) is larger than the measured launch saving.
SMALL = Roofline(ceilings=H100, cost=Cost(flops=1e5, bytes=0.3e6))
POINT = {"b": 32, "s": 1, "t": 4096}


def timed(us: float, mode: str = "cold") -> Measurement:
    return Measurement(samples=[us] * 5, mode=mode, gpu="NVIDIA H100")


def _launch_bound(catalog: object) -> object:
    return profile_report(
        kernel="fp8_quant",
        version="v3",
        point=POINT,
        measurement=timed(3.63),
        graph=timed(1.94, "graph"),
        roofline=SMALL,
        catalog=catalog,
    )


def test_a_measured_launch_saving_ranks_ahead_of_upper_bounds_when_latency_bound() -> None:
    catalog = FakeCatalog(
        [
            match("software-pipelining", "Pipelining", 9.0, "metric dram_pct < 70"),
            match("cuda-graphs", "CUDA graphs", 1.0, "metric launch_overhead_pct > 20"),
        ]
    )
    report = _launch_bound(catalog)
    assert report.bottleneck is Bottleneck.LATENCY  # type: ignore[attr-defined]
    first, second = report.opportunities  # type: ignore[attr-defined]
    assert first.entry_id == "cuda-graphs" and round(first.gain_pct, 1) == 46.6
    assert second.entry_id == "software-pipelining" and second.gain_pct > first.gain_pct
    assert first.trigger.endswith("(measured: the share of time CUDA graphs removed)")
    assert second.trigger.endswith("(upper bound: the time above the roofline floor)")
    text = report.render()  # type: ignore[attr-defined]
    assert text.index("cuda-graphs") < text.index("software-pipelining")


def test_methods_are_left_out_of_the_opportunities() -> None:
    catalog = FakeCatalog(
        [
            match("roofline-analysis", "Roofline", 9.0, "metric dram_pct < 70"),
            match("cuda-event-instrumentation", "Events", 9.0, "metric dram_pct < 70"),
            match("cuda-graphs", "CUDA graphs", 1.0, "metric launch_overhead_pct > 20"),
        ]
    )
    ids = [o.entry_id for o in _launch_bound(catalog).opportunities]  # type: ignore[attr-defined]
    assert ids == ["cuda-graphs"]


def test_the_built_in_catalog_ranks_the_measured_launch_saving_first() -> None:
    report = _launch_bound(None)
    ids = [o.entry_id for o in report.opportunities]  # type: ignore[attr-defined]
    assert ids[0] in {"cuda-graphs", "buffer-persistence", "kernel-fusion"}
    assert not {"roofline-analysis", "cuda-event-instrumentation"} & set(ids)


def test_language_keeps_shared_entries_and_the_languages_own() -> None:
    compute = Roofline(ceilings=H100, cost=Cost(flops=674e12 * 40e-6 * 0.4, bytes=1e6))
    kwargs = {
        "kernel": "gemm",
        "version": "v1",
        "point": POINT,
        "measurement": timed(40.0),
        "roofline": compute,
    }
    anywhere = {o.entry_id for o in profile_report(**kwargs).opportunities}  # type: ignore[arg-type]
    assert "warp-specialization" in anywhere
    triton = profile_report(**kwargs, language="triton")  # type: ignore[arg-type]
    ids = {o.entry_id for o in triton.opportunities}
    assert "warp-specialization" not in ids
    scopes = {entry.id: entry.scope for entry in Catalog.builtin()}
    assert all(scopes[i] in {"shared", "triton"} for i in ids), ids
    with pytest.raises(InputError, match=r"^language: Expected a language"):
        profile_report(**kwargs, language="fortran")  # type: ignore[arg-type]

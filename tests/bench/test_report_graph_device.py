"""profile_report's graph timing must be of the same device as the measurement."""

from __future__ import annotations

import pytest

from kernelopt._errors import InputError
from kernelopt.bench import (
    Ceilings,
    Measurement,
    ProfileReport,
    Roofline,
    TrialPoint,
    mla_decode_cost,
    profile_report,
)
from kernelopt.catalog import Catalog

H200 = Ceilings(gpu="NVIDIA H200", copy_bytes_per_s=4.25e12, matmul_flop_per_s=673e12)
LINE = Roofline(ceilings=H200, cost=mla_decode_cost(b=32, s_q=1, h_q=16, seqlens=4096))
POINT = TrialPoint(b=32, s=1, t=4096, extra={"h": 16})


def _timed(us: float, mode: str, gpu: str) -> Measurement:
    return Measurement(samples=[us] * 5, mode=mode, gpu=gpu)


def _report(graph_gpu: str) -> ProfileReport:
    return profile_report(
        kernel="k",
        version="v1",
        point=POINT,
        measurement=_timed(60.0, "cold", "NVIDIA H200"),
        graph=_timed(50.0, "graph", graph_gpu),
        roofline=LINE,
        catalog=Catalog.builtin(),
    )


def test_a_graph_timing_made_on_another_gpu_is_refused() -> None:
    # An H100's replays against an H200's events read the GPUs' difference as the
    # share of the time CUDA graphs remove.
    with pytest.raises(InputError) as caught:
        _report("NVIDIA H100 80GB HBM3")
    assert str(caught.value) == (
        "graph: Expected a graph timing of the same call on 'NVIDIA H200', as the "
        "measurement, got one made on 'NVIDIA H100 80GB HBM3'"
    )


@pytest.mark.parametrize("gpu", ["NVIDIA H200", ""])
def test_a_graph_timing_on_the_same_or_an_unnamed_device_is_taken(gpu: str) -> None:
    # (60 - 50) / 60 of the time is what the replays remove.
    gains = {o.entry_id: o.gain_pct for o in _report(gpu).opportunities}
    assert gains["cuda-graphs"] == pytest.approx(100 / 6)

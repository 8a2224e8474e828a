"""Builders shared by the workflow tests: benchmark rows and a small knowledge tree."""

from __future__ import annotations

import random
import shutil
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from kernelopt.bench import BenchRow, Bottleneck, ProfileReport, Stage, append_rows
from kernelopt.catalog import BUILTIN_ROOT

POINT = {"b": 32, "s": 1, "t": 4096, "h": 16}
# The peer Triton MLA decode kernel at b=32 s=1 h=16 t=4096 with 8, 16 and 32 KV splits,
# CUDA-graph medians (us) and roofline shares from /work/shared/anchors/h200-2026-12-02.json
# (copy 4.25 TB/s, matmul 694 TFLOP/s, floor 35.79 us).
ANCHORS = {
    "splits8": (66.53, {"dram_pct": 53.8, "tc_pct": 9.89, "floor_pct": 53.8}),
    "splits16": (74.08, {"dram_pct": 48.3, "tc_pct": 8.88, "floor_pct": 48.3}),
    "splits32": (91.22, {"dram_pct": 39.2, "tc_pct": 7.21, "floor_pct": 39.2}),
}
SHAPE = {"arith_intensity": 30.0, "ridge": 163.2}
METRICS = {**ANCHORS["splits8"][1], **SHAPE}
SMALL_TREE = (
    "optimizations/split-kv-flash-decoding.md",
    "anti-patterns/too-many-kv-splits.md",
    "languages/triton/optimizations/dot-input-precision.md",
)


def bench_row(
    impl: str,
    median: float,
    *,
    spread: float = 0.004,
    samples: int = 0,
    seed: int = 0,
    config: Mapping[str, Any] | None = None,
    metrics: Mapping[str, float] | None = None,
    gpu: str = "NVIDIA H200",
    **fields: Any,
) -> BenchRow:
    """A row around ``median`` us; ``samples`` > 0 keeps that many raw samples."""
    rng = random.Random(seed)
    kept = tuple(median * (1.0 + rng.gauss(0.0, spread)) for _ in range(samples))
    return BenchRow(
        **{"op": "mla_decode", **fields},
        impl=impl,
        config=dict(POINT if config is None else config),
        n=samples or 100,
        median=median,
        p20=median * (1.0 - spread),
        p80=median * (1.0 + spread),
        gpu=gpu,
        timestamp="2026-12-02T10:00:00+00:00",
        metrics=dict(METRICS if metrics is None else metrics),
        samples=kept,
    )


def memory_bound_report(**changes: Any) -> ProfileReport:
    """The profile hand-off of a memory-bound ``mla_decode`` v2 at :data:`POINT`, one stage,
    no opportunities unless ``changes`` (ProfileReport fields) gives some."""
    fields: dict[str, Any] = {
        "kernel": "mla_decode",
        "version": "v2",
        "point": dict(POINT),
        "stages": [Stage(name="mla_decode", duration=74.18, tc_pct=8.9, dram_pct=48.3)],
        "bottleneck": Bottleneck.MEMORY,
        "root_cause": "Bytes set the floor.",
    }
    return ProfileReport(**{**fields, **changes})


def anchor_row(impl: str, **kwargs: Any) -> BenchRow:
    """The anchor measurement of ``impl`` (splits8, splits16, splits32) as a row."""
    median, shares = ANCHORS[impl]
    return bench_row(impl, median, metrics={**shares, **SHAPE}, **kwargs)


def write_rows(path: Path, *rows: BenchRow) -> Path:
    append_rows(path, rows)
    return path


@pytest.fixture
def knowledge(tmp_path: Path) -> Path:
    """A user's knowledge tree holding copies of three built-in entries."""
    root = tmp_path / "docs" / "knowledge"
    for rel in SMALL_TREE:
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(BUILTIN_ROOT / rel, target)
    return root


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` by relative path, with its bytes."""
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


def read_profile_warned(text: str) -> tuple[ProfileReport, list[str]]:
    """The profile hand-off ``text`` reads to, and the ProfileWarnings reading it gave."""
    from kernelopt.workflow import parse_profile
    from kernelopt.workflow.profile import ProfileWarning

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        report = parse_profile(text, path="profile.md")
    said = [str(item.message) for item in caught if issubclass(item.category, ProfileWarning)]
    return report, said

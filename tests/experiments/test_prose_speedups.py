"""Per-regime speedups a step states in prose ("tiny 1.307→1.378x") where the log's other
steps give the same regimes' speedups in tables."""

from __future__ import annotations

from pathlib import Path

from kernelopt.experiments import MetricKind, read_log

# gemm-flipfloppers' wording: a table for G0.1, prose for G0.2 and G1.2, the name of a
# regime at the end of one line and its change at the start of the next.
_TABLE_STEP = """### 2. G0.1 — SDPA replaces manual attention
**Verification:** full sweep, all PASS:

| shape | speedup | note |
|---|---|---|
| tiny | 1.307x | |
| default | 1.137x | |
| long_seq | 2.147x | |
| large_batch | 1.253x | |
"""
_PROSE_STEPS = """### 3. G0.2 — fused QKV
**Verification:** full sweep, all PASS. vs G0.1 (job 16): tiny
1.307→1.378x, default 1.137->1.150x, padded 1.134→1.161x, large_batch flat
(1.253→1.255x). long_seq/long_seq_padded dipped slightly (2.147→2.095x,
2.148→2.096x).

### 4. G1.2 — fold the attention scale
**Speedup: flat, within noise** (tiny 2.640x→2.585x, default 1.397x -> 1.392x,
others similar).

```
tiny 9.0→9.9x
```
"""


def _log(root: Path, body: str) -> Path:
    path = root / "docs" / "PROGRESS.md"
    path.parent.mkdir(parents=True)
    path.write_text(
        "# Progress Log\n\n## Step-by-step history\n\n### 1. Baseline sweep recorded\n"
        "Recorded the ground truth.\n\n" + body,
        encoding="utf-8",
    )
    return root


def _points(root: Path) -> dict[int, dict[str, float]]:
    log = read_log(root, catalog=())
    return {e.number: {p.name: p.value for p in e.points} for e in log.experiments}


def test_prose_changes_read_as_the_new_speedup(tmp_path: Path) -> None:
    log = read_log(_log(tmp_path, _TABLE_STEP + "\n" + _PROSE_STEPS), catalog=())
    by = {e.number: e for e in log.experiments}
    assert {p.name: p.value for p in by[3].points} == {
        "tiny": 1.378,
        "default": 1.150,
        "large_batch": 1.255,
    }
    assert {p.name: p.value for p in by[4].points} == {"tiny": 2.585, "default": 1.392}
    assert all(p.kind is MetricKind.SPEEDUP and p.unit == "x" for p in by[3].points)
    # Each number keeps the line it was read from, also when its name ends the line above.
    lines = {p.name: p.source.line for p in by[3].points}
    assert lines == {"tiny": 20, "default": 20, "large_batch": 21}
    assert by[2].points[0].value == 1.307  # the table step is read as before


def test_prose_changes_are_left_where_no_other_step_reads_speedups(tmp_path: Path) -> None:
    # The other step times regimes in microseconds: a speedup is another kind of number.
    timed = _TABLE_STEP.replace("speedup", "time (us)").replace("x |", " |")
    points = _points(_log(tmp_path, timed + "\n" + _PROSE_STEPS))
    assert points[2]["tiny"] == 1.307 and points[3] == {} and points[4] == {}


def test_prose_changes_are_left_in_a_log_without_tables(tmp_path: Path) -> None:
    points = _points(_log(tmp_path, _PROSE_STEPS))
    assert points[3] == {} and points[4] == {}

"""Fuzz the readers: whatever is in the files, read_log returns a log and never raises."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kernelopt.diagnose import diagnose_log
from kernelopt.experiments import read_log

_WORDS = st.sampled_from(
    [
        "| Exp | Latency | Status |",
        "|---|---|---|",
        "| 1 | 3.2 us | KEPT |",
        "| 2 | -> | FAIL |",
        "| x | 0.5ms -> 0.4ms | NEW BEST |",
        "## 2026-04-22 - tile sweep (ACCEPTED)",
        "## 2026-04-21 - cache (REVERTED — correctness failure)",
        "- **Result**: 0.2 -> **0.19ms**",
        "### Step 3: split-KV",
        "### 4. BLOCK_N=64",
        "# Experiment 7: exp2",
        "Status: PASS — NEW BEST",
        "Correctness: 11/12",
        "```",
        "- Next: try flash-decoding",
        "BLOCK_N 64 num_warps=8 WG size 128",
        "",
        "|",
        "||||",
        "# ",
        "- **Status**:",
        "diff --git a/k.py b/k.py",
        "index 1e7856d..4a788cf 100644",
        "--- a/k.py",
        "+++ b/k.py",
        "@@ -1,2 +1,3 @@",
        "@@ -0,0 +1 @@",
        " x = 1",
        "-if a:",
        "+BLOCK: tl.constexpr = 64",
        "\\ No newline at end of file",
    ]
)
_TEXT = st.one_of(
    st.lists(_WORDS, max_size=30).map("\n".join),
    st.text(max_size=400),
    st.lists(st.one_of(_WORDS, st.text(max_size=40)), max_size=20).map("\n".join),
)
_NAMES = st.sampled_from(
    [
        "experiments/summary.md",
        "experiments/exp_1/result.md",
        "experiments/exp_2/plan.md",
        "experiments/exp_3/kernel.py",
        "experiments/exp_3/change.diff",
        "experiments/exp_4/change.patch",
        "experiments/LESSONS.md",
        "experiments/profile.md",
        "logs/optimization_log.md",
        "PROGRESS.md",
        "CLAUDE.md",
        "bench.jsonl",
        "runs/bench_20260101_3of4.tsv",
        "archive/log.json",
    ]
)


def _check(files: dict[str, bytes]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for name, data in files.items():
            path = root / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        log = read_log(root, catalog=())
        numbers = [e.number for e in log.experiments]
        assert numbers == sorted(numbers) and len(set(numbers)) == len(numbers)
        for experiment in log.experiments:
            for ref in experiment.refs.values():
                assert ref.path in files or ref.path.endswith(".md")
        diagnosis = diagnose_log(log, catalog=None)
        assert len(diagnosis.checks) == 9
        assert all("internal error" not in c.sentence for c in diagnosis.checks)
        diagnosis.render_plan()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(_NAMES, _TEXT.map(lambda t: t.encode("utf-8")), max_size=6))
def test_text_files_never_break_the_readers(files: dict[str, bytes]) -> None:
    _check(files)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(_NAMES, st.binary(max_size=300), max_size=4))
def test_arbitrary_bytes_never_break_the_readers(files: dict[str, bytes]) -> None:
    _check(files)

"""The trial matrix as a workload profile: what the decode benchmark times, for diagnose."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from kernelopt.diagnose import Pathology, diagnose
from kernelopt.workload import find_shortcuts, read_profile_md

ROOT = Path(__file__).resolve().parents[3]
LOG = ROOT / "docs" / "kernels" / "mla_decode"
SHIPPED = LOG / "experiments" / "workload_profile.md"


def _write_profile(out: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "benchmarks/mla_decode.py", "--workload", str(out), *extra],
        cwd=ROOT,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_the_benchmark_writes_the_logs_workload_profile(tmp_path: Path) -> None:
    out = tmp_path / "workload_profile.md"
    done = _write_profile(out)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "(6 calls)" in done.stdout
    # The log's profile is what the command writes today (regenerate it if the matrix moves).
    assert out.read_text("utf-8") == SHIPPED.read_text("utf-8")


def test_the_fp8_trial_matrix_records_656_byte_cache_rows(tmp_path: Path) -> None:
    out = tmp_path / "workload_profile.md"
    done = _write_profile(out, "--kv", "fp8")
    assert done.returncode == 0, done.stderr[-2000:]
    [op] = read_profile_md(out).ops
    assert all(":uint8" in s.args.split("kv_cache=")[1].split()[0] for s in op.shapes)
    assert {dict(s.axes)["d"] for s in op.shapes} == {656}


def test_the_trial_matrix_profile_has_the_decode_axes_and_shortcuts() -> None:
    profile = read_profile_md(SHIPPED)
    [op] = profile.ops
    assert op.op == "mla_decode" and op.calls == 6 and op.family == "mla-decode"
    axes = {a.name: a for a in op.axes}
    assert (axes["h_kv"].min, axes["h_kv"].max) == (1, 1)
    assert {(v.value, v.calls) for v in axes["s_q"].values} == {(1, 4), (16, 2)}
    assert {(v.value, v.calls) for v in axes["h_q"].values} == {(16, 3), (128, 3)}
    assert (axes["seqlen"].min, axes["seqlen"].max) == (4096, 5094)
    rules = {s.rule: s for s in find_shortcuts(profile)}
    assert set(rules) == {"uniform-lengths", "size1-axis"}
    assert abs(rules["uniform-lengths"].call_share - 4 / 6) < 1e-9


def test_diagnose_reads_the_profile_beside_the_mla_log() -> None:
    diagnosis = diagnose(LOG)
    assert not diagnosis.unread
    missing = [m for check in diagnosis.checks for m in check.missing]
    assert not any("workload_profile.md" in m for m in missing)
    # Exp 30 took the equal-length shortcut (tagged uniform-length-fast-path): diagnose no
    # longer lists it among the overlooked ones.
    shortcut = next(c for c in diagnosis.checks if c.pathology is Pathology.OVERLOOKED_SHORTCUT)
    assert "same seqlen" not in shortcut.sentence

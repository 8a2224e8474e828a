"""A profile kept in an experiment's folder (``exp_N/profile.md``) is profiling data of
that experiment, and the log's profile when no ``experiments/profile.md`` is kept."""

from __future__ import annotations

from pathlib import Path

from kernelopt.diagnose import Pathology, diagnose
from kernelopt.experiments import read_log

from ..conftest import write_files

_SUMMARY = (
    "| Exp | Description | Latency | Unit | Status |\n|---|---|---|---|---|\n"
    "| 1 | baseline | 100 | us | BASELINE |\n"
    "| 2 | tiles | 90 | us | KEPT |\n"
    "| 3 | stages | 88 | us | KEPT |\n"
)


def _profile(version: str, bound: str, dram: str) -> str:
    return (
        f"## Profile: mla_decode {version} | b=32, s=1, t=4096, h=16\n"
        "### Stages\n"
        "| Stage | Duration | TC% | DRAM% | Occ% | Bottleneck | Key Issue |\n"
        "|-------|----------|-----|-------|------|------------|-----------|\n"
        f"| mla_decode | 68.61 us | 9.6 | {dram} | n/a (no counters) | {bound} | floor |\n"
        f"### Bottleneck: {bound}\n"
    )


def test_a_profile_in_an_experiment_folder_is_read(tmp_path: Path) -> None:
    root = write_files(
        tmp_path,
        {
            "experiments/summary.md": _SUMMARY,
            "experiments/exp_2/profile.md": _profile("exp 2", "Memory-bound", "40.0"),
            "experiments/exp_3/profile.md": _profile("exp 3", "Compute-bound", "52.2"),
        },
    )
    log = read_log(root, catalog=())
    # The latest experiment's profile is the log's, as the seed's profile.md would be.
    assert log.profile is not None and log.profile.bottleneck == "compute"
    assert log.profile.metrics["dram_pct"] == 52.2
    assert str(log.profile.source) == "experiments/exp_3/profile.md"
    second = log.experiment(2)
    assert second is not None and second.metrics["dram_pct"] == 40.0
    assert any(f.source.path == "experiments/exp_2/profile.md" for f in second.profiling)
    # Read as it stood before exp 3, the profile is exp 2's.
    before = read_log(root, catalog=(), until=3)
    assert before.profile is not None and before.profile.bottleneck == "memory"
    check = next(c for c in diagnose(root).checks if c.pathology is Pathology.WRONG_BOTTLENECK)
    assert "No profiling data" not in check.sentence


def test_a_loose_profile_stays_the_logs_profile(tmp_path: Path) -> None:
    root = write_files(
        tmp_path,
        {
            "experiments/summary.md": _SUMMARY,
            "experiments/profile.md": _profile("exp 3", "Memory-bound", "52.2"),
            "experiments/exp_2/profile.md": _profile("exp 2", "Compute-bound", "40.0"),
        },
    )
    log = read_log(root, catalog=())
    assert log.profile is not None and str(log.profile.source) == "experiments/profile.md"
    assert log.profile.bottleneck == "memory"


def test_the_lines_of_a_folder_profile_are_cited_once(tmp_path: Path) -> None:
    root = write_files(
        tmp_path,
        {
            "experiments/summary.md": _SUMMARY,
            "experiments/exp_3/profile.md": _profile("exp 3", "Compute-bound", "52.2"),
        },
    )
    profiling = read_log(root, catalog=()).profiling
    assert profiling and len(profiling) == len(set(profiling))

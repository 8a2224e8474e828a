"""``until`` cuts profiler notes like experiments: a note counts when its entry stood."""

from __future__ import annotations

from pathlib import Path

from kernelopt.experiments import read_log

# gdn-prefill-devlog's shape: newest first, the NCU entries after the early experiments.
_DEVLOG = """# Kernel Optimization Log

Tracking all optimization iterations.

## 2026-04-21 - NCU Hardware Profiling + launch_bounds Experiment (REVERTED)

- NCU showed 89% scheduler starvation with 4 warps/SM.
- **Result**: avg **0.2100ms**
- **Status**: REVERTED

## 2026-04-19 - CUDA graph capture for long path (REVERTED)

- **Result**: avg **0.2400ms**
- **Status**: REVERTED

## 2026-04-18 - Deep Python dispatch + fast-launch (ACCEPTED)

- **Result**: avg **0.2300ms**
- **Status**: ACCEPTED

## 2026-04-15 - First kernel (ACCEPTED)

- **Result**: avg **0.2500ms**
- **Status**: ACCEPTED
"""
_NOTE = "# Notes on timing\n\nnsys showed 40% of the time in cudaLaunchKernel.\n"


def _log(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def _profiled(root: Path, until: int | None) -> list[str]:
    return [str(f.source) for f in read_log(root, until=until, catalog=()).profiling]


def test_a_later_entry_profiling_is_cut(tmp_path: Path) -> None:
    root = _log(tmp_path, {"logs/optimization_log.md": _DEVLOG})
    log = read_log(root, catalog=())
    assert [e.date[:10] for e in log.experiments][-1] == "2026-04-21"  # exp 4
    assert _profiled(root, None) == ["logs/optimization_log.md:7"]
    assert _profiled(root, 4) == []
    assert _profiled(root, 3) == []


def test_an_entry_before_until_keeps_its_profiling(tmp_path: Path) -> None:
    early = _DEVLOG.replace(
        "## 2026-04-15 - First kernel (ACCEPTED)\n",
        "## 2026-04-15 - First kernel (ACCEPTED)\n\n- nsys showed 40% of the time in launches.\n",
    )
    root = _log(tmp_path, {"logs/optimization_log.md": early})
    assert _profiled(root, 2) == ["logs/optimization_log.md:23"]
    assert sorted(_profiled(root, None)) == [
        "logs/optimization_log.md:23",
        "logs/optimization_log.md:7",
    ]


def test_a_note_that_cannot_be_placed_counts_only_without_until(tmp_path: Path) -> None:
    root = _log(tmp_path, {"logs/optimization_log.md": _DEVLOG, "logs/timing_notes.md": _NOTE})
    assert "logs/timing_notes.md:3" in _profiled(root, None)
    assert _profiled(root, 4) == []
    # An until past every experiment cuts nothing: the log as it is.
    assert "logs/timing_notes.md:3" in _profiled(root, 5)


def test_a_lesson_counts_when_the_experiment_it_cites_stood(tmp_path: Path) -> None:
    lessons = (
        "# Lessons\n\n- [exp 1] nsys showed 40% of the time in launches.\n"
        "- [exp 4] NCU showed 89% scheduler starvation.\n"
        "- NCU showed 6% achieved occupancy.\n"
    )
    root = _log(tmp_path, {"logs/optimization_log.md": _DEVLOG, "logs/LESSONS.md": lessons})
    assert _profiled(root, 3) == ["logs/LESSONS.md:3"]
    assert {"logs/LESSONS.md:3", "logs/LESSONS.md:4", "logs/LESSONS.md:5"} <= set(
        _profiled(root, None)
    )


def test_until_cuts_lessons_citing_later_experiments_however_the_citation_is_written(
    tmp_path: Path,
) -> None:
    rows = "".join(f"| {n} | try {n} | {10 - n / 10} us | KEPT |\n" for n in range(1, 8))
    lessons = (
        "# Lessons\n\n- [exp 3] kept\n- (exp 6) split-KV needs 8 splits\n"
        "- (Experiment 7): later\n- [exp_6] also later\n- exp 4: kept too\n"
    )
    root = _log(
        tmp_path,
        {
            "experiments/summary.md": "| Exp | Description | Latency | Status |\n"
            "|---|---|---|---|\n" + rows,
            "experiments/LESSONS.md": lessons,
        },
    )

    log = read_log(root, until=5)

    assert [lesson.text for lesson in log.lessons] == ["[exp 3] kept", "exp 4: kept too"]

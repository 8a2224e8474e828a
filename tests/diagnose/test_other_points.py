"""Trial points of a result other than its headline (the first row).

A log timed at a decode point (tokens=1, the first row) and a prefill point (tokens=4096,
the second) reads its gains from the first. A kept attempt that took the prefill point
from 85 to 71 us while the decode point stayed put is no step of a plateau, nor a sign of
tuning on the wrong side: the local-minimum item starts the plateau after it, and a warning
says the header read the first row alone.
"""

from __future__ import annotations

from pathlib import Path

from kernelopt.bench import Measurement, to_result_row, write_experiment
from kernelopt.diagnose import Pathology, diagnose

P = Pathology

# (title, decode us, prefill us, status): exp 3 makes prefill 16.5% faster, decode 0.5%.
_RUNS = [
    ("torch eager baseline", 18.4, 240.0, "BASELINE"),
    ("fused add+norm+quant", 4.10, 85.0, "KEPT"),
    ("4 rows per program for prefill", 4.08, 71.0, "KEPT"),
    ("evict_first on x", 4.09, 70.6, "REVERTED"),
    ("num_warps by shape", 4.07, 70.2, "REVERTED"),
    ("two chunks, no padding", 4.09, 69.9, "REVERTED"),
    ("scale in registers", 4.09, 70.1, "REVERTED"),
]


def _log(root: Path, runs: list[tuple[str, float, float, str]]) -> Path:
    (root / "kernels").mkdir(parents=True)
    (root / "kernels" / "ln_quant.py").write_text("import triton\n", encoding="utf-8")
    (root / "CLAUDE.md").write_text(
        "# Fused add + layer norm + fp8 quant (Triton)\n\nKernel: kernels/ln_quant.py\n",
        encoding="utf-8",
    )
    for number, (title, decode, prefill, status) in enumerate(runs, start=1):
        rows = [
            to_result_row(
                Measurement(samples=[us] * 5, gpu="NVIDIA H200"),
                point=f"hidden=7168 tokens={tokens}",
                impl=f"v{number}",
            )
            for us, tokens in ((decode, 1), (prefill, 4096))
        ]
        write_experiment(
            root / "experiments",
            experiment=number,
            title=title,
            rows=rows,
            status=status,
            correctness="PASS",
            date="2026-12-07",
        )
    return root


def _sentence(diagnosis, pathology: Pathology) -> str:  # type: ignore[no-untyped-def]
    return next(c.sentence for c in diagnosis.checks if c.pathology is pathology)


_MOVE = "exp 3 took hidden=7168 tokens=4096 from 85 us (exp 2) to 71 us (16.5% faster)"


def test_a_point_other_than_the_headline_that_moved_ends_the_plateau(tmp_path: Path) -> None:
    diagnosis = diagnose(_log(tmp_path / "log", _RUNS))
    # Exps 3-7 gained under 5% on the first row; exp 3 gained 16.5% on the second.
    assert diagnosis.finding(P.LOCAL_MINIMUM) is None
    sentence = _sentence(diagnosis, P.LOCAL_MINIMUM)
    assert f"({_MOVE}, a trial point other than the headline's): no plateau" in sentence
    assert sentence.startswith("4 attempts since the best last moved")


def test_a_warning_names_the_point_the_headline_missed(tmp_path: Path) -> None:
    diagnosis = diagnose(_log(tmp_path / "log", _RUNS))
    warned = [w for w in diagnosis.warnings if w.startswith(_MOVE)]
    assert warned == [
        f"{_MOVE}, a trial point other than its headline (hidden=7168 tokens=1, 0.5% gained "
        "there): gains and new bests are read from the headline (the first row of a result) "
        "alone"
    ]
    # Exp 2 moved its headline too: the header says so already.
    assert not any(w.startswith("exp 2 took") for w in diagnosis.warnings)


def test_without_such_a_move_the_plateau_stands(tmp_path: Path) -> None:
    flat = [(t, d, 85.0 if n > 1 else p, s) for n, (t, d, p, s) in enumerate(_RUNS)]
    diagnosis = diagnose(_log(tmp_path / "log", flat))
    assert diagnosis.finding(P.LOCAL_MINIMUM) is not None
    assert not any("a trial point other than" in w for w in diagnosis.warnings)


def test_only_results_of_two_rows_or_more_are_read_for_other_points(tmp_path: Path) -> None:
    # A long log's results mostly time one point: those are counted, not parsed.
    from kernelopt.diagnose.floors import result_rows
    from kernelopt.experiments import read_log

    root = _log(tmp_path, _RUNS[:2])
    log = read_log(root, catalog=[])
    first = log.experiment(1)
    assert first is not None
    assert len(result_rows(str(root), first, at_least=2)) == 2
    assert result_rows(str(root), first, at_least=3) == ()
    assert len(result_rows(str(root), first)) == 2

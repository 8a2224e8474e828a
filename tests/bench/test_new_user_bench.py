"""A softmax kernel 5759x faster than torch, timed, judged, logged and learned from.

A ratio of 0.0001737 keeps its digits in ``compare``'s summary and in LEARN's notes, and
the change it is does not read as the whole time saved; ``write_experiment`` copies the
kernel into ``exp_N/``, where ``kernelopt diagnose`` reads it; ``trial_matrix`` says what
to pass when ``axes=`` has no point to cross.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from kernelopt import InputError
from kernelopt.bench import (
    Comparison,
    Measurement,
    Verdict,
    judge,
    to_result_row,
    trial_matrix,
    write_experiment,
)
from kernelopt.catalog import BUILTIN_ROOT, parse_entry
from kernelopt.diagnose import Pathology, diagnose
from kernelopt.workflow import Action, Observation, evidence_row, learn

# torch.softmax against the fused kernel on rows=16 cols=128 (us): 5759x less time.
TORCH_US, FUSED_US = 1000.0, 0.17366
RATIO, RATIO_LOW, RATIO_HIGH = 0.00017366, 0.00017291, 0.00017452
ENTRY = "split-kv-flash-decoding"
POINT = "rows=16 cols=128"

SOFTMAX_V1 = "import torch\n\n\ndef softmax(x):\n    return torch.softmax(x, -1)\n"
SOFTMAX_V2 = (
    "import torch\n\n\ndef softmax(x):\n"
    "    if x.shape[-1] == 1:\n        return torch.ones_like(x)\n"
    "    return torch.softmax(x, -1)\n"
)


def huge_speedup(
    verdict: str = "FAST", low: float = RATIO_LOW, high: float = RATIO_HIGH
) -> Comparison:
    return Comparison(
        verdict=verdict,
        ratio=RATIO,
        ratio_low=low,
        ratio_high=high,
        noise=0.004,
        threshold=0.01,
        pairs=60,
    )


def observation(comparison: Comparison) -> Observation:
    return Observation(
        comparison=comparison,
        before=TORCH_US,
        after=FUSED_US,
        point=POINT,
        gpu="NVIDIA H200",
        date="2026-12-02",
        source="runs/torch.jsonl vs runs/fused.jsonl",
        before_label="torch",
        after_label="fused",
        method="judge on 60 paired samples",
    )


# --- ratios and changes written with their digits ---------------------------------------


def test_a_tiny_ratio_and_its_interval_keep_four_significant_digits() -> None:
    assert huge_speedup().summary() == (
        "FAST 0.0001737x [0.0001729, 0.0001745], same-version spread ±0.4%, threshold ±1.0%"
    )


def test_an_ordinary_ratio_keeps_its_three_decimals() -> None:
    ordinary = Comparison(
        verdict="FAST", ratio=0.934, ratio_low=0.93, ratio_high=0.9412, noise=0.004, threshold=0.01
    )
    assert ordinary.summary() == (
        "FAST 0.934x [0.930, 0.941], same-version spread ±0.4%, threshold ±1.0%"
    )
    slower = Comparison(
        verdict="SLOW",
        ratio=5759.12,
        ratio_low=5700.0,
        ratio_high=5800.5,
        noise=0.004,
        threshold=0.01,
    )
    assert slower.summary().startswith("SLOW 5759.120x [5700.000, 5800.500], ")


def test_a_judged_5759x_speedup_does_not_print_as_zero() -> None:
    baseline = [TORCH_US * (1.0 + 0.001 * (i % 7)) for i in range(40)]
    candidate = [FUSED_US * (1.0 + 0.001 * (i % 5)) for i in range(40)]
    again = [TORCH_US * (1.0 + 0.001 * (i % 3)) for i in range(40)]
    result = judge(baseline, candidate, baseline_again=again)
    assert result.verdict is Verdict.FAST
    assert re.match(r"FAST 0\.0001\d\d\dx \[0\.0001\d\d\d, 0\.0001\d\d\d\], ", result.summary())


def test_the_evidence_row_change_of_a_99_98_percent_saving_is_not_minus_100() -> None:
    row = evidence_row(observation(huge_speedup()), kernel="softmax")
    assert row.change == "-99.98 % (FAST)"


def test_learn_writes_the_tiny_ratio_and_the_change_with_their_digits(tmp_path: Path) -> None:
    knowledge = tmp_path / "docs" / "knowledge"
    target = knowledge / "optimizations" / f"{ENTRY}.md"
    target.parent.mkdir(parents=True)
    shutil.copyfile(BUILTIN_ROOT / "optimizations" / f"{ENTRY}.md", target)
    outcome = learn(
        observation(huge_speedup()), entry_id=ENTRY, knowledge=knowledge, kernel="softmax"
    )
    assert outcome.action is Action.EVIDENCE and outcome.row is not None
    assert outcome.row.change == "-99.98 % (FAST)"
    notes = parse_entry(target.read_text(encoding="utf-8")).evidence[-1].notes
    assert "time ratio 0.0001737 [0.0001729, 0.0001745], same-version spread ±0.4%" in notes
    assert "time ratio 0.000 " not in notes and "-100.0" not in outcome.summary()
    assert "against 1000 µs (-99.98%, threshold ±1.0%" in outcome.summary()


def test_an_unclear_interval_reaching_a_tiny_ratio_keeps_its_digits(tmp_path: Path) -> None:
    unclear = observation(huge_speedup("UNCLEAR", low=0.0004, high=0.995))
    outcome = learn(unclear, entry_id=ENTRY, knowledge=tmp_path / "knowledge", dry_run=True)
    assert outcome.action is Action.NONE
    assert "(time ratio in [0.0004, 0.995] against ±1.0%)" in outcome.summary()


# --- write_experiment(snapshot=...) -------------------------------------------------------


def kernel_file(project: Path, text: str, name: str = "softmax.py") -> Path:
    path = project / "kernels" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def write(root: Path, experiment: int, us: float, **kwargs: object) -> None:
    row = to_result_row(
        Measurement(samples=[us, us * 1.01, us * 0.99], gpu="NVIDIA H200"),
        point=POINT,
        impl="fused",
    )
    write_experiment(
        root,
        experiment=experiment,
        title=f"fused softmax v{experiment}",
        rows=[row],
        status="KEPT",
        correctness="PASS",
        **kwargs,  # type: ignore[arg-type]
    )


def files_under(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def test_write_experiment_copies_the_kernel_files_under_their_names(tmp_path: Path) -> None:
    source = kernel_file(tmp_path, SOFTMAX_V1)
    launch = kernel_file(tmp_path, "// launch\n", name="launch.cu")
    root = tmp_path / "experiments"
    write(root, 1, 1.0, snapshot=source)
    write(root, 2, 0.9, snapshot=[source, launch])
    assert (root / "exp_1" / "softmax.py").read_bytes() == source.read_bytes()
    assert sorted(p.name for p in (root / "exp_2").iterdir()) == [
        "launch.cu",
        "result.md",
        "softmax.py",
    ]
    assert (root / "exp_2" / "launch.cu").read_text(encoding="utf-8") == "// launch\n"


def test_diagnose_reads_the_snapshots_write_experiment_copied(tmp_path: Path) -> None:
    source = kernel_file(tmp_path, SOFTMAX_V1)
    root = tmp_path / "experiments"
    write(root, 1, 1.0, snapshot=source)
    write(root, 2, 0.99, snapshot=str(source))
    kernel_file(tmp_path, SOFTMAX_V2)
    write(root, 3, 0.98, snapshot=source)

    def over_engineering(**kwargs: object) -> str:
        checks = diagnose(root, **kwargs).checks  # type: ignore[arg-type]
        return next(c.sentence for c in checks if c.pathology is Pathology.OVER_ENGINEERING)

    # Three stalled attempts, the kernel grown by a branch in the third.
    assert "from exp 1 to exp 3 code lines 3 → 5 (+67%), branches 0 → 1" in over_engineering()
    assert "latest snapshot (exp 2): 3 code lines" in over_engineering(until=3)


def test_a_snapshot_already_in_the_folder_is_taken_as_it_is(tmp_path: Path) -> None:
    root = tmp_path / "experiments"
    placed = kernel_file(tmp_path, SOFTMAX_V1)
    (root / "exp_1").mkdir(parents=True)
    in_folder = root / "exp_1" / "softmax.py"
    shutil.copyfile(placed, in_folder)
    write(root, 1, 1.0, snapshot=in_folder)
    assert in_folder.read_text(encoding="utf-8") == SOFTMAX_V1


def test_overwrite_replaces_an_earlier_snapshot(tmp_path: Path) -> None:
    source = kernel_file(tmp_path, SOFTMAX_V1)
    root = tmp_path / "experiments"
    write(root, 1, 1.0, snapshot=source)
    kernel_file(tmp_path, SOFTMAX_V2)
    write(root, 1, 0.9, snapshot=source, overwrite=True)
    assert (root / "exp_1" / "softmax.py").read_text(encoding="utf-8") == SOFTMAX_V2


@pytest.mark.parametrize(
    ("given", "message"),
    [
        (
            lambda p: p / "kernels" / "sofmax.py",
            r"^snapshot: Expected a kernel file to snapshot, got no file at .*sofmax\.py$",
        ),
        (
            lambda p: p / "kernels",
            r"^snapshot: Expected a kernel file to snapshot, got a directory at .*kernels$",
        ),
        (
            lambda p: kernel_file(p, "plan\n", name="notes.txt"),
            r"^snapshot: Expected a kernel source or diff \(\.c, \.cc, .*\), got .*notes\.txt$",
        ),
        (
            lambda p: [p / "kernels" / "softmax.py", kernel_file(p / "other", "x = 1\n")],
            r"^snapshot\[1\]: Expected snapshots of distinct names \(each is copied under its "
            r"own name\), got .*kernels/softmax\.py and .*other/kernels/softmax\.py$",
        ),
        (lambda p: 3, r"^snapshot: Expected a kernel file path or a list of them, got int$"),
        (lambda p: [b"softmax.py"], r"^snapshot\[0\]: Expected a kernel file path, got bytes$"),
    ],
)
def test_a_bad_snapshot_is_refused_before_anything_is_written(
    tmp_path: Path, given: object, message: str
) -> None:
    kernel_file(tmp_path, SOFTMAX_V1)
    root = tmp_path / "experiments"
    with pytest.raises(InputError, match=message):
        write(root, 1, 1.0, snapshot=given(tmp_path))  # type: ignore[operator]
    assert not root.exists()


def test_a_snapshot_name_the_folder_holds_is_refused_without_overwrite(tmp_path: Path) -> None:
    source = kernel_file(tmp_path, SOFTMAX_V1)
    root = tmp_path / "experiments"
    (root / "exp_1").mkdir(parents=True)
    (root / "exp_1" / "softmax.py").write_text("# by hand\n", encoding="utf-8")
    before = files_under(root)
    with pytest.raises(
        InputError,
        match=r"^snapshot: Expected no existing .*exp_1/softmax\.py \(pass overwrite=True to "
        r"replace it\), got an existing file$",
    ):
        write(root, 1, 1.0, snapshot=source)
    assert files_under(root) == before


# --- trial_matrix without points ----------------------------------------------------------


def test_axes_without_points_say_to_pass_extra_points() -> None:
    with pytest.raises(InputError) as refused:
        trial_matrix(axes={"rows": (16, 256), "cols": (1, 128)}, include_defaults=False)
    assert str(refused.value) == (
        "Expected at least one trial point (axes= crosses the points and makes none of its "
        "own: with include_defaults=False, pass extra_points=[TrialPoint(b=..., s=..., "
        "t=...), ...] as well), got none"
    )
    with pytest.raises(InputError, match=r"include_defaults=False, pass extra_points="):
        trial_matrix(include_defaults=False)

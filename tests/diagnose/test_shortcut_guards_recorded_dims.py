"""The overlooked-shortcut item on a softmax whose profile records the dim of every call
(``dim=-1`` in the shape rows' args): a kernel that tests the size along that dim under
the index the profile records, or its form counted from the other end, has the path; one
that tests another axis, or names the guard only in a comment or a string, does not. A
guard shared by two shortcuts is named once."""

from __future__ import annotations

import json
import shutil
from collections.abc import Sequence
from pathlib import Path

import pytest

from kernelopt import cli
from kernelopt.diagnose import Diagnosis, diagnose
from kernelopt.diagnose.model import Pathology

REPO = Path(__file__).resolve().parents[2]

SUMMARY = """# Experiments Summary

| Exp | Description | Latency | Unit | Correct | Status |
|---|---|---|---|---|---|
| 1 | torch baseline | 20.0 | us | PASS | BASELINE |
| 2 | triton softmax, one program per row | 15.0 | us | PASS | KEPT |
| 3 | BLOCK=256 | 14.8 | us | PASS | KEPT |
"""

# (shape of x, dim, calls, duration in us): 90 calls over one element, 10 over 512.
RANK2 = (([64, 1], -1, 90, 3.0), ([64, 512], -1, 10, 9.0))
RANK3 = (([8, 64, 1], -1, 90, 3.0), ([8, 64, 512], -1, 10, 9.0))
RANK3_DIM2 = (([8, 64, 1], 2, 90, 3.0), ([8, 64, 512], 2, 10, 9.0))


def _kernel(test: str) -> str:
    """A softmax launcher whose first statement is ``test`` (a line of code or a comment)."""
    return (
        "import torch\n"
        "\n"
        "\n"
        "def softmax(x, dim=-1):\n"
        f"    {test}\n"
        "    if x.numel() == 0:\n"
        "        return torch.ones_like(x)\n"
        "    return torch.softmax(x, dim)\n"
    )


def _log(root: Path, calls: Sequence[tuple[list[int], int, int, float]], kernel: str) -> Path:
    """A log of three softmax experiments, the kernel CLAUDE.md names, and the profile the
    inspector wrote from ``calls``."""
    (root / "experiments").mkdir(parents=True)
    (root / "kernels").mkdir()
    (root / "experiments" / "summary.md").write_text(SUMMARY, encoding="utf-8")
    (root / "CLAUDE.md").write_text("# Rules\n\nKernel: kernels/softmax.py\n", encoding="utf-8")
    (root / "kernels" / "softmax.py").write_text(kernel, encoding="utf-8")
    lines = []
    for shape, dim, count, duration in calls:
        record = {
            "op": "softmax",
            "args": {"x": {"shape": shape, "dtype": "float16"}, "dim": dim},
            "duration_us": duration,
        }
        lines += [json.dumps(record)] * count
    trace = root / "experiments" / "softmax_calls.jsonl"
    trace.write_text("\n".join(lines) + "\n", encoding="utf-8")
    profile = root / "experiments" / "workload_profile.md"
    assert cli.main(["inspect", str(trace), "--write", str(profile)]) == 1
    return root


def _sentence(diagnosis: Diagnosis) -> str:
    item = next(c for c in diagnosis.checks if c.pathology is Pathology.OVERLOOKED_SHORTCUT)
    return item.sentence


def _overlooked(root: Path) -> bool:
    """Whether the item says the size-1 shortcut is overlooked (a profile whose shapes no
    size tells apart has a dominant shape with no guard, overlooked whatever the kernel)."""
    finding = diagnose(root).finding(Pathology.OVERLOOKED_SHORTCUT)
    return finding is not None and "size-1-axis-shortcut" in [a.catalog_id for a in finding.actions]


@pytest.mark.parametrize(
    ("calls", "test"),
    [
        (RANK2, "if x.shape[-1] == 1:"),
        (RANK2, "if x.shape[1] == 1:"),
        (RANK2, "if 1 == x.shape[-1]:"),
        (RANK2, "if x.shape[1] > 1: return torch.softmax(x, dim)"),
        (RANK3, "if x.shape[-1] == 1:"),
        (RANK3, "if x.shape[2] == 1:"),
        (RANK3_DIM2, "if x.shape[2] == 1:"),
        (RANK3_DIM2, "if x.shape[-1] == 1:"),
    ],
)
def test_a_guard_on_the_recorded_dim_is_a_path(
    tmp_path: Path, calls: Sequence[tuple[list[int], int, int, float]], test: str
) -> None:
    line = test if "return" in test else test + " return torch.ones_like(x)"
    root = _log(tmp_path / "log", calls, _kernel(line))
    diagnosis = diagnose(root)
    assert diagnosis.finding(Pathology.OVERLOOKED_SHORTCUT) is None
    assert "(kernels/softmax.py:5)" in _sentence(diagnosis)


@pytest.mark.parametrize(
    ("calls", "test"),
    [
        (RANK2, "if x.shape[0] == 1:"),
        (RANK2, "if x.shape[-2] == 1:"),
        (RANK3, "if x.shape[1] == 1:"),
        (RANK3, "if x.shape[-3] == 1:"),
        (RANK3_DIM2, "if x.shape[-2] == 1:"),
    ],
)
def test_a_guard_on_another_axis_is_no_path(
    tmp_path: Path, calls: Sequence[tuple[list[int], int, int, float]], test: str
) -> None:
    root = _log(tmp_path / "log", calls, _kernel(test + " return torch.ones_like(x)"))
    assert _overlooked(root)


def test_rows_that_reduce_different_axes_give_no_index_of_their_own(tmp_path: Path) -> None:
    # One call in ten reduces the first axis: x.shape[-1] == 1 does not single out the
    # size-1 reductions of every call, so only the guard as written counts.
    calls = (([64, 1], -1, 90, 3.0), ([1, 64], 0, 10, 9.0))
    for name, test, overlooked in (
        ("last", "if x.shape[-1] == 1:", True),
        ("first", "if x.shape[0] == 1:", True),
        ("written", "if x.shape[dim] == 1:", False),
    ):
        root = _log(tmp_path / name, calls, _kernel(test + " return torch.ones_like(x)"))
        assert _overlooked(root) is overlooked, test


def test_one_axis_spelled_both_ways_across_rows_counts(tmp_path: Path) -> None:
    # dim=-1 and dim=1 of a rank-2 x read the same axis: both spellings hold for both.
    calls = (([64, 1], -1, 90, 3.0), ([64, 512], 1, 10, 9.0))
    for name, test in (("negative", "if x.shape[-1] == 1:"), ("positive", "if x.shape[1] == 1:")):
        root = _log(tmp_path / name, calls, _kernel(test + " return torch.ones_like(x)"))
        assert not _overlooked(root), test


def test_rows_of_different_ranks_share_only_the_negative_index(tmp_path: Path) -> None:
    calls = (([64, 1], -1, 60, 3.0), ([8, 64, 1], -1, 30, 3.0), ([64, 512], -1, 10, 9.0))
    for name, test, overlooked in (
        ("negative", "if x.shape[-1] == 1:", False),
        ("rank2", "if x.shape[1] == 1:", True),
        ("rank3", "if x.shape[2] == 1:", True),
    ):
        root = _log(tmp_path / name, calls, _kernel(test + " return torch.ones_like(x)"))
        assert _overlooked(root) is overlooked, test


@pytest.mark.parametrize(
    "test",
    [
        "# if x.shape[-1] == 1: return torch.ones_like(x)",
        "# if x.shape[dim] == 1: return torch.ones_like(x)",
        '"""Size-1 rows (x.shape[-1] == 1) are not special-cased."""',
        '"""x.shape[dim] == 1 could return ones."""',
        'assert x.dim() > 0, "x.shape[-1] == 1 rows take the general path"',
        "assert x.dim() > 0, f'x.shape[dim] == 1 for {x.shape}'",
    ],
)
def test_a_guard_in_a_comment_or_a_string_is_no_path(tmp_path: Path, test: str) -> None:
    root = _log(tmp_path / "log", RANK2, _kernel(test))
    assert _overlooked(root)


def test_a_guard_in_inline_cuda_source_is_code(tmp_path: Path) -> None:
    # A triple-quoted string passed on, not a docstring, is source the kernel compiles.
    test = 'CUDA = load_inline(cuda_sources="""if (n == 1) { out[row] = 1.0f; return; }""")'
    root = _log(tmp_path / "log", RANK2, _kernel(test))
    assert not _overlooked(root)


def test_a_guard_shared_by_two_shortcuts_is_named_once(tmp_path: Path) -> None:
    root = _log(tmp_path / "log", RANK2, _kernel("if x.shape[dim] == 1: return x * 0 + 1"))
    sentence = _sentence(diagnose(root))
    assert sentence == (
        "The kernel already has a path for each of the 2 shortcuts covering 50% of calls or "
        "of time: x.shape[dim] == 1 in `if x.shape[dim] == 1: return x * 0 + 1` "
        "(kernels/softmax.py:5)."
    )


@pytest.mark.parametrize(
    ("test", "overlooked"),
    [
        ("if q.shape[-3] == 1:", False),
        ("if q.shape[-2] == 1:", True),
        ("if q.shape[0] == 1:", True),
    ],
)
def test_an_index_written_out_counts_from_the_other_end_too(
    tmp_path: Path, test: str, overlooked: bool
) -> None:
    # The decode profile's guard is q.shape[1] == 1, and every row records a rank-4 q.
    root = tmp_path / "log"
    (root / "experiments").mkdir(parents=True)
    (root / "kernels").mkdir()
    shutil.copy(
        REPO / "examples/logs/mla-decode-plateau/experiments/workload_profile.md",
        root / "experiments" / "workload_profile.md",
    )
    (root / "experiments" / "summary.md").write_text(SUMMARY, encoding="utf-8")
    (root / "CLAUDE.md").write_text("# Rules\n\nKernel: kernels/decode.py\n", encoding="utf-8")
    kernel = (
        f"def decode(q, kv):\n    {test}\n        return one_token(q, kv)\n    return many(q, kv)\n"
    )
    (root / "kernels" / "decode.py").write_text(kernel, encoding="utf-8")
    finding = diagnose(root).finding(Pathology.OVERLOOKED_SHORTCUT)
    assert (finding is not None) is overlooked, test

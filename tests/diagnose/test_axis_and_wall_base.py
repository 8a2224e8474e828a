"""What the stall and the wall start from: the kept kernel before them.

A repetition loop's axis is not a word that names the version the attempts start from, a
correctness wall's failures are diffed against the last kept experiment that passed, and a
masked load's -inf padding is no fully-masked-row suspect.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kernelopt.bench import Measurement, to_result_row, write_experiment
from kernelopt.catalog import Catalog
from kernelopt.diagnose import Pathology, diagnose, diagnose_log
from kernelopt.diagnose.model import Finding
from kernelopt.experiments import Correctness, KernelSource, Status

from .conftest import exp, kernel, log_of

# (title, median us, status, tags, knobs): a naive kernel, the fused version kept, then
# three attempts that only change num_warps of the fused version.
_FUSED_THEN_WARPS = [
    ("naive 3-pass Triton softmax", 89774.3, "BASELINE", (), {"BLOCK": 64}),
    ("fused single-block softmax", 22394.0, "KEPT", ("kernel-fusion",), {"num_warps": 4}),
    ("fused softmax, num_warps=8", 22390.3, "REVERTED", (), {"num_warps": 8}),
    ("fused softmax, num_warps=2", 21993.9, "REVERTED", (), {"num_warps": 2}),
    ("fused softmax, num_warps=16", 22037.4, "REVERTED", (), {"num_warps": 16}),
]


def _bench_log(root: Path, experiments: list[tuple[str, float, str, tuple, dict]]) -> Path:
    """A softmax log written by kernelopt.bench, as a user's script writes it, with the
    kernel it names (whose name, 'softmax', titles say whatever they try)."""
    (root / "kernels").mkdir(parents=True)
    (root / "kernels" / "softmax.py").write_text(ROW_SOFTMAX, encoding="utf-8")
    (root / "CLAUDE.md").write_text(
        "# Row softmax project\n\nKernel: kernels/softmax.py\nFamily: softmax\n",
        encoding="utf-8",
    )
    for number, (title, median, status, tags, knobs) in enumerate(experiments, start=1):
        measured = Measurement(samples=[median] * 5, gpu="NVIDIA H200", backend="cuda-events")
        write_experiment(
            root / "experiments",
            experiment=number,
            title=title,
            rows=[to_result_row(measured, point="rows=16 cols=128", impl=f"v{number}")],
            status=status,
            correctness="PASS",
            # () in the tables is a user who gave no tags: the readers find them.
            tags=tags or None,
            knobs=knobs,
            date="2026-12-07",
        )
    return root


def _loop(root: Path) -> Finding:
    found = diagnose(root, family="softmax").finding(Pathology.REPETITION_LOOP)
    assert found is not None
    return found


def test_a_word_naming_the_kept_version_is_no_axis_when_a_knob_changes(tmp_path: Path) -> None:
    loop = _loop(_bench_log(tmp_path / "log", _FUSED_THEN_WARPS))
    assert loop.experiments == (3, 4, 5)
    # 'fused' names the version exp 2 kept: the attempts vary num_warps, not kernel fusion.
    assert "(exps 3, 4, 5) vary the knob num_warps and none moved the best" in loop.summary
    assert "Kernel Fusion" not in loop.summary and "'fused'" not in loop.summary
    assert loop.actions[0].catalog_id == "pruned-autotuning"
    assert loop.actions[0].text.startswith("Stop changing num_warps one value at a time")


def test_a_technique_named_in_new_words_after_the_kept_version_is_still_an_axis(
    tmp_path: Path,
) -> None:
    pipelined = [
        *_FUSED_THEN_WARPS[:2],
        ("fused softmax with software pipelining", 22390.3, "REVERTED", (), {}),
        ("fused softmax, pipelined row loads", 21993.9, "REVERTED", (), {}),
        ("fused softmax, prefetch the next row", 22037.4, "REVERTED", (), {}),
    ]
    loop = _loop(_bench_log(tmp_path / "log", pipelined))
    assert loop.experiments == (3, 4, 5)
    assert "vary Software Pipelining of Loads and Compute (software-pipelining) and" in (
        loop.summary
    )
    assert "Kernel Fusion" not in loop.summary


def test_the_kept_versions_words_stand_when_the_attempts_share_nothing_else(
    tmp_path: Path,
) -> None:
    # Three reworkings of the bound a kept max_s_q shortcut introduced share only its
    # words: they are still one idea tried again.
    bound = [
        _FUSED_THEN_WARPS[0],
        ("single-seq max_s_q shortcut", 22394.0, "KEPT", (), {}),
        ("max_s_q upper-bound shortcut", 22390.3, "REVERTED", (), {}),
        ("minimal inline max_s_q", 21993.9, "REVERTED", (), {}),
        ("raw copy for multi-seq max_s_q", 22037.4, "REVERTED", (), {}),
    ]
    loop = _loop(_bench_log(tmp_path / "log", bound))
    assert loop.experiments == (3, 4, 5)
    assert "(bucket-padding-waste) (also 'max_s_q') and none moved" in loop.summary


def test_failures_are_diffed_against_the_last_kept_experiment_that_passed(
    catalog: Catalog,
) -> None:
    experiments = [
        exp(1, 100.0, status=Status.BASELINE),
        exp(2, 25.0, description="fused single-block softmax"),
        *(exp(n, 25.0, status=Status.REVERTED, description=f"num_warps={n}") for n in (3, 4, 5)),
        *(exp(n, None, status=Status.FAILED, correctness=Correctness.FAIL) for n in (6, 7, 8)),
    ]
    wall = diagnose_log(log_of(experiments), catalog=catalog).finding(Pathology.CORRECTNESS_WALL)
    assert wall is not None and wall.experiments == (6, 7, 8)
    diff = wall.actions[0].text
    assert diff.startswith(
        "Diff each failing change against exp 2, the last kept experiment that passed "
        "(exps 3, 4, 5 passed but were not kept): "
    )
    assert "exp 5, the last" not in diff


def _wall(catalog: Catalog, source: KernelSource) -> Finding:
    failing = [
        exp(1, 10.0, status=Status.BASELINE),
        *(exp(n, None, status=Status.FAILED, correctness=Correctness.FAIL) for n in (2, 3, 4)),
    ]
    wall = diagnose_log(log_of(failing, kernels=(source,)), catalog=catalog).finding(
        Pathology.CORRECTNESS_WALL
    )
    assert wall is not None
    return wall


ROW_SOFTMAX = """
@triton.jit
def _softmax_fused(x_ptr, y_ptr, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < n_cols
    x = tl.load(x_ptr + row * stride + offs, mask=mask, other=-float("inf")).to(tl.float32)
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(y_ptr + row * stride + offs, e / tl.sum(e, axis=0), mask=mask)


@triton.jit
def _softmax_naive(x_ptr, y_ptr, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    m = -float("inf")
    top = tl.full([BLOCK], float("-inf"), tl.float32)
    for start in range(0, n_cols, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * stride + offs, mask=offs < n_cols, other=float("-inf"))
        m = tl.maximum(m, tl.max(x, axis=0))
"""


def test_a_masked_loads_inf_padding_is_no_masking_suspect(catalog: Catalog) -> None:
    wall = _wall(catalog, kernel(ROW_SOFTMAX))
    assert "softmax masking" not in wall.summary and "No numeric suspect" in wall.summary
    assert "unguarded-fully-masked-rows" not in [a.catalog_id for a in wall.actions]


@pytest.mark.parametrize(
    "written",
    [
        "    s = tl.where(offs[None, :] < n_keys, s, float('-inf'))",
        "    s = tl.where(keep, s, tl.full(s.shape, float('-inf'), tl.float32))",
        "    s = s.masked_fill(~visible, -math.inf)",
    ],
    ids=["where", "where-full", "masked-fill"],
)
def test_inf_a_mask_writes_into_scores_stays_the_suspect(catalog: Catalog, written: str) -> None:
    # The padding and the running max come first in the file: the suspect is the line
    # where the mask writes -inf, attention-style, whatever precedes it.
    text = ROW_SOFTMAX + "    s = tl.dot(q, k)\n" + written + "\n"
    wall = _wall(catalog, kernel(text))
    where = len(text.rstrip("\n").split("\n"))
    assert f"softmax masking (kernels/k.py:{where})" in wall.summary
    masking = next(a for a in wall.actions if a.catalog_id == "unguarded-fully-masked-rows")
    assert masking.text.startswith(f"softmax masking (kernels/k.py:{where}): rows masked")
    quoted = next(e for e in wall.evidence if e.source == f"kernels/k.py:{where}")
    assert quoted.quote == written.strip()


def test_a_cuda_running_max_declared_at_inf_is_no_suspect_but_a_masked_write_is(
    catalog: Catalog,
) -> None:
    declared = "__global__ void k(float* s, int n) {\n    float m = -INFINITY;\n}\n"
    cuda = KernelSource(path="kernels/k.cu", text=declared, language="cuda", role="kernel")
    assert "softmax masking" not in _wall(catalog, cuda).summary
    masked = declared.replace("}\n", "    s[i] = (i < n) ? s[i] : -INFINITY;\n}\n")
    cuda = KernelSource(path="kernels/k.cu", text=masked, language="cuda", role="kernel")
    assert "softmax masking (kernels/k.cu:3)" in _wall(catalog, cuda).summary

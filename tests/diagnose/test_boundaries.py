"""The nine checklist items at their thresholds, on small logs written to disk.

Each log shows one pathology: just over its threshold only that item fires, citing the
experiments that show it; just under it nothing fires. The other items stay quiet because
each log gives them nothing to go on (a profile naming a latency bound, no kernel family,
no snapshots, no plans, no workload profile) unless the pathology needs it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import attrs
import pytest

from kernelopt.catalog import Catalog
from kernelopt.catalog.catalog import BUILTIN_ROOT
from kernelopt.diagnose import (
    DiagnoseParams,
    Diagnosis,
    OverlookedShortcutParams,
    Pathology,
    diagnose,
    diagnose_log,
    render_plan,
)
from kernelopt.experiments.records import Status

from .conftest import UNRELATED_TITLES, exp, log_of

P = Pathology
EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "logs"

# A profile that names a latency bound: the wrong-bottleneck item has profiling data and
# judges only tuning inside the kernel (tile sizes, warps) against it; a log of such
# tuning is given the memory-bound profile instead.
LATENCY_BOUND = """## Profile: op v2 | b=32, s=1, t=4096
### Bottleneck: Latency-bound
Root cause: launch gaps between the two kernels dominate the call.
"""
MEMORY_BOUND = """## Profile: op v2 | b=32, s=1, t=4096
### Bottleneck: Memory-bound
Root cause: the kernel streams its inputs once at 80% of the copy bandwidth.
"""
# The baseline and a first kept version; the attempts under test follow as exp 3, 4, ...
START = [
    (1, "eager baseline", 100.0, "PASS", "BASELINE"),
    (2, "first fused version", 60.0, "PASS", "KEPT"),
]

Row = tuple[int, str, float, str, str]


def _log(
    root: Path,
    rows: Sequence[Row],
    *,
    profile: str | None = LATENCY_BOUND,
    files: Mapping[str, str] | None = None,
) -> Path:
    """A seed-layout log: summary.md of ``rows`` (number, title, latency in us,
    correctness, status), profile.md, and ``files`` by path under ``root``."""
    (root / "experiments").mkdir(parents=True)
    lines = [
        "# Experiments Summary",
        "",
        "| Exp | Description | Latency | Unit | Correct | Status |",
        "|---|---|---|---|---|---|",
        *(
            f"| {n} | {title} | {lat} | us | {ok} | {status} |"
            for n, title, lat, ok, status in rows
        ),
    ]
    (root / "experiments" / "summary.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    if profile is not None:
        (root / "experiments" / "profile.md").write_text(profile, encoding="utf-8")
    for path, text in (files or {}).items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    return root


def _fired(diagnosis: Diagnosis) -> set[Pathology]:
    return {f.pathology for f in diagnosis.findings}


def _attempts(titles: Sequence[str], latencies: Sequence[float], *, ok: str = "PASS") -> list[Row]:
    return [
        (3 + i, title, latency, ok, "KEPT")
        for i, (title, latency) in enumerate(zip(titles, latencies, strict=True))
    ]


def test_a_log_with_nothing_to_find_fires_nothing(tmp_path: Path) -> None:
    # The ground every other log here stands on.
    root = _log(tmp_path / "log", [*START, *_attempts(UNRELATED_TITLES[:2], [59.5, 59.0])])
    assert diagnose(root).findings == ()


def test_repetition_loop_at_three_variants_of_one_knob(tmp_path: Path) -> None:
    titles = ["BLOCK_N=32", "BLOCK_N=64", "BLOCK_N=128"]
    rows = [*START, *_attempts(titles, [59.8, 59.6, 59.9])]
    over = diagnose(_log(tmp_path / "over", rows, profile=MEMORY_BOUND))
    assert _fired(over) == {P.REPETITION_LOOP}
    loop = over.finding(P.REPETITION_LOOP)
    assert loop is not None and loop.experiments == (3, 4, 5) and "BLOCK_N" in loop.summary
    under_titles = ["BLOCK_N=32", "BLOCK_N=64", UNRELATED_TITLES[0]]
    under_rows = [*START, *_attempts(under_titles, [59.8, 59.6, 59.9])]
    under = _log(tmp_path / "under", under_rows, profile=MEMORY_BOUND)
    assert diagnose(under).findings == ()


def test_local_minimum_at_five_attempts(tmp_path: Path) -> None:
    five = [59.5, 59.0, 58.5, 58.0, 57.5]  # each under 1 %, 4.2 % together
    over = diagnose(_log(tmp_path / "over", [*START, *_attempts(UNRELATED_TITLES[:5], five)]))
    assert _fired(over) == {P.LOCAL_MINIMUM}
    found = over.finding(P.LOCAL_MINIMUM)
    assert found is not None and found.experiments == (3, 4, 5, 6, 7)
    under = _log(tmp_path / "under", [*START, *_attempts(UNRELATED_TITLES[:4], five[:4])])
    assert diagnose(under).findings == ()


def test_local_minimum_counts_only_gains_under_five_percent(tmp_path: Path) -> None:
    # The first attempt gains 4.9 % (under the seed's 5 %): five attempts on one design.
    rest = [57.5, 58.0, 57.3, 57.2]
    over = _log(tmp_path / "over", [*START, *_attempts(UNRELATED_TITLES[:5], [57.06, *rest])])
    found = diagnose(over).finding(P.LOCAL_MINIMUM)
    assert found is not None and found.experiments == (3, 4, 5, 6, 7)
    assert _fired(diagnose(over)) == {P.LOCAL_MINIMUM}
    # Exactly 5 % is not "under 5 %": that attempt moved the best, four followed.
    under = _log(tmp_path / "under", [*START, *_attempts(UNRELATED_TITLES[:5], [57.0, *rest])])
    assert diagnose(under).findings == ()


def test_correctness_wall_at_three_failures_in_a_row(tmp_path: Path) -> None:
    passed = _attempts(UNRELATED_TITLES[:1], [59.5])
    failing = [(4 + i, UNRELATED_TITLES[1 + i], 58.0, "FAIL", "REVERTED") for i in range(3)]
    over = diagnose(_log(tmp_path / "over", [*START, *passed, *failing]))
    assert _fired(over) == {P.CORRECTNESS_WALL}
    wall = over.finding(P.CORRECTNESS_WALL)
    assert wall is not None and wall.experiments == (4, 5, 6)
    # Without kernel text the seed's four suspects are the advice, the ladder included.
    ids = {a.catalog_id for a in wall.actions}
    assert {"dot-input-precision", "lse-base-mismatch", "unguarded-fully-masked-rows"} <= ids
    assert "bf16-accumulation" in ids and "tf32x3" in " ".join(a.text for a in wall.actions)
    under = diagnose(_log(tmp_path / "under", [*START, *passed, *failing[:2]]))
    # Two in a row are no wall: the item stays unchecked, and its low finding only puts
    # fixing them first in the plan.
    assert not any(c.checked for c in under.checks)
    assert [(f.pathology, f.severity.value) for f in under.findings] == [
        (P.CORRECTNESS_WALL, "low")
    ]


def test_wrong_bottleneck_at_half_the_judged_attempts(tmp_path: Path) -> None:
    compute = ["unroll the inner loop", "tensor cores for the scores"]
    # Exp 5 sets a new best by 10 % (not judged) and ends any stall, so neither the
    # plateau items nor a loop can fire on what follows.
    over_rows = [
        (3, compute[0], 59.9, "PASS", "KEPT"),
        (4, UNRELATED_TITLES[0], 59.8, "PASS", "KEPT"),
        (5, UNRELATED_TITLES[1], 53.8, "PASS", "KEPT"),
        (6, compute[1], 53.7, "PASS", "KEPT"),
        (7, UNRELATED_TITLES[2], 53.6, "PASS", "KEPT"),
    ]
    over = diagnose(_log(tmp_path / "over", [*START, *over_rows], profile=MEMORY_BOUND))
    assert _fired(over) == {P.WRONG_BOTTLENECK}
    wrong = over.finding(P.WRONG_BOTTLENECK)
    assert wrong is not None and wrong.experiments == (3, 6)
    assert "2 of the 4 recent attempts judged" in wrong.summary
    # One more attempt judged: two of five is a side trip, not the effort's direction.
    under_rows = [*over_rows[:2], (8, UNRELATED_TITLES[3], 59.7, "PASS", "KEPT"), *over_rows[2:]]
    under_rows = [(3 + i, *row[1:]) for i, row in enumerate(under_rows)]
    under = diagnose(_log(tmp_path / "under", [*START, *under_rows], profile=MEMORY_BOUND))
    assert under.findings == ()


def test_no_profiling_data_asks_for_cuda_events_first(tmp_path: Path) -> None:
    rows = [*START, *_attempts(UNRELATED_TITLES[:2], [59.5, 59.0])]
    blind = diagnose(_log(tmp_path / "blind", rows, profile=None))
    assert _fired(blind) == {P.WRONG_BOTTLENECK}
    found = blind.finding(P.WRONG_BOTTLENECK)
    assert found is not None and found.actions[0].catalog_id == "cuda-event-instrumentation"
    assert found.experiments == (2, 3, 4)
    assert diagnose(_log(tmp_path / "profiled", rows)).findings == ()


# A softmax kernel in two passes over the tiles of a row (max, then sum): no running max
# and sum. A row read whole in one tile would need neither (test_one_tile_softmax.py).
TWO_PASS = """import triton
import triton.language as tl


@triton.jit
def row_kernel(X, Y, n, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    m = -1e30
    for start in range(0, n, BLOCK):
        x = tl.load(X + row * n + start + offs, mask=start + offs < n, other=-1e30)
        m = tl.maximum(m, tl.max(x, axis=0))
    s = 0.0
    for start in range(0, n, BLOCK):
        x = tl.load(X + row * n + start + offs, mask=start + offs < n, other=-1e30)
        s += tl.sum(tl.exp(x - m), axis=0)
    for start in range(0, n, BLOCK):
        x = tl.load(X + row * n + start + offs, mask=start + offs < n, other=-1e30)
        tl.store(Y + row * n + start + offs, tl.exp(x - m) / s, mask=start + offs < n)


def launch(x, y):
    row_kernel[(x.shape[0],)](x, y, x.shape[1], BLOCK=1024)
    return y
"""
# The same kernel with an online softmax: one pass keeps the running max and sum.
ONLINE = """import triton
import triton.language as tl


@triton.jit
def row_kernel(X, Y, n, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    m_i = -1e30
    l_i = 0.0
    for start in range(0, n, BLOCK):
        x = tl.load(X + row * n + start + offs, mask=start + offs < n, other=-1e30)
        m_new = tl.maximum(m_i, tl.max(x, axis=0))
        l_i = l_i * tl.exp(m_i - m_new) + tl.sum(tl.exp(x - m_new), axis=0)
        m_i = m_new
    m = m_i
    s = l_i
    for start in range(0, n, BLOCK):
        x = tl.load(X + row * n + start + offs, mask=start + offs < n, other=-1e30)
        tl.store(Y + row * n + start + offs, tl.exp(x - m) / s, mask=start + offs < n)


def launch(x, y):
    row_kernel[(x.shape[0],)](x, y, x.shape[1], BLOCK=1024)
    return y
"""


def test_missing_fundamental_for_the_family(tmp_path: Path) -> None:
    claude = "# Softmax kernel (Triton)\n\nKernel: kernels/softmax.py\n"
    rows = [*START, *_attempts(UNRELATED_TITLES[:2], [59.5, 59.0])]
    files = {"CLAUDE.md": claude, "kernels/softmax.py": TWO_PASS}
    over = diagnose(_log(tmp_path / "over", rows, files=files))
    assert over.summary.family == "softmax"
    assert _fired(over) == {P.MISSING_FUNDAMENTAL}
    found = over.finding(P.MISSING_FUNDAMENTAL)
    assert found is not None and [a.catalog_id for a in found.actions] == ["online-softmax"]
    with_it = {**files, "kernels/softmax.py": ONLINE}
    assert diagnose(_log(tmp_path / "under", rows, files=with_it)).findings == ()


def _snapshot(lines: int, configs: int = 1) -> str:
    """A kernel file of ``lines`` code lines (plus a fixed header and footer) whose
    autotune space holds ``configs`` configurations."""
    body = "\n".join(f"x{i} = {i}" for i in range(lines))
    space = f"[triton.Config({{}}) for a in range({configs})]"
    return (
        f"import triton\nimport triton.language as tl\n{body}\n"
        f"@triton.autotune(configs={space}, key=[])\n"
        "@triton.jit\ndef k(A: tl.constexpr):\n    pass\n"
    )


# Code lines around the body of _snapshot: two imports, two decorators, def and pass.
_FRAME = 6


def test_over_engineering_at_half_again_the_code(tmp_path: Path) -> None:
    rows = [*START, *_attempts(UNRELATED_TITLES[:3], [59.8, 59.6, 59.5])]
    start = 100 - _FRAME  # 100 code lines before the stall
    for name, grown, fires in (("over", 150, True), ("under", 149, False)):
        files = {
            "experiments/exp_2/k.py": _snapshot(start),
            "experiments/exp_5/k.py": _snapshot(grown - _FRAME),
        }
        diagnosis = diagnose(_log(tmp_path / name, rows, files=files))
        assert _fired(diagnosis) == ({P.OVER_ENGINEERING} if fires else set()), name
        if fires:
            found = diagnosis.finding(P.OVER_ENGINEERING)
            assert found is not None and "code lines 100 → 150 (+50%)" in found.summary
            assert found.experiments == (2, 3, 4, 5)


def test_a_script_beside_the_kernel_growing_is_not_over_engineering(tmp_path: Path) -> None:
    # The check-and-time script beside the kernel grew fourfold; the kernel did not.
    rows = [*START, *_attempts(UNRELATED_TITLES[:3], [59.8, 59.6, 59.5])]
    script = "import torch\n" + "\n".join(f"y{i} = torch.zeros({i})" for i in range(100))
    grown = "import torch\n" + "\n".join(f"y{i} = torch.zeros({i})" for i in range(400))
    files = {
        "experiments/exp_2/k.py": _snapshot(100 - _FRAME),
        "experiments/exp_2/check.py": script,
        "experiments/exp_5/k.py": _snapshot(100 - _FRAME),
        "experiments/exp_5/check.py": grown,
    }
    assert P.OVER_ENGINEERING not in _fired(diagnose(_log(tmp_path / "log", rows, files=files)))


def test_over_engineering_at_a_thousand_autotune_configurations(tmp_path: Path) -> None:
    rows = [*START, *_attempts(UNRELATED_TITLES[:2], [59.8, 59.6])]
    for name, configs, fires in (("over", 1000, True), ("under", 999, False)):
        files = {
            "experiments/exp_2/k.py": _snapshot(20, configs),
            "experiments/exp_4/k.py": _snapshot(20, configs),
        }
        diagnosis = diagnose(_log(tmp_path / name, rows, files=files))
        assert _fired(diagnosis) == ({P.OVER_ENGINEERING} if fires else set()), name
        if fires:
            found = diagnosis.finding(P.OVER_ENGINEERING)
            assert found is not None and "exp 4 searches 1,000 autotune" in found.summary
            assert [a.catalog_id for a in found.actions] == [
                "pruned-autotuning",
                "autotune-explosion",
            ]


def test_an_autotune_space_that_bought_a_gain_is_not_over_engineering(tmp_path: Path) -> None:
    # The seed's bad example searched 10 000 configurations for no significant gain; this
    # one bought 25 % (60 -> 45 us), so it is no finding.
    rows = [*START, (3, "wide autotune sweep", 45.0, "PASS", "KEPT")]
    files = {
        "experiments/exp_2/k.py": _snapshot(20),
        "experiments/exp_3/k.py": _snapshot(20, 10_000),
    }
    assert diagnose(_log(tmp_path / "gained", rows, files=files)).findings == ()
    # The same search with nothing to show for it is the seed's example.
    flat = [*START, (3, "wide autotune sweep", 59.9, "PASS", "KEPT")]
    found = diagnose(_log(tmp_path / "flat", flat, files=files)).finding(P.OVER_ENGINEERING)
    assert found is not None and "10,000 autotune configurations" in found.summary


PLAN = """# Plan: exp 2

Fuse the scale into the load.

## Next steps

- Try a two-stage tree reduction of the row maxima
"""


def test_ignored_prior_research_after_three_attempts(tmp_path: Path) -> None:
    files = {"experiments/exp_2/plan.md": PLAN}
    three = [*START, *_attempts(UNRELATED_TITLES[:3], [59.5, 59.0, 58.5])]
    over = diagnose(_log(tmp_path / "over", three, files=files))
    assert _fired(over) == {P.IGNORED_PRIOR_RESEARCH}
    found = over.finding(P.IGNORED_PRIOR_RESEARCH)
    assert found is not None and found.experiments == (3, 4, 5)
    assert found.evidence[0].source == "experiments/exp_2/plan.md:7"
    assert diagnose(_log(tmp_path / "under", three[:-1], files=files)).findings == ()
    # Acted on by the third attempt: not ignored.
    acted = [*three[:-1], (5, "two-stage tree reduction of the row maxima", 58.5, "PASS", "KEPT")]
    assert diagnose(_log(tmp_path / "acted", acted, files=files)).findings == ()


LAUNCHER = """import torch
import triton


def launch(x):
    y = torch.empty_like(x)
    op_kernel[(x.shape[0],)](x, y)
    return y
"""
KEPT_OUT = LAUNCHER.replace("def launch(x):", "def launch(x, out=None):").replace(
    "    y = torch.empty_like(x)\n",
    "    if out is None:\n        out = torch.empty_like(x)\n    y = out\n",
)


def test_buffer_persistence_at_one_allocation_per_call(tmp_path: Path) -> None:
    rows = [*START, *_attempts(UNRELATED_TITLES[:2], [59.5, 59.0])]
    claude = "# Rules\n\nKernel: kernels/op.py\n"
    over = diagnose(
        _log(tmp_path / "over", rows, files={"CLAUDE.md": claude, "kernels/op.py": LAUNCHER})
    )
    assert _fired(over) == {P.BUFFER_PERSISTENCE}
    found = over.finding(P.BUFFER_PERSISTENCE)
    assert found is not None and found.evidence[0].source == "kernels/op.py:6"
    assert [a.catalog_id for a in found.actions] == ["buffer-persistence", "cuda-graphs"]
    under = _log(tmp_path / "under", rows, files={"CLAUDE.md": claude, "kernels/op.py": KEPT_OUT})
    assert diagnose(under).findings == ()


def test_persisting_a_filled_buffer_keeps_its_fill(tmp_path: Path) -> None:
    # The seed persists buffers only while every call recalculates their contents: an
    # accumulator made by torch.zeros must be zeroed again each call once it is reused.
    rows = [*START, *_attempts(UNRELATED_TITLES[:2], [59.5, 59.0])]
    claude = "# Rules\n\nKernel: kernels/op.py\n"
    zeros = LAUNCHER.replace("torch.empty_like(x)", "torch.zeros_like(x)")
    found = diagnose(
        _log(tmp_path / "zeros", rows, files={"CLAUDE.md": claude, "kernels/op.py": zeros})
    ).finding(P.BUFFER_PERSISTENCE)
    assert found is not None
    advice = found.actions[0].text
    assert "as long as every call recalculates their contents" in advice
    assert "torch.zeros_like needs its fill every call" in advice
    empty = diagnose(
        _log(tmp_path / "empty", rows, files={"CLAUDE.md": claude, "kernels/op.py": LAUNCHER})
    ).finding(P.BUFFER_PERSISTENCE)
    assert empty is not None and "fill" not in empty.actions[0].text


def _workload(share: str) -> str:
    return f"""# Workload profile

## Op: rowscale

- Calls: 100

### Size-1 axes

- n = 1 in {share} of calls
"""


def test_overlooked_shortcut_at_half_the_calls(tmp_path: Path) -> None:
    rows = [*START, *_attempts(UNRELATED_TITLES[:2], [59.5, 59.0])]
    claude = "# Rules\n\nKernel: kernels/op.py\n"
    launcher = KEPT_OUT  # no per-call allocation
    for name, share, fires in (("over", "50%", True), ("under", "49%", False)):
        files = {
            "CLAUDE.md": claude,
            "kernels/op.py": launcher,
            "experiments/workload_profile.md": _workload(share),
        }
        diagnosis = diagnose(_log(tmp_path / name, rows, files=files))
        assert _fired(diagnosis) == ({P.OVERLOOKED_SHORTCUT} if fires else set()), name
    found = diagnose(tmp_path / "over").finding(P.OVERLOOKED_SHORTCUT)
    assert found is not None and "`n == 1`" in found.summary
    assert found.actions[0].catalog_id == "size-1-axis-shortcut"
    guarded = launcher.replace("    y = out\n", "    y = out\n    if n == 1:\n        return y\n")
    files = {
        "CLAUDE.md": claude,
        "kernels/op.py": guarded,
        "experiments/workload_profile.md": _workload("50%"),
    }
    assert diagnose(_log(tmp_path / "guarded", rows, files=files)).findings == ()


def test_a_lower_shortcut_share_reaches_rarer_shortcuts(tmp_path: Path) -> None:
    # min_call_share is the item's threshold: lowered to 30 %, a size-1 axis in 35 % of
    # the calls is a shortcut (the inspector's own rules stop at half by default).
    rows = [*START, *_attempts(UNRELATED_TITLES[:2], [59.5, 59.0])]
    files = {
        "CLAUDE.md": "# Rules\n\nKernel: kernels/op.py\n",
        "kernels/op.py": KEPT_OUT,
        "experiments/workload_profile.md": _workload("35%"),
    }
    root = _log(tmp_path / "log", rows, files=files)
    assert diagnose(root).findings == ()
    lower = DiagnoseParams(overlooked_shortcut=OverlookedShortcutParams(min_call_share=0.3))
    found = diagnose(root, params=lower).finding(P.OVERLOOKED_SHORTCUT)
    assert found is not None and "35% of calls" in found.summary
    higher = DiagnoseParams(overlooked_shortcut=OverlookedShortcutParams(min_call_share=0.4))
    assert diagnose(root, params=higher).findings == ()


def test_the_plan_header_states_the_stall_threshold_in_use(tmp_path: Path) -> None:
    from kernelopt.diagnose import LocalMinimumParams

    rows = [*START, *_attempts(UNRELATED_TITLES[:2], [59.5, 59.0])]
    root = _log(tmp_path / "log", rows)
    assert "since the best last moved by 5% or more" in render_plan(diagnose(root))
    params = DiagnoseParams(local_minimum=LocalMinimumParams(min_gain=0.03))
    diagnosis = diagnose(root, params=params)
    assert diagnosis.summary.stall_gain == 0.03
    assert "since the best last moved by 3% or more" in render_plan(diagnosis)
    assert diagnosis.to_dict()["summary"]["stall_gain"] == 0.03  # type: ignore[index]


@pytest.mark.parametrize("name", sorted(p.name for p in EXAMPLES.iterdir() if p.is_dir()))
def test_every_action_links_an_entry_that_exists(name: str, catalog: Catalog) -> None:
    diagnosis = diagnose(EXAMPLES / name)
    ids = {entry.id for entry in catalog}
    for finding in diagnosis.findings:
        for action in finding.actions:
            if action.catalog_id is None:
                continue
            assert action.catalog_id in ids, (finding.pathology, action.catalog_id)
            assert action.path is not None and (BUILTIN_ROOT / action.path).is_file()
            assert f"({action.path})" in render_plan(diagnosis)


def test_metrics_in_results_are_a_profile_for_the_plateau_item_too(catalog: Catalog) -> None:
    # Item 4 places this kernel from the metrics of its results (memory-bound); the
    # local-minimum item must not tell the same plan that no profile was found.
    metrics = {"dram_pct": 75.0, "tc_pct": 10.0}
    experiments = [
        exp(1, 100.0, status=Status.BASELINE),
        exp(2, 60.0),
        *(
            exp(3 + i, 59.9 - 0.1 * i, description=title, metrics=metrics)
            for i, title in enumerate(UNRELATED_TITLES[:5])
        ),
    ]
    diagnosis = diagnose_log(log_of(experiments), catalog=catalog)
    assert "memory-bound (dram_pct=75" in next(
        c.sentence for c in diagnosis.checks if c.pathology is P.WRONG_BOTTLENECK
    )
    plateau = diagnosis.finding(P.LOCAL_MINIMUM)
    assert plateau is not None
    assert [a.catalog_id for a in plateau.actions] == ["roofline-analysis"]
    # Without any profiling data the plateau's plan still starts with instrumenting.
    bare = [attrs.evolve(e, metrics={}) for e in experiments]
    blind = diagnose_log(log_of(bare), catalog=catalog).finding(P.LOCAL_MINIMUM)
    assert blind is not None
    assert [a.catalog_id for a in blind.actions] == [
        "roofline-analysis",
        "cuda-event-instrumentation",
    ]

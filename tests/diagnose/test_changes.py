"""Diff snapshots in diagnose: counted per file, replayed on their base, judged by the
over-engineering detector, and read from the MLA decode log."""

from __future__ import annotations

import difflib
from pathlib import Path

from kernelopt.catalog import Catalog
from kernelopt.diagnose import Pathology, diagnose, diagnose_log
from kernelopt.diagnose.changes import NEW_FILE
from kernelopt.diagnose.context import Context, build_context
from kernelopt.diagnose.detectors.over_engineering import total_complexity
from kernelopt.diagnose.source import complexity
from kernelopt.experiments import KernelSource, read_log
from kernelopt.experiments.diffs import blob_id

REPO = Path(__file__).resolve().parents[2]

BASE = """\
import triton
import triton.language as tl


@triton.jit
def kernel(X, Y, N, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < N
    x = tl.load(X + offs, mask=mask)
    tl.store(Y + offs, x * 2, mask=mask)


def launch(x, y):
    n = x.numel()
    kernel[(triton.cdiv(n, 1024),)](x, y, n, BLOCK=1024)
"""
# Exp 3: two compile-time switches and a branch.
V3 = BASE.replace(
    "BLOCK: tl.constexpr):", "BLOCK: tl.constexpr, USE_A: tl.constexpr, USE_B: tl.constexpr):"
).replace(
    "    tl.store(Y + offs, x * 2, mask=mask)\n",
    "    if USE_A:\n        x = x + 1\n    tl.store(Y + offs, x * 2, mask=mask)\n",
)
# Exp 4, on top of exp 3: two more knobs, a staged path and a select.
V4 = V3.replace(
    "USE_B: tl.constexpr):",
    "USE_B: tl.constexpr,\n           SCALE: tl.constexpr, STAGES: tl.constexpr):",
).replace(
    "    if USE_A:\n",
    "    if STAGES > 1:\n        x = tl.where(mask, x * SCALE, x)\n    if USE_A:\n",
)

SUMMARY = """\
| Exp | Date | Description | Latency | Unit | Correct | Status |
|---|---|---|---|---|---|---|
| 1 | 2026-01-01 | torch baseline | 100 | us | PASS | BASELINE |
| 2 | 2026-01-02 | triton kernel | 50 | us | PASS | KEPT |
| 3 | 2026-01-03 | use_a switch | 49.8 | us | PASS | {0} |
| 4 | 2026-01-04 | staged scale | 49.7 | us | PASS | {1} |
| 5 | 2026-01-05 | retile | 49.9 | us | PASS | REVERTED |
"""


def _diff(
    before: str,
    after: str,
    *,
    index: bool = False,
    path: str = "kernels/kernel.py",
    context: int = 3,
) -> str:
    """A unified diff of ``before`` to ``after`` as git writes it (``index`` line optional),
    with ``context`` lines of context."""
    head = f"diff --git a/{path} b/{path}\n"
    if index:
        head += f"index {blob_id(before)[:7]}..{blob_id(after)[:7]} 100644\n"
    body = difflib.unified_diff(
        before.splitlines(keepends=True),
        after.splitlines(keepends=True),
        fromfile=f"a/{path}",
        tofile=f"b/{path}",
        n=context,
    )
    return head + "".join(body)


def _log(root: Path, files: dict[str, str], statuses: tuple[str, str] = ("KEPT", "KEPT")) -> Path:
    files = {"experiments/summary.md": SUMMARY.format(*statuses), **files}
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def _context(root: Path) -> Context:
    return build_context(read_log(root, catalog=()), None, family=None)


def _py(text: str) -> KernelSource:
    return KernelSource(path="kernel.py", text=text, language="python")


def _chain(root: Path) -> Path:
    """Exp 2 snapshots the kernel whole; exps 3 and 4 (both kept) as diffs, each on the last."""
    return _log(
        root,
        {
            "experiments/exp_2/kernel.py": BASE,
            "experiments/exp_3/use_a.diff": _diff(BASE, V3),
            "experiments/exp_4/staged.diff": _diff(V3, V4),
        },
    )


def test_diffs_are_counted_and_replayed_on_their_base(tmp_path: Path) -> None:
    ctx = _context(_chain(tmp_path))
    assert list(ctx.snapshots) == [2]  # diffs are not full sources
    (third,) = ctx.changes[3]
    (fourth,) = ctx.changes[4]
    assert (third.path, third.line) == ("experiments/exp_3/use_a.diff", 1)
    assert (third.target, third.name) == ("kernels/kernel.py", "kernel.py")
    assert (third.added.constexprs, third.removed.constexprs) == (3, 1)  # the signature line
    assert (third.net_constexprs, third.net_branches, third.net_lines) == (2, 1, 2)
    # Exp 3 fits the full snapshot of exp 2; exp 4 fits exp 3's replayed result.
    assert third.base == "experiments/exp_2/kernel.py"
    assert (third.before, third.after) == (complexity(_py(BASE)), complexity(_py(V3)))
    assert fourth.base == "experiments/exp_3/use_a.diff"
    assert fourth.after == complexity(_py(V4))
    # Counted line by line, the diff's added minus removed is the whole-file change.
    for change in (third, fourth):
        assert change.before is not None and change.after is not None
        assert change.net_lines == change.after.lines - change.before.lines
        assert change.net_branches == change.after.branches - change.before.branches
        assert change.net_constexprs == change.after.constexprs - change.before.constexprs


def test_an_experiment_s_own_copy_is_counted_once(tmp_path: Path) -> None:
    diff = _diff(BASE, V3)
    for state, text in (("after", V3), ("before", BASE)):
        files = {
            "experiments/exp_2/kernel.py": BASE,
            "experiments/exp_3/kernel.py": text,
            "experiments/exp_3/use_a.diff": diff,
        }
        ctx = _context(_log(tmp_path / state, files))
        # A copy of the result is what the experiment ran; a copy of the base is replaced.
        assert total_complexity(ctx, 3) == complexity(_py(V3)), state


def test_replayed_diffs_show_growth_across_the_stall(tmp_path: Path, catalog: Catalog) -> None:
    log = read_log(_chain(tmp_path), catalog=())
    found = diagnose_log(log, catalog=catalog).finding(Pathology.OVER_ENGINEERING)
    assert found is not None
    assert "from exp 2 to exp 4" in found.summary and "constexpr knobs 1 → 5" in found.summary
    assert [e.source for e in found.evidence] == [
        "experiments/exp_2/kernel.py",
        "experiments/exp_4/staged.diff:1",
    ]


def test_kept_diffs_without_a_base_still_count(tmp_path: Path, catalog: Catalog) -> None:
    files = {
        "experiments/exp_3/use_a.diff": _diff(BASE, V3),
        "experiments/exp_4/staged.diff": _diff(V3, V4),
    }
    ctx = _context(_log(tmp_path / "kept", files))
    assert all(c.base is None and c.after is None for c in ctx.changes[3] + ctx.changes[4])
    log = read_log(tmp_path / "kept", catalog=())
    found = diagnose_log(log, catalog=catalog).finding(Pathology.OVER_ENGINEERING)
    assert found is not None
    assert "the changes kept in exps 3, 4 add +5 code lines, +4 constexpr knobs" in found.summary
    assert [e.source for e in found.evidence] == [
        "experiments/exp_3/use_a.diff:1",
        "experiments/exp_4/staged.diff:1",
    ]
    assert "+3/−1 constexpr knobs" in found.evidence[0].quote
    # Reverted changes are not the kernel any more: they grow nothing.
    log = read_log(_log(tmp_path / "reverted", files, ("REVERTED", "REVERTED")), catalog=())
    diagnosis = diagnose_log(log, catalog=catalog)
    assert diagnosis.finding(Pathology.OVER_ENGINEERING) is None
    sentence = next(c for c in diagnosis.checks if c.pathology is Pathology.OVER_ENGINEERING)
    assert (
        "latest diff (exp 4): kernel.py +4/−1 code lines, +2/−0 branches, +5/−3 constexpr knobs"
        in sentence.sentence
    )
    assert "exps 3, 4 were reverted, so their diffs are not the current kernel" in sentence.sentence


def test_kept_diffs_are_judged_against_their_own_file(tmp_path: Path, catalog: Catalog) -> None:
    # Exp 2 snapshots a small helper; exps 3 and 4 grow another file, whose base is not in
    # the log, by 10 plain lines each: no base to judge lines against, and no new knobs.
    helper = "def helper(x):\n    return x\n"
    grown = BASE + "".join(f"\nvalue_{i} = {i}" for i in range(10)) + "\n"
    more = grown + "".join(f"\nother_{i} = {i}" for i in range(10)) + "\n"
    files = {
        "experiments/exp_2/helper.py": helper,
        "experiments/exp_3/grow.diff": _diff(BASE, grown),
        "experiments/exp_4/more.diff": _diff(grown, more),
    }
    log = read_log(_log(tmp_path / "other", files), catalog=())
    assert diagnose_log(log, catalog=catalog).finding(Pathology.OVER_ENGINEERING) is None
    # With the same file snapshotted before the stall, the 20 lines are judged against it.
    files["experiments/exp_2/kernel.py"] = BASE
    log = read_log(_log(tmp_path / "same", files), catalog=())
    found = diagnose_log(log, catalog=catalog).finding(Pathology.OVER_ENGINEERING)
    assert found is not None and "code lines" in found.summary


def test_git_index_line_names_the_base(tmp_path: Path) -> None:
    # Exp 2's kernel still fits exp 3's hunks, but the diff was made against
    # exp 1's: the blob id in the index line says so.
    longer = BASE + "\n\ndef unused():\n    return 0\n"
    files = {
        "experiments/exp_1/kernel.py": BASE,
        "experiments/exp_2/kernel.py": longer,
        "experiments/exp_3/use_a.diff": _diff(BASE, V3, index=True),
    }
    (change,) = _context(_log(tmp_path / "named", files)).changes[3]
    assert change.base == "experiments/exp_1/kernel.py"
    (change,) = _context(
        _log(tmp_path / "plain", {**files, "experiments/exp_3/use_a.diff": _diff(BASE, V3)})
    ).changes[3]
    assert change.base == "experiments/exp_2/kernel.py"  # without it: the newest that fits
    # A base named by id and absent from the log is not guessed.
    absent = {
        "experiments/exp_2/kernel.py": longer,
        "experiments/exp_3/use_a.diff": files["experiments/exp_3/use_a.diff"],
    }
    (change,) = _context(_log(tmp_path / "absent", absent)).changes[3]
    assert change.base is None and change.after is None and change.net_constexprs == 2


def test_a_diff_that_creates_its_file_is_measured_whole(tmp_path: Path) -> None:
    lines = V3.splitlines(keepends=True)
    created = f"--- /dev/null\n+++ b/kernels/kernel.py\n@@ -0,0 +1,{len(lines)} @@\n"
    created += "".join("+" + line for line in lines)
    (change,) = _context(_log(tmp_path, {"experiments/exp_3/new.patch": created})).changes[3]
    assert change.base == NEW_FILE and change.after == complexity(_py(V3))


def test_a_malformed_diff_is_reported_not_read(tmp_path: Path) -> None:
    broken = _diff(BASE, V3).replace("@@ -", "@@ bogus -", 1)
    root = _log(
        tmp_path, {"experiments/exp_2/kernel.py": BASE, "experiments/exp_3/bad.diff": broken}
    )
    diagnosis = diagnose(root, catalog=Catalog.builtin())
    assert len(diagnosis.checks) == 9
    reasons = {u.path: u.reason for u in diagnosis.unread}
    assert reasons["experiments/exp_3/bad.diff"].startswith(
        "not a unified diff (line 4: Expected a hunk header"
    )
    assert _context(root).changes == {}


# A helper that takes the kernel's own knob, written just above the kernel; a second one that
# also takes a knob the file lacked.
HELPER = "@triton.jit\ndef _twice(x, BLOCK: tl.constexpr):\n    return x * 2 + BLOCK * 0\n\n\n"
THREADED = BASE.replace("@triton.jit\n", HELPER + "@triton.jit\n", 1)
WIDENED = THREADED.replace(
    "def _twice(x, BLOCK: tl.constexpr):", "def _twice(x, BLOCK: tl.constexpr, PAD: tl.constexpr):"
)


def test_a_helper_that_threads_an_existing_knob_adds_none(tmp_path: Path) -> None:
    for name, after, knobs in (("threaded", THREADED, 0), ("widened", WIDENED, 1)):
        files = {
            "experiments/exp_2/kernel.py": BASE,
            # Four lines of context reach the kernel's signature (``diff -U4``).
            "experiments/exp_3/helper.diff": _diff(BASE, after, context=4),
        }
        (change,) = _context(_log(tmp_path / name, files)).changes[3]
        assert change.added.knobs is not None and "BLOCK" in change.added.knobs, name
        assert change.after is not None and change.net_constexprs == knobs, name
        # Without the base, the kernel's signature in the hunk's context holds BLOCK.
        del files["experiments/exp_2/kernel.py"]
        (change,) = _context(_log(tmp_path / f"{name}-alone", files)).changes[3]
        assert change.after is None and change.net_constexprs == knobs, name


def test_knob_names_the_removed_lines_hold_are_no_new_knobs(tmp_path: Path) -> None:
    # The diff rewrites the kernel's signature (USE_A is new) and appends a helper that takes
    # BLOCK, far from any context line: the removed signature holds BLOCK already.
    widened = BASE.replace("BLOCK: tl.constexpr):", "BLOCK: tl.constexpr, USE_A: tl.constexpr):")
    widened += "\n\n@triton.jit\ndef _pad(x, BLOCK: tl.constexpr):\n    return x + BLOCK\n"
    files = {"experiments/exp_3/widen.diff": _diff(BASE, widened)}
    (change,) = _context(_log(tmp_path, files)).changes[3]
    assert change.after is None and (change.added.constexprs, change.removed.constexprs) == (2, 1)
    assert change.net_constexprs == 1
    # Undone, the same lines take the one knob away again.
    files = {"experiments/exp_3/widen.diff": _diff(widened, BASE)}
    (change,) = _context(_log(tmp_path / "undone", files)).changes[3]
    assert change.net_constexprs == -1


def test_the_mla_decode_helpers_thread_existing_knobs() -> None:
    # Exp 39 splits _read_group/_stage_group out of the ring kernel; of their compile-time
    # parameters only one name is new to ring_fp8.py.
    root = REPO / "docs" / "kernels" / "mla_decode"
    ctx = _context(root)
    (change,) = ctx.changes[39]
    assert change.base == "experiments/exp_38/ring_fp8.py"
    assert change.before is not None and change.after is not None
    assert (change.before.constexprs, change.after.constexprs, change.net_constexprs) == (13, 16, 1)
    diagnosis = diagnose(root, catalog=Catalog.builtin())
    found = diagnosis.finding(Pathology.OVER_ENGINEERING)
    assert found is None or "constexpr knobs" not in found.summary


def test_the_mla_decode_log_diffs_are_read() -> None:
    ctx = _context(REPO / "docs" / "kernels" / "mla_decode")
    targets = {n: {c.name for c in ctx.changes.get(n, ())} for n in (14, 15, 16)}
    assert targets == {14: {"ring.py", "seesaw.py"}, 15: {"ring.py"}, 16: {"seesaw.py"}}
    for number in (14, 15, 16):
        for change in ctx.changes[number]:
            assert change.path.startswith(f"experiments/exp_{number}/")
            assert change.path.endswith(".diff") and change.added.lines > 0
    # Gluon's compile-time parameters count as knobs (exp 14's TILE_ROWS: gl.constexpr).
    assert any(c.added.constexprs > 0 for c in ctx.changes[14])
    assert not any(u.path.endswith((".diff", ".patch")) for u in ctx.log.unread)


def test_only_the_diff_a_result_names_is_its_experiment_s_change(tmp_path: Path) -> None:
    # Exp 3's folder also holds an instrumented copy it timed with; its result names
    # use_a.diff as the kernel, so the stamps are not read as code the kernel kept.
    from kernelopt.experiments.canonical import write_result
    from kernelopt.experiments.records import ResultRecord, ResultRow

    stamped = V3.replace("    pid = tl.program_id(0)\n", "    pid = tl.program_id(0)\n" * 40)
    root = _log(
        tmp_path,
        {
            "experiments/exp_2/kernel.py": BASE,
            "experiments/exp_3/use_a.diff": _diff(BASE, V3),
            "experiments/exp_3/stamps.diff": _diff(BASE, stamped),
        },
    )
    record = ResultRecord(
        experiment=3,
        title="use_a switch",
        status="KEPT",
        correctness="PASS",
        date="2026-01-03",
        kernel="exp_3/use_a.diff",
        rows=(ResultRow(point="n=1024", impl="use_a", median=49.8, unit="us"),),
    )
    write_result(root / "experiments", record)
    log = read_log(root, catalog=())
    assert log.experiment(3).kernel == "exp_3/use_a.diff"
    (change,) = build_context(log, None, family=None).changes[3]
    assert change.path == "experiments/exp_3/use_a.diff"
    assert change.net_lines == 2
    # Without the name, both diffs are the experiment's changes.
    (root / "experiments" / "exp_3" / "result.md").unlink()
    assert len(_context(root).changes[3]) == 2

"""The Gluon kernels' shared-memory hand-offs: a warpgroup finishes reading before it lets go.

``mbarrier.arrive`` is executed by one thread of the partition. A warpgroup that reads a
shared buffer with ordinary loads (``smem.load(layout)``) and then arrives to give the
buffer back must first fence its reads against the copy engine's proxy
(``fence_async_shared()``: the next writer is usually a TMA copy) and then meet at
``gl.thread_barrier()``: without the barrier the arrive can go out while the other warps
are still reading; without the fence a TMA copy can land before reads the barrier already
passed (both showed on the H200 as sporadic wrong rows and NaN, exp 38, and never on the
CPU). This reads each kernel module's source, follows calls into its own helpers, reads
loop bodies twice (a load at the end of one pass, an arrive at the start of the next) and
takes either arm of a branch, and checks that no arrive follows such a load without a
fence and then a barrier between. Global loads (``gl.load``) and the asynchronous
products (``warpgroup_mma``, which their own waits order) are not ordinary shared-memory
reads and are not counted.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

MLA = Path(__file__).resolve().parents[3] / "kernelopt" / "kernels" / "mla"
GLUON_MODULES = sorted(p for p in MLA.glob("*.py") if "mbarrier.arrive" in p.read_text())
_DEPTH = 8  # helper calls followed this deep


def _call_name(call: ast.Call) -> str:
    func = call.func
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        base = func.value
        return f"{base.id}.{func.attr}" if isinstance(base, ast.Name) else f".{func.attr}"
    return ""


class _Checker:
    def __init__(self, tree: ast.Module, path: str) -> None:
        self.functions = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
        self.path = path
        self.problems: set[str] = set()

    def calls(self, node: ast.AST, pending: int | None, where: str, depth: int) -> int | None:
        """Calls in evaluation order (arguments first). The state is the line of the last
        load not yet released (negative once fenced, still waiting for the barrier)."""
        for child in ast.iter_child_nodes(node):
            pending = self.calls(child, pending, where, depth)
        if not isinstance(node, ast.Call):
            return pending
        name = _call_name(node)
        if name.endswith(".load") and name not in ("gl.load", "mbarrier.load"):
            return node.lineno
        if name == "fence_async_shared" and pending is not None:
            return -abs(pending)
        if name == "gl.thread_barrier" and (pending is None or pending < 0):
            return None
        if name == "mbarrier.arrive" and pending is not None:
            self.problems.add(
                f"{self.path}:{node.lineno} ({where}): arrive after the shared-memory load "
                f"at line {abs(pending)} with no fence_async_shared() and then "
                "gl.thread_barrier() between"
            )
        if name in self.functions and depth < _DEPTH:
            return self.block(self.functions[name].body, pending, name, depth + 1)
        return pending

    def block(
        self, body: list[ast.stmt], pending: int | None, where: str, depth: int
    ) -> int | None:
        for statement in body:
            pending = self.statement(statement, pending, where, depth)
        return pending

    def statement(self, node: ast.stmt, pending: int | None, where: str, depth: int) -> int | None:
        if isinstance(node, ast.FunctionDef):
            return pending
        if isinstance(node, (ast.For, ast.While)):
            head = node.iter if isinstance(node, ast.For) else node.test
            before = self.calls(head, pending, where, depth)
            first = self.block(node.body, before, where, depth)
            # The next pass starts where this one ended; no pass at all leaves `before`.
            last = self.block(node.body, first, where, depth)
            return last if last is not None else before
        if isinstance(node, ast.If):
            pending = self.calls(node.test, pending, where, depth)
            taken = self.block(node.body, pending, where, depth)
            skipped = self.block(node.orelse, pending, where, depth)
            return taken if taken is not None else skipped
        return self.calls(node, pending, where, depth)

    def check(self) -> set[str]:
        for name, function in self.functions.items():
            self.block(function.body, None, name, 0)
        return self.problems


def _problems(source: str, path: str) -> set[str]:
    return _Checker(ast.parse(source), path).check()


def test_the_kernels_are_found() -> None:
    names = {p.name for p in GLUON_MODULES}
    assert {"ring.py", "seesaw.py"} <= names, names


@pytest.mark.parametrize("path", GLUON_MODULES, ids=lambda p: p.name)
def test_no_buffer_is_given_back_while_other_warps_may_still_read_it(path: Path) -> None:
    assert _problems(path.read_text(), path.name) == set()


_RACY = """
@gluon.jit
def _read(ring, slot):
    return ring.index(slot).load(blk)


@gluon.jit
def dequantizer(ring, full, free, stage, n):
    for j in range(n):
        mbarrier.wait(full.index(j), 0)
        x = _read(ring, j)
        mbarrier.arrive(free.index(j))
        stage.store(x)
"""


def test_the_check_finds_an_arrive_that_one_thread_may_send_too_early() -> None:
    found = _problems(_RACY, "racy.py")
    assert len(found) == 1 and "racy.py:12 (dequantizer)" in next(iter(found)), found
    barrier_only = _RACY.replace(
        "        mbarrier.arrive(", "        gl.thread_barrier()\n        mbarrier.arrive("
    )
    assert len(_problems(barrier_only, "barrier_only.py")) == 1
    fixed = _RACY.replace(
        "        mbarrier.arrive(",
        "        fence_async_shared()\n        gl.thread_barrier()\n        mbarrier.arrive(",
    )
    assert _problems(fixed, "fixed.py") == set()
    # The barrier must come after the fence: a barrier first leaves the fence unshared.
    swapped = _RACY.replace(
        "        mbarrier.arrive(",
        "        gl.thread_barrier()\n        fence_async_shared()\n        mbarrier.arrive(",
    )
    assert len(_problems(swapped, "swapped.py")) == 1
    # A load at the end of a pass, the arrive at the start of the next.
    wrapped = """
@gluon.jit
def k(buf, bar, n):
    for j in range(n):
        mbarrier.arrive(bar)
        x = buf.load(blk)
"""
    assert len(_problems(wrapped, "wrapped.py")) == 1
    branch = """
@gluon.jit
def k(buf, bar, flag):
    x = buf.load(blk)
    if flag:
        fence_async_shared()
        gl.thread_barrier()
    mbarrier.arrive(bar)
"""
    assert len(_problems(branch, "branch.py")) == 1

"""Kernel sources read as text: complexity, per-call allocations, precision suspects, guards."""

from __future__ import annotations

from kernelopt.diagnose.source import (
    LineCounts,
    allocations,
    complexity,
    guard_present,
    line_counts,
    precision_suspects,
)
from kernelopt.experiments import KernelSource

from .conftest import kernel

AUTOTUNE_10K = """
import itertools
import triton

CONFIGS = [
    triton.Config({"BM": m, "BN": n, "BK": k, "G": g}, num_warps=w, num_stages=s)
    for m, n, k, g, w, s in itertools.product(
        (16, 32, 64, 128, 256), (16, 32, 64, 128, 256), (16, 32, 64, 128), (1, 4, 8, 16, 32),
        (2, 4), range(1, 11)
    )
]


@triton.autotune(configs=CONFIGS, key=["M"])
@triton.jit
def k(x, BM: tl.constexpr, BN: tl.constexpr):
    if BM > 64:
        pass
"""


def test_autotune_space_is_sized_statically() -> None:
    size = complexity(kernel(AUTOTUNE_10K))
    assert size.autotune_configs == 5 * 5 * 4 * 5 * 2 * 10 == 10_000
    assert size.constexprs == 2 and size.branches >= 1
    helper = "import triton\ndef get_configs():\n"
    helper += "    return [triton.Config({}) for w in (2, 4, 8) for s in range(1, 5)]\n"
    helper += "@triton.autotune(configs=get_configs(), key=[])\n@triton.jit\ndef k(x):\n    pass\n"
    assert complexity(kernel(helper)).autotune_configs == 12
    assert (
        complexity(kernel("def f(:\n  autotune triton.Config( triton.Config(")).autotune_configs
        == 2
    )
    assert complexity(kernel("x = 1\n\n# comment\ny = 2\n")).lines == 2


GLUON = """
@gluon.jit
def k(x, ROWS: gl.constexpr, STAGES: gl.constexpr):
    \"\"\"Rows of one tile.

    for each stage the loader waits
    \"\"\"
    TILE: gl.constexpr = x.shape[1]
    for i in range(STAGES):
        y = gl.where(i > 0, x, x * 2) if ROWS > 16 else x
    while False:
        pass
"""


def test_gluon_knobs_and_selects_count_and_lines_count_like_files() -> None:
    size = complexity(kernel(GLUON))
    # ROWS and STAGES are knobs; TILE is a constant derived in the body, not a knob.
    assert (size.constexprs, size.branches) == (2, 4)  # for, where, conditional, while
    # Line by line (a diff's added lines), the same code counts the same; the docstring's
    # "for each stage" is prose, not a loop.
    assert line_counts(GLUON.split("\n"), "python") == LineCounts(
        lines=size.lines,
        branches=4,
        constexprs=2,
        knobs=frozenset({"ROWS", "STAGES"}),
        constexpr_names=frozenset({"ROWS", "STAGES", "TILE"}),
    )
    cuda = ["// a comment", "if (x > 0) {", "  constexpr int n = 4;", "", "}"]
    assert line_counts(cuda, "cuda") == LineCounts(lines=3, branches=1, constexprs=1)


KERNEL = """
@gluon.jit
def k(x, g: gl.constexpr, SLOTS: gl.constexpr, ROWS: gl.constexpr):
    blk: gl.constexpr = gl.BlockedLayout([1, 16], [8, 4], [4, 1], [1, 0])
    return (x.load(blk) + g * SLOTS) * ROWS
"""
HELPER = """
@gluon.jit
def _stage(x, g: gl.constexpr, SLOTS: gl.constexpr, blk: gl.constexpr):
    return x.load(blk) + g * SLOTS
"""
# The kernel's body moved into a helper that takes its knobs and its layout constant.
THREADED = HELPER + KERNEL.replace("(x.load(blk) + g * SLOTS)", "_stage(x, g, SLOTS, blk)")


def test_a_knob_is_a_distinct_name_however_many_functions_take_it() -> None:
    before, after = complexity(kernel(KERNEL)), complexity(kernel(THREADED))
    assert (before.knobs, before.constexprs) == (frozenset({"g", "SLOTS", "ROWS"}), 3)
    # g and SLOTS count once; blk is a parameter now, but a name the kernel held already.
    assert (after.constexprs, after.constexpr_names) == (
        4,
        frozenset({"g", "SLOTS", "ROWS", "blk"}),
    )
    assert after.knob_growth(before) == 0
    # A name the file did not hold is a knob more; taking it away again drops one.
    widened = complexity(
        kernel(THREADED.replace("blk: gl.constexpr):", "blk: gl.constexpr, PAD: gl.constexpr):"))
    )
    assert (widened.knob_growth(after), after.knob_growth(widened)) == (1, -1)
    # Python that does not parse is read line by line, the same way.
    assert complexity(kernel(THREADED + "def broken(:\n")).constexprs == 4
    # Line by line, as a diff adds the helper: it names no knob the kernel's lines lack.
    added = line_counts(HELPER.split("\n"), "python")
    removed = line_counts([], "python")
    assert (added.constexprs, added.knob_growth(removed)) == (3, 3)
    assert added.knob_growth(removed, line_counts(KERNEL.split("\n"), "python")) == 0
    cuda = line_counts(["constexpr int a = 1;", "constexpr int b = 2;"], "cuda")
    assert cuda.knob_growth(line_counts(["constexpr int a = 1;"], "cuda")) == 1


LAUNCHER = """
import torch, triton

@triton.jit
def _k(x_ptr, out_ptr):
    pass

def run(x):
    out = torch.empty_like(x)
    tmp = x.new_zeros((4,))
    _k[(1,)](x, out)
    return out

def run_out(x, out=None):
    if out is None:
        out = torch.empty_like(x)
    _k[(1,)](x, out)
    return out

_CACHE = {}

def run_cached(x):
    key = x.shape
    if key not in _CACHE:
        _CACHE[key] = torch.empty_like(x)
    _k[(1,)](x, _CACHE[key])
"""


def test_per_call_allocations_in_launchers() -> None:
    found = allocations([kernel(LAUNCHER)])
    assert [(a.function, a.call, a.line) for a in found] == [
        ("run", "torch.empty_like", 9),
        ("run", ".new_zeros", 10),
    ]
    assert (
        allocations([kernel("import torch\ndef ref(x):\n    return torch.empty(3)\n")]) == []
    )  # no launch
    pooled = LAUNCHER.replace("_CACHE = {}", "pool = BufferPool()")
    assert allocations([kernel(pooled)]) == []
    cuda = "__global__ void k() {}\nvoid launch() { auto out = torch::empty({4}); }\n"
    found = allocations([KernelSource(path="k.cu", text=cuda, language="cuda")])
    assert [a.line for a in found] == [2]


def test_precision_suspects() -> None:
    risky = """
b_s = tl.dot(b_q.to(tl.float32), tl.trans(b_k))
b_s = tl.where(mask, b_s, float("-inf"))
p = tl.exp2(b_s - m)
acc = tl.zeros([M, N], dtype=tl.bfloat16)
lse = m + tl.log(l)
"""
    found = {s.name: s for s in precision_suspects([kernel(risky)])}
    assert all(s.found for s in found.values())
    assert found["LSE base"].line == 6 and found["dot input precision"].line == 2
    safe = """
b_s = tl.dot(b_q, tl.trans(b_k), input_precision="ieee")
b_s = tl.where(mask, b_s, float("-inf"))
m_new = tl.maximum(m_i, -1e30)
p = tl.exp2(b_s - m)
acc = tl.zeros([M, N], dtype=tl.float32)
lse = (m + tl.log2(l)) * 0.6931471805599453
"""
    assert not any(s.found for s in precision_suspects([kernel(safe)]))


def test_guards_under_their_usual_spellings() -> None:
    assert (
        guard_present("s_q == 1", [kernel("if seqlen_q == 1:\n    return fast(q)\n")]) is not None
    )
    assert guard_present("s_q == 1", [kernel("if s_q > 1:\n    causal()\n")]) is not None
    assert guard_present("q.shape[1] == 1", [kernel("if q.shape[1]==1: pass\n")]) is not None
    assert guard_present("s_q == 1", [kernel("for i in range(s_q): pass\n")]) is None


def test_a_size_check_that_holds_for_every_call_is_no_size_1_path() -> None:
    # s_q >= 1 and s_q < 1 test whether there is any query at all: true (or false) for
    # every call, so they single out no one-token path.
    for text in ("assert s_q >= 1\n", "if s_q < 1:\n    return out\n", "if 1 <= s_q: pass\n"):
        assert guard_present("s_q == 1", [kernel(text)]) is None, text
    for text in ("if s_q <= 1: pass\n", "if 1 < s_q: pass\n", "if 1 == s_q: pass\n"):
        assert guard_present("s_q == 1", [kernel(text)]) is not None, text
    # A guard between two axes is found by any comparison of them.
    assert guard_present("k >= n", [kernel("if k < n:\n    return topk(x)\n")]) is not None


def test_an_expression_guard_is_found_mirrored_and_negated_but_not_in_a_longer_one() -> None:
    uniform = "cache_seqlens.min() == cache_seqlens.max()"
    for text in (
        "if cache_seqlens.max() == cache_seqlens.min(): pass\n",
        "if cache_seqlens.min() != cache_seqlens.max(): pass\n",
    ):
        assert guard_present(uniform, [kernel(text)]) is not None, text
    for text in (
        "if q.shape[1] != 1: pass\n",
        "if 1 == q.shape[1]: pass\n",
        "if q.shape[1] > 1:\n",
    ):
        assert guard_present("q.shape[1] == 1", [kernel(text)]) is not None, text
    # Sixteen query tokens, or another tensor's axis, single out no one-token path.
    for text in ("if q.shape[1] == 16: pass\n", "if kq.shape[1] == 1: pass\n"):
        assert guard_present("q.shape[1] == 1", [kernel(text)]) is None, text


def _dot_found(text: str) -> tuple[bool, int]:
    dot = precision_suspects([kernel(text)])[0]
    assert dot.name == "dot input precision"
    return dot.found, dot.line


def test_tf32_is_suspected_only_for_float32_operands_or_an_explicit_setting() -> None:
    bf16 = """
@triton.jit
def k(Q, K, V):
    q = tl.load(Q)
    k = tl.load(K)
    s = tl.dot(q, tl.trans(k))
    p = tl.exp2(s)
    acc = tl.dot(p.to(tl.bfloat16), tl.load(V))
"""
    assert _dot_found(bf16) == (False, 0)  # loads of unknown dtype, a cast to bf16
    # float32 operands the text shows: a cast, an fp32 creation, followed through names.
    assert _dot_found(bf16.replace("tl.load(Q)", "tl.load(Q).to(tl.float32)")) == (True, 6)
    fp32_p = bf16.replace("p.to(tl.bfloat16)", "p")  # exp2 of a dot result: fp32
    assert _dot_found(fp32_p) == (True, 8)
    assert _dot_found("a = tl.zeros([16, 16], dtype=tl.float32)\nc = tl.dot(a, b)\n") == (
        True,
        2,
    )
    # An explicit tf32 setting is a suspect whatever the operands; ieee/tf32x3 are not.
    assert _dot_found("c = tl.dot(a, b, input_precision='tf32')\n") == (True, 1)
    assert _dot_found("c = tl.dot(a, b, allow_tf32=True)\n") == (True, 1)
    precise = "a = x.to(tl.float32)\nc = tl.dot(a, b, input_precision='ieee')\n"
    assert _dot_found(precise) == (False, 0)
    through = "PREC = 'tf32'\nc = tl.dot(a, b, input_precision=PREC)\n"
    assert _dot_found(through) == (True, 2)
    # The words alone (a comment, a docstring) are not a setting.
    assert _dot_found('"""tf32 is fast"""\nc = tl.dot(a, b)  # tf32?\n') == (False, 0)


def test_an_allocator_given_to_set_allocator_allocates_per_launch() -> None:
    inline = (
        "import torch, triton\n"
        "triton.set_allocator(lambda size, align, stream: torch.empty(size, dtype=torch.int8,"
        ' device="cuda"))\n'
    )
    [found] = allocations([kernel(inline)])
    assert (found.line, found.call, found.function, found.per_launch) == (
        2,
        "torch.empty",
        "<lambda>",
        True,
    )
    named = (
        "import torch, triton\n"
        "def _alloc(size, align, stream):\n"
        "    return torch.empty(size, dtype=torch.int8, device='cuda')\n"
        "alloc = _alloc\n"
        "triton.set_allocator(_alloc)\n"
    )
    assert [(a.function, a.line, a.per_launch) for a in allocations([kernel(named)])] == [
        ("_alloc", 3, True)
    ]
    assigned = "import torch, triton\nf = lambda n, a, s: torch.zeros(n)\ntriton.set_allocator(f)\n"
    assert [a.line for a in allocations([kernel(assigned)])] == [2]
    # An allocator that keeps its buffer does not allocate per launch.
    cached = (
        "import torch, triton\n_BUF = {}\n"
        "def _alloc(size, align, stream):\n"
        "    buf = _BUF.get(stream)\n"
        "    if buf is None or buf.numel() < size:\n"
        "        buf = _BUF[stream] = torch.empty(size, dtype=torch.int8, device='cuda')\n"
        "    return buf\n"
        "triton.set_allocator(_alloc)\n"
    )
    assert allocations([kernel(cached)]) == []


def test_named_constexpr_constants_are_not_knobs_but_defaults_are() -> None:
    lines = [
        "def k(x, BLOCK: tl.constexpr = 64, STAGES: tl.constexpr = 2):",  # two knobs
        "    NUM: tl.constexpr,",  # a parameter on its own line
        "    SPLIT: gl.constexpr = 4,",  # a parameter with a default on its own line
        "    f32: gl.constexpr = gl.NVMMASharedLayout(",  # a layout constant
        "    lo_l: gl.constexpr = lo.type.layout  # read back below",
        "    if X == 1:  # X: tl.constexpr in a comment",
    ]
    assert line_counts(lines, "python").constexprs == 4

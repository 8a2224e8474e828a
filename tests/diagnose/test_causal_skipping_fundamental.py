"""Item 5 on causal tile skipping, standard for attention where it applies.

Causal tile skipping bounds the key loop at the query tile's diagonal and keeps the mask to
the tiles the diagonal crosses. A kernel with no causal mask has no tile to skip; calls whose
query rows all fit one tile (``s_q`` of 1 to a few dozen, every call the workload profile
recorded) have none past the diagonal; neither is told to add it, and the item says why. A
kernel whose key loop already stops at the diagonal has half of it: the item says so rather
than calling it missing. A causal kernel that walks every key tile is still told.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kernelopt.catalog import Catalog
from kernelopt.diagnose import Diagnosis, Pathology, diagnose
from kernelopt.diagnose.presence import causal_mask, needless_in, partly_in, present_in
from kernelopt.experiments import KernelSource
from kernelopt.workload import (
    AxisStat,
    OpProfile,
    ShapeStat,
    ValueShare,
    WorkloadProfile,
    render_profile_md,
)

P = Pathology
ID = "causal-tile-skipping"
EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "logs"
MLA_DOCS = Path(__file__).resolve().parents[2] / "docs" / "kernels" / "mla_decode" / "experiments"

# The parts every kernel below shares: one program per query tile, online softmax.
_HEAD = """import triton
import triton.language as tl


@triton.jit
def attn_fwd(Q, K, V, O, lk, sm_scale, D: tl.constexpr, BLOCK_M: tl.constexpr,
             BLOCK_N: tl.constexpr):
    pid_m = tl.program_id(0)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, D)
    q = tl.load(Q + offs_m[:, None] * D + offs_d[None, :])
    m_i = tl.full([BLOCK_M], float("-inf"), tl.float32)
    l_i = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, D], tl.float32)
"""
_BODY = """        cols = start_n + offs_n
        k = tl.load(K + cols[:, None] * D + offs_d[None, :], mask=cols[:, None] < lk, other=0.0)
        s = tl.dot(q, tl.trans(k)) * sm_scale
{mask}        m_new = tl.maximum(m_i, tl.max(s, 1))
        p = tl.exp(s - m_new[:, None])
        alpha = tl.exp(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        v = tl.load(V + cols[:, None] * D + offs_d[None, :], mask=cols[:, None] < lk, other=0.0)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m_i = m_new
"""
_TAIL = """    tl.store(O + offs_m[:, None] * D + offs_d[None, :], acc / l_i[:, None])
"""
_MASK = '        s = tl.where(offs_m[:, None] >= cols[None, :], s, float("-inf"))\n'
_KEYS_ONLY = '        s = tl.where(cols[None, :] < lk, s, float("-inf"))\n'


def _loop(start: str, end: str, mask: str) -> str:
    return f"    for start_n in range({start}, {end}, BLOCK_N):\n" + _BODY.format(mask=mask)


# Causal: every key tile walked and masked, those past the diagonal included.
EVERY_TILE = _HEAD + _loop("0", "lk", _MASK) + _TAIL
# Not causal: every query row sees every key.
NOT_CAUSAL = _HEAD + _loop("0", "lk", _KEYS_ONLY) + _TAIL
# Causal, the key loop stopped at the query tile's end, every tile it walks masked.
BOUNDED = (
    _HEAD + "    hi = tl.minimum(lk, (pid_m + 1) * BLOCK_M)\n" + _loop("0", "hi", _MASK) + _TAIL
)
# Both halves: an unmasked loop below the diagonal, a masked one over it.
TWO_LOOPS = (
    _HEAD
    + "    hi = tl.minimum(lk, (pid_m + 1) * BLOCK_M)\n"
    + _loop("0", "pid_m * BLOCK_M", "")
    + _loop("pid_m * BLOCK_M", "hi", _MASK)
    + _TAIL
)
# Both halves the way Triton's tutorial writes the second stage's bounds.
STAGE_BOUNDS = (
    _HEAD
    + "    lo, hi = pid_m * BLOCK_M, (pid_m + 1) * BLOCK_M\n"
    + _loop("lo", "hi", _MASK)
    + _TAIL
)
# A causal switch and nothing else that compares positions in code.
FLAG_ONLY = EVERY_TILE.replace(_MASK, "").replace(
    "BLOCK_N: tl.constexpr):", "BLOCK_N: tl.constexpr, IS_CAUSAL: tl.constexpr):"
)
CUDA = """__global__ void attn_fwd(const half* q, const half* k, const half* v, half* o, int n) {
    for (int j = 0; j < n; ++j) { if (j > threadIdx.x) continue; }
}
"""


def _profile(s_q: dict[int, int], *, listed: bool = True) -> str:
    """A workload profile of one attention op whose calls have these ``s_q`` values (value:
    calls); with ``listed`` False the axis gives its range but not every value."""
    calls = sum(s_q.values())
    values = tuple(ValueShare(value=v, calls=n, call_share=n / calls) for v, n in s_q.items())
    axis = AxisStat(
        name="s_q",
        kind="shape",
        source="q.shape[2]",
        min=min(s_q),
        median=min(s_q),
        max=max(s_q),
        distinct=len(s_q) if listed else len(s_q) + 5,
        values=values,
    )
    shapes = tuple(
        ShapeStat(args=f"q=[1,2,{v},64]", axes=(("s_q", v),), calls=n, call_share=n / calls)
        for v, n in s_q.items()
    )
    op = OpProfile(
        op="sdpa",
        family="attention",
        calls=calls,
        axes=(axis,),
        shapes=shapes,
        distinct_shapes=len(s_q),
    )
    return render_profile_md(
        WorkloadProfile(source="calls.jsonl", format="jsonl", ops=(op,), records=calls)
    )


def _diagnose(
    root: Path, kernel: str, *, profile: str | None = None, name: str = "attn.py"
) -> Diagnosis:
    """A log under ``root`` whose CLAUDE.md names ``kernel`` as kernels/``name``."""
    (root / "experiments").mkdir(parents=True)
    (root / "kernels").mkdir()
    (root / "CLAUDE.md").write_text(
        f"# Attention prefill kernel\n\nKernel: kernels/{name}\n", encoding="utf-8"
    )
    (root / "kernels" / name).write_text(kernel, encoding="utf-8")
    (root / "experiments" / "summary.md").write_text(
        "# Experiments Summary\n\n"
        "| Exp | Description | Latency | Unit | Correct | Status | Tags |\n"
        "|---|---|---|---|---|---|---|\n"
        "| 1 | baseline | 100.0 | us | PASS | BASELINE | online-softmax |\n"
        "| 2 | wider key tiles | 90.0 | us | PASS | KEPT | |\n"
        "| 3 | more warps | 89.5 | us | PASS | KEPT | |\n",
        encoding="utf-8",
    )
    # Profiled: the measuring fundamentals are in the log, so only this entry is judged.
    (root / "experiments" / "profile.md").write_text(
        "## Profile: attention v2 | b=1, s=4096\n### Bottleneck: Compute-bound\n"
        "Root cause: the tensor cores are busy.\n",
        encoding="utf-8",
    )
    if profile is not None:
        (root / "experiments" / "workload_profile.md").write_text(profile, encoding="utf-8")
    return diagnose(root, family="attention")


def _actions(diagnosis: Diagnosis) -> list[str | None]:
    found = diagnosis.finding(P.MISSING_FUNDAMENTAL)
    return [] if found is None else [a.catalog_id for a in found.actions]


def _sentence(diagnosis: Diagnosis) -> str:
    return next(c.sentence for c in diagnosis.checks if c.pathology is P.MISSING_FUNDAMENTAL)


def _line(kernel: str, text: str) -> int:
    return next(i for i, line in enumerate(kernel.splitlines(), 1) if text in line)


def _source(text: str, language: str = "python") -> KernelSource:
    return KernelSource(path="kernels/attn.py", text=text, language=language)


def test_a_causal_kernel_over_every_key_tile_is_told(tmp_path: Path) -> None:
    diagnosis = _diagnose(tmp_path / "log", EVERY_TILE)
    assert ID in _actions(diagnosis)
    # Recorded calls with a query length that spans several tiles keep it needed.
    diagnosis = _diagnose(tmp_path / "long", EVERY_TILE, profile=_profile({16: 2, 512: 2}))
    assert ID in _actions(diagnosis)


def test_a_kernel_without_causal_mask_has_nothing_to_skip(tmp_path: Path) -> None:
    diagnosis = _diagnose(tmp_path / "log", NOT_CAUSAL)
    assert diagnosis.finding(P.MISSING_FUNDAMENTAL) is None
    assert f"{ID}: not needed, the kernel shows no causal mask (no causal flag and no " in (
        _sentence(diagnosis)
    )
    assert "positions in kernels/attn.py): no key tile is wholly masked" in _sentence(diagnosis)


def test_a_causal_switch_keeps_it_needed(tmp_path: Path) -> None:
    assert ID in _actions(_diagnose(tmp_path / "log", FLAG_ONLY))


def test_a_cuda_kernel_not_read_for_masks_is_still_told(tmp_path: Path) -> None:
    # No Python to read the comparisons of: absence of a mask is not claimed.
    assert ID in _actions(_diagnose(tmp_path / "log", CUDA, name="attn.cu"))


@pytest.mark.parametrize(
    ("s_q", "listed", "shown"),
    [
        ({24: 6}, True, "s_q is 24"),
        ({1: 4, 16: 2}, True, "s_q is 1 or 16"),
        ({1: 4, 64: 2}, False, "s_q is 1 to 64"),
    ],
    ids=["one-value", "values", "range"],
)
def test_recorded_calls_of_few_query_rows_rule_it_out(
    tmp_path: Path, s_q: dict[int, int], listed: bool, shown: str
) -> None:
    diagnosis = _diagnose(tmp_path / "log", EVERY_TILE, profile=_profile(s_q, listed=listed))
    assert ID not in _actions(diagnosis)
    assert (
        f"{ID}: not needed, it applies where s_q >= 128, and {shown} in every call recorded "
        "(experiments/workload_profile.md)."
    ) in _sentence(diagnosis)


def test_a_range_that_reaches_the_condition_keeps_it_needed(tmp_path: Path) -> None:
    # Not every value listed: the range decides, and 256 of it meets s_q >= 128.
    diagnosis = _diagnose(
        tmp_path / "log", EVERY_TILE, profile=_profile({16: 2, 256: 2}, listed=False)
    )
    assert ID in _actions(diagnosis)


def test_a_loop_bounded_at_the_diagonal_is_the_technique_in_part(tmp_path: Path) -> None:
    diagnosis = _diagnose(tmp_path / "log", BOUNDED)
    assert diagnosis.finding(P.MISSING_FUNDAMENTAL) is None
    line = _line(BOUNDED, "hi = tl.minimum")
    assert (
        f"{ID}: partly in the kernel, the key loop stops at the query tile's diagonal "
        f"(kernels/attn.py:{line}), but not the mask kept to the key tiles the diagonal "
        "crosses (an unmasked loop over the tiles below it, a masked one over the diagonal)."
    ) in _sentence(diagnosis)
    assert (
        f"Every fundamental of 'attention' but {ID}, cuda-event-instrumentation is tried"
        in _sentence(diagnosis)
    )


@pytest.mark.parametrize("kernel", [TWO_LOOPS, STAGE_BOUNDS], ids=["two-loops", "stage-bounds"])
def test_a_loop_in_two_stages_is_the_technique(tmp_path: Path, kernel: str) -> None:
    diagnosis = _diagnose(tmp_path / "log", kernel)
    assert diagnosis.finding(P.MISSING_FUNDAMENTAL) is None
    # The profile is no sign of CUDA events: that measuring technique is left unjudged.
    assert _sentence(diagnosis).startswith(
        "Every fundamental of 'attention' but cuda-event-instrumentation is tried or in the "
        "kernel ("
    )
    assert ID in _sentence(diagnosis)


def test_presence_reads_code_not_comments() -> None:
    entry = Catalog.builtin().get(ID)
    # A comparison of a query row with a key, or a causal name, in code.
    hit = causal_mask([_source(EVERY_TILE)])
    assert hit is not None and hit[1] == _line(EVERY_TILE, ">= cols[None, :]")
    assert causal_mask([_source(FLAG_ONLY)]) is not None
    # Names bound to a row and a column, compared later.
    bound = NOT_CAUSAL.replace(
        _KEYS_ONLY,
        "        rows = offs_m[:, None]\n        keys = cols[None, :]\n"
        "        s = tl.where(rows >= keys, s, 0.0)\n",
    )
    assert causal_mask([_source(bound)]) is not None
    # The scores against a row's max, or a tile's padding, are no mask over positions.
    assert causal_mask([_source(NOT_CAUSAL)]) is None
    remarked = NOT_CAUSAL.replace(
        "    pid_m =", "    # causal: offs_m[:, None] >= cols[None, :]\n    pid_m ="
    )
    assert causal_mask([_source(remarked)]) is None
    assert needless_in(entry, [_source(remarked)]) is not None
    # A kernel in another language is not read, so nothing is claimed of it.
    assert needless_in(entry, [_source(NOT_CAUSAL), _source(CUDA, "cuda")]) is None
    # The bound alone is half; both halves are the technique.
    half = partly_in(entry, [_source(BOUNDED)])
    assert half is not None and half.where[1] == _line(BOUNDED, "hi = tl.minimum")
    assert present_in(entry, [_source(BOUNDED)]) is None
    for kernel in (TWO_LOOPS, STAGE_BOUNDS):
        assert present_in(entry, [_source(kernel)]) is not None
        assert partly_in(entry, [_source(kernel)]) is None
    # A bound left in a comment is not in the kernel.
    commented = EVERY_TILE.replace(
        "    for start_n", "    # hi = tl.minimum(lk, (pid_m + 1) * BLOCK_M)\n    for start_n"
    )
    assert partly_in(entry, [_source(commented)]) is None


def test_mla_logs_read_as_attention_are_not_told() -> None:
    # The plateau's kernel is causal among draft tokens, but every recorded call has s_q = 1.
    plateau = diagnose(EXAMPLES / "mla-decode-plateau", family="attention")
    assert ID not in _actions(plateau)
    assert f"{ID}: not needed, it applies where s_q >= 128, and s_q is 1 in every call " in (
        _sentence(plateau)
    )
    docs = diagnose(MLA_DOCS, family="attention")
    assert docs.finding(P.MISSING_FUNDAMENTAL) is None
    assert "s_q is 1 or 16 in every call recorded" in _sentence(docs)


def test_key_lengths_recorded_do_not_rule_out_split_kv() -> None:
    # The plateau's trace recorded caches of 101 to 206 keys, below split-KV's seqlen_k >=
    # 1024: a trace's cache lengths are not the kernel's target, only s_q sets decode apart.
    plateau = diagnose(EXAMPLES / "mla-decode-plateau")
    assert "split-kv-flash-decoding" in _actions(plateau)

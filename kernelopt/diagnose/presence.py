"""Whether a catalog technique already shows in a kernel's source, read as text.

One check serves every part of kernelopt that must not recommend what a kernel already
does: the missing-fundamental and wrong-bottleneck detectors, the shortcut check, and the
profile hand-off built from benchmark rows. A technique is present when the source shows
its code pattern (``num_splits``, ``m_i``/``l_i``, ``make_tensor_descriptor``, a grid-stride
loop over tiles, ...) or names it with one of its catalog keywords (four letters or more).
Nothing is imported or run.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from kernelopt.diagnose.source import find_pattern
from kernelopt.experiments.log import KernelSource

__all__ = ["CODE_PATTERNS", "present_ids", "present_in"]

# One argument of a call on one line, with at most one level of nested parentheses.
_ARG = r"[^,()\n]*(?:\([^()\n]*\)[^,()\n]*)*"
# Names people give the SM count (``NUM_SMS``, ``num_sms``, ``props.multi_processor_count``).
_SMS = r"(?:NUM_SMS|num_sms|n_sms|N_SMS|\w*sm_count\w*|\w*SM_COUNT\w*|multi_processor_count)"
# Code that shows a technique is in a kernel even when no comment names it.
CODE_PATTERNS: dict[str, str] = {
    "online-softmax": (
        r"\bm_i\b[\s\S]{0,400}\bl_i\b|\brunning[_ ]max\b"
        r"|alpha\s*=\s*tl\.exp2?\(|tl\.maximum\(\s*m_i"
    ),
    "split-kv-flash-decoding": (
        r"\bnum_splits\b|\bNUM_SPLITS\b|\bsplit_kv\b|\bSPLIT_KV\b|\bkv_splits?\b"
        r"|\bnum_kv_splits\b|\bSPLIT_K\b"
    ),
    "split-kv-lse-combine": (
        r"\blse\b[\s\S]{0,300}\bcombine|\bcombine\w*\([\s\S]{0,200}\blse\b|\blogsumexp\b"
    ),
    "paged-kv-cache": r"\bblock_table\b|\bpage_table\b|\bkv_indices\b|\bPAGE_SIZE\b|\bpage_size\b",
    "head-grouping-mma-tile": (
        r"\bBLOCK_H\b|\bheads_per_(?:block|cta|program)\b|\bHEAD_GROUP\w*|\bnum_heads_per\w*"
    ),
    "exp2-folded-scale": r"\bexp2\b",
    "vectorized-coalesced-loads": (
        r"\bvload\d+\b|\bfloat4\b|\bld\.global\.v4\b"
        r"|tl\.load\([^)]*tl\.arange|tl\.load\([^)]*block_ptr"
    ),
    "cuda-graphs": r"CUDAGraph|cuda\.graph|cudaGraph|\.replay\(\)",
    "buffer-persistence": r"BufferPool|persistent_buffers|_buffer_cache|\bout=\w",
    "software-pipelining": r"\bnum_stages\b|cp\.async|\bpipeline\b",
    # A persistent grid is code, not a word: a loop over tiles strided by the number of
    # programs (Triton's ``range(pid, n_tiles, NUM_SMS)``, CUDA's ``tile += gridDim.x``), or
    # a launch grid sized by the SM count. "persistent buffers" in a docstring is neither.
    "persistent-grid": (
        rf"\bfor\s+\w+\s+in\s+(?:tl\.)?(?:range|static_range)\(\s*{_ARG},\s*{_ARG},\s*"
        rf"(?:tl\.num_programs\(\s*\w*\s*\)|{_SMS}|\w*num_programs\w*|\w*NUM_PROGRAMS\w*|"
        r"\w*grid_size\w*|\w*GRID_SIZE\w*)\s*[,)]"
        r"|\+=\s*gridDim\.x\s*[;)]"
        rf"|\bgrid\w*\s*=\s*[^\n]*\b{_SMS}\b"
    ),
    "block-pointers-tma": r"make_block_ptr|tensor_descriptor|\bTMA\b|make_tensor_descriptor",
    "warp-specialization": (
        r"\bwarp_specialize\s*=|warpgroup_reg_(?:alloc|dealloc)|\bsetmaxnreg\b"
    ),
    "kv-tile-shared-load": r"__shared__|tl\.load\([^)]*\bk(?:v)?_ptrs?\b",
    "kernel-fusion": r"\bfused\b|\bfuse\b",
    "cuda-event-instrumentation": r"cuda\.Event|cudaEventRecord|torch\.cuda\.Event",
}
_COMPILED = {entry_id: re.compile(pattern) for entry_id, pattern in CODE_PATTERNS.items()}


def _keyword_pattern(keywords: Sequence[str]) -> re.Pattern[str] | None:
    phrases = [k for k in keywords if len(k) >= 4]
    if not phrases:
        return None
    parts = [r"[\s_\-]*".join(re.escape(w) for w in k.split()) for k in phrases]
    return re.compile(r"(?<![A-Za-z0-9])(?:" + "|".join(parts) + r")(?![A-Za-z0-9])", re.IGNORECASE)


def present_in(entry: Any, sources: Sequence[KernelSource]) -> tuple[KernelSource, int, str] | None:
    """Where ``entry``'s technique shows in ``sources``, or None.

    Parameters
    ----------
    entry : catalog entry
        Anything with an ``id`` and, optionally, ``keywords``.
    sources : sequence of KernelSource
        The kernel sources to search (text only).

    Returns
    -------
    (KernelSource, int, str) or None
        The source, the 1-based line and that line's text of the first match: a code
        pattern of :data:`CODE_PATTERNS`, else one of the entry's keywords.
    """
    entry_id = getattr(entry, "id", "")
    pattern = _COMPILED.get(entry_id)
    if pattern is not None:
        hit = find_pattern(sources, pattern)
        if hit is not None:
            return hit
    keywords = (*getattr(entry, "keywords", ()), entry_id.replace("-", " "))
    compiled = _keyword_pattern(keywords)
    return find_pattern(sources, compiled) if compiled is not None else None


def present_ids(entries: Iterable[Any], sources: Sequence[KernelSource]) -> set[str]:
    """The ids of ``entries`` whose technique shows in ``sources`` (see :func:`present_in`).

    Parameters
    ----------
    entries : iterable of catalog entries
        A ``Catalog``, or any entries with ``id`` and ``keywords``.
    sources : sequence of KernelSource
        The kernel sources.

    Returns
    -------
    set of str
        Empty when ``sources`` is empty.
    """
    if not sources:
        return set()
    return {str(getattr(e, "id", "")) for e in entries if present_in(e, sources) is not None}

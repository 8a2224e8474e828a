"""The fixed vocabularies of the catalog: kernel families, languages, metric names.

Kernel families form a small tree: a decode-attention kernel is an attention kernel, and
an MLA decode kernel is a decode-attention kernel, so a query for ``mla-decode`` also finds
what is known about decode attention and attention in general. ``any`` sits above every
family: an entry for ``any`` applies to every kernel.
"""

from __future__ import annotations

import re

from kernelopt._errors import InputError, expected

__all__ = [
    "AXIS_FACTS",
    "DIALECTS",
    "FAMILIES",
    "FAMILY_ALIASES",
    "FAMILY_ALIAS_NOTES",
    "FAMILY_ALIAS_SHAPES",
    "FAMILY_PARENT",
    "FAMILY_SHAPES",
    "FILL_MARK",
    "LANGUAGES",
    "LANGUAGE_ALIASES",
    "METRICS",
    "SCOPES",
    "SHAPE_FACTS",
    "canonical_family_name",
    "canonical_language",
    "entry_language",
    "family_alias_note",
    "family_alias_shape",
    "family_aliases_text",
    "family_ancestors",
    "family_shape",
    "language_scopes",
    "nearest_family",
    "normalize_family",
    "shape_fact_for_axis",
]

# A placeholder the scaffold leaves for a person to fill; no valid entry holds one.
FILL_MARK = "<FILL"

# family -> parent family ("any" is the root and has no parent). A top-k reduces each row
# of n to its k largest, as a max reduces it to one (top-1 is an argmax), so it is a
# reduction; an MoE router's softmax, top-k and permutation are built around its top-k
# choice of experts per token. A column reduction sums over the rows, one result per
# column (a normalization backward's dgamma and dbeta, a bias gradient): a kernel whose
# programs each own rows must combine their shares, which a row reduction (a per-token
# amax, a softmax's max) never does. A gather moves the elements an index names and
# reduces nothing.
FAMILY_PARENT: dict[str, str] = {
    "attention": "any",
    "decode-attention": "attention",
    "mla-decode": "decode-attention",
    "softmax": "any",
    "reduction": "any",
    "topk": "reduction",
    "moe-routing": "topk",
    "column-reduction": "reduction",
    "gather": "any",
    "gemm": "any",
    "elementwise": "any",
    "normalization": "any",
    "linear-attention": "any",
}

FAMILIES: tuple[str, ...] = (*FAMILY_PARENT, "any")

# Other names of a family, read as the canonical name wherever a family is read (a query,
# `--family`, an entry's families and fundamental_for): the names users meet for a GEMM
# are PyTorch's ops (aten::mm, bmm, addmm, matmul, linear, as a torch-trace profile names
# them) and GEMV, the M = 1 case. Read in any case, with ``_`` or spaces for ``-``, as a
# family is (see `normalize_family`). Entries keep the canonical names: a file that writes
# an alias is read as the family, and written back under its canonical name.
FAMILY_ALIASES: dict[str, str] = {
    "matmul": "gemm",
    "mm": "gemm",
    "bmm": "gemm",
    "addmm": "gemm",
    "linear": "gemm",
    "gemv": "gemm",
    # torch.topk's other spelling (``top_k`` reads as ``top-k``).
    "top-k": "topk",
    # What users call the router of a mixture of experts; its expert GEMMs are ``gemm``.
    "moe": "moe-routing",
    "moe-router": "moe-routing",
    # The ops of the workload's built-in gather signature besides gather itself.
    "index-select": "gather",
    "take-along-dim": "gather",
    # A rotary embedding (RoPE) turns each pair of elements by its position's angle: every
    # element read and written once, nothing reduced.
    "rope": "elementwise",
    "rotary": "elementwise",
    "rotary-embedding": "elementwise",
    "column-sum": "column-reduction",
}

# What an alias that users also give another kernel stands for, said wherever it is read
# (`kernelopt catalog` prints it as a note; see `family_alias_note`): an MoE layer is a
# router and expert GEMMs, and ``moe`` picks the router.
FAMILY_ALIAS_NOTES: dict[str, str] = {
    "moe": "moe is read as moe-routing; an MoE layer's expert GEMMs are gemm",
}

# Kernels users name as families that have none of their own, with the nearest family and
# why (see `nearest_family`): each is (words a name holds, the family, why). A word is
# matched where no letter comes before it (``quant`` in ``per_token_fp8_quant``,
# ``fp8quant`` and ``quantization``, not in ``dequant``); the first rule that fits wins.
_NEAREST_FAMILIES: tuple[tuple[tuple[str, ...], str, str], ...] = (
    (
        ("rope", "rotary"),
        "elementwise",
        "a rotary embedding turns each pair of elements by its position's angle and "
        "reduces nothing",
    ),
    (
        ("dequant",),
        "elementwise",
        "a dequantizer scales each element by a scale it is given and reduces nothing",
    ),
    (
        ("quant",),
        "reduction",
        "a per-token or per-block quantizer reduces each row or block to its scale (its "
        "amax), then scales and casts each element; with the scale given, it is elementwise",
    ),
    (
        ("scatter", "append", "reshape-and-cache", "cache-write", "cache-store"),
        "elementwise",
        "a scatter into a (paged) cache moves each element once to the slot its index "
        "names and reduces nothing; gather's entries are for gathers",
    ),
)

# The shape facts a family's name fixes, inherited by its descendants (see `family_shape`):
# decode attention is one query token a sequence (speculative decode adds a few draft
# tokens, still far below a tile of keys). A technique standard for an ancestor whose every
# shape condition fails at these facts is not standard for the family: causal tile
# skipping, standard for attention, has no key tile past the diagonal to skip when one
# query row sees every key. Facts a query gives itself are compared, not these.
FAMILY_SHAPES: dict[str, dict[str, float]] = {"decode-attention": {"s_q": 1.0}}

# The shape facts an alias fixes beyond its family's (see `family_alias_shape`): a GEMV is
# the GEMM of one row, m = 1. Read where the standard techniques are listed, so that
# `fundamentals --family gemv` leaves out what a GEMM of one row has no use for (grouped
# tile order needs thousands of tile rows), as `--shape m=1` does for gemm.
FAMILY_ALIAS_SHAPES: dict[str, dict[str, float]] = {"gemv": {"m": 1.0}}

# Implementation languages a kernel is designed in, and a language-specific entry can be
# scoped to.
LANGUAGES: tuple[str, ...] = ("triton", "cuda", "cute-dsl", "cutile")

# Dialects an entry can be scoped to, each with the language it is written in: Gluon is
# Triton's lower-level dialect (explicit layouts, warp specialization, mbarriers), compiled
# by Triton. What a Gluon loader warp does wrong is nothing a tl.* kernel can do, so a
# query for triton leaves gluon entries out; one for gluon keeps triton's as well (see
# `language_scopes`). A dialect is no language of its own to design a kernel in.
DIALECTS: dict[str, str] = {"gluon": "triton"}

# Other spellings of a language, read as the canonical name wherever a language is read
# (a scope, a query, a ``languages/<language>/`` folder): users also write cuTile's Python
# DSL as ``cutile-dsl``, next to ``cute-dsl``. Names and aliases are read in any case
# (see `canonical_language`), except a folder's name, which the layout matches exactly:
# writers look a folder up by its name, and ``languages/Triton/`` beside the
# ``languages/triton/`` they create would split one language over two folders.
LANGUAGE_ALIASES: dict[str, str] = {"cutile-dsl": "cutile"}

# "shared" entries hold algorithmic or hardware knowledge that holds in every language.
SCOPES: tuple[str, ...] = ("shared", *LANGUAGES, *DIALECTS)

# Metric names triggers compare (all floats). kernelopt.bench computes some of them
# (RooflinePoint.metrics, TuningResult.metrics); the others come from a profiler, the
# compiler or the kernel's own launch (docs/catalog.md says which). A trigger on another
# name is allowed (lint warns) so users can add their own measurements.
METRICS: dict[str, str] = {
    "dram_pct": "achieved bytes/s over measured copy bandwidth, %",
    "tc_pct": "achieved FLOP/s over measured bf16 matmul rate, %",
    "occupancy_pct": "achieved occupancy, %",
    "arith_intensity": "FLOPs per byte moved",
    "ridge": "FLOP/byte at which the device turns compute-bound",
    "floor_pct": "roofline floor time over measured time, %",
    "launch_overhead_pct": "share of per-call time that CUDA graphs remove, %",
    "l2_hit_pct": "L2 hit rate, %",
    "regs_per_thread": "registers per thread",
    "spill_bytes": "bytes spilled to local memory per thread",
    "autotune_configs": "number of autotuning configurations searched",
    "kv_splits": "number of KV splits of a split-KV decode kernel",
    "waves": "CTAs launched over SM count",
}

# Shape facts shape conditions compare (kernelopt.workload produces them). As with
# metrics, other names are allowed and lint warns.
SHAPE_FACTS: dict[str, str] = {
    "b": "batch size (sequences per call)",
    "s_q": "query tokens per sequence (1 for decode, >1 for speculative decode)",
    "h_q": "query heads",
    "h_kv": "key/value heads",
    "seqlen_k": "key/value length per sequence",
    "seqlen_cv": "coefficient of variation of key/value lengths across a batch (0 = uniform)",
    "reduce_len": "length of the reduced axis",
    "softmax_len": "length of the softmax axis",
    "dominant_shape_share": "share (0..1) of the top shape: of time if timed, else of calls",
    "distinct_shapes": "number of distinct shapes in the workload",
    "padding_pct": "share of padded (wasted) elements after bucketing, %",
    "select_k": "positions a top-k or gather picks along its axis",
    "select_n": "length of the axis a top-k or gather picks from",
    "m": "GEMM rows of A and of the output (1 for a GEMV)",
    "n": "GEMM columns of B and of the output",
    "k": "GEMM reduction length (columns of A, rows of B)",
}

# Names an op's signature or a profile gives an axis, and the shape fact each most likely
# stands for. Shape conditions compare facts, which say what an axis means rather than
# what one op calls it: a normalization's or reduction's reduced axis (``hidden``,
# ``d_model``) is ``reduce_len``, an attention batch's KV length ``seqlen_k``. A name
# refused as a fact is pointed to its fact here (see `shape_fact_for_axis`). Names that are
# facts themselves are not listed (a GEMM's ``n`` and ``k``): they are taken as the fact.
# kernelopt.workload.shape_facts reads the FlashInfer-Bench names among these the same way.
AXIS_FACTS: dict[str, str] = {
    **dict.fromkeys(
        (
            "hidden",
            "hidden_size",
            "hidden_dim",
            "d_model",
            "dim",
            "model_dim",
            "n_cols",
            "num_cols",
            "normalized_shape",
        ),
        "reduce_len",
    ),
    **dict.fromkeys(("batch", "batch_size", "num_seqs"), "b"),
    **dict.fromkeys(("seqlen_q", "num_tokens_q", "q_len"), "s_q"),
    **dict.fromkeys(("num_heads", "num_qo_heads", "num_q_heads", "n_heads"), "h_q"),
    **dict.fromkeys(("num_kv_heads", "n_kv_heads"), "h_kv"),
    **dict.fromkeys(("seqlen", "seq_len", "kv_len", "seqlen_kv", "kv_seqlen"), "seqlen_k"),
    **dict.fromkeys(("top_k", "topk"), "select_k"),
}


def shape_fact_for_axis(name: str) -> str | None:
    """The shape fact an axis name most likely stands for (``"hidden"``: ``"reduce_len"``).

    Parameters
    ----------
    name : str
        An axis name as a signature, a profile or a person writes it; read in any case and
        with ``-`` for ``_`` (``"D-Model"`` is ``"d_model"``).

    Returns
    -------
    str or None
        A name of :data:`SHAPE_FACTS`, or None for a name :data:`AXIS_FACTS` lacks.
    """
    return AXIS_FACTS.get(name.strip().lower().replace("-", "_"))


def canonical_language(name: object, *, where: str = "language") -> str:
    """The canonical name of language ``name`` (``"cutile-dsl"`` is ``"cutile"``).

    Parameters
    ----------
    name : str
        A name in :data:`LANGUAGES` or :data:`LANGUAGE_ALIASES`, in any case
        (``"Triton"`` is ``"triton"``, ``"cuTile-DSL"`` is ``"cutile"``).
    where : str
        What the value is, named in the error message.

    Raises
    ------
    InputError
        For any other value.
    """
    if isinstance(name, str):
        # People write languages as their projects do ("Triton", "CUDA", "cuTile"); the
        # canonical names are all lower case, so case never tells two languages apart.
        key = name.lower()
        if key in LANGUAGES:
            return key
        if key in LANGUAGE_ALIASES:
            return LANGUAGE_ALIASES[key]
    aliases = ", ".join(f"{a} for {c}" for a, c in LANGUAGE_ALIASES.items())
    raise InputError(
        expected(f"a language in {', '.join(LANGUAGES)} (or {aliases})", repr(name), where=where)
    )


def entry_language(name: object, *, where: str = "language") -> str:
    """The canonical name of the language or dialect ``name`` an entry can be scoped to.

    Parameters
    ----------
    name : str
        A name :func:`canonical_language` reads, or a dialect of :data:`DIALECTS`
        (``"gluon"``), in any case.
    where : str
        What the value is, named in the error message.

    Raises
    ------
    InputError
        For any other value.
    """
    if isinstance(name, str) and name.lower() in DIALECTS:
        return name.lower()
    try:
        return canonical_language(name, where=where)
    except InputError:
        aliases = ", ".join(f"{a} for {c}" for a, c in LANGUAGE_ALIASES.items())
        names = ", ".join((*LANGUAGES, *DIALECTS))
        raise InputError(
            expected(f"a language in {names} (or {aliases})", repr(name), where=where)
        ) from None


def language_scopes(language: object) -> tuple[str, ...]:
    """The scopes of the entries a query for ``language`` keeps, nearest first.

    Parameters
    ----------
    language : str
        A language or dialect, read as :func:`entry_language` reads it.

    Returns
    -------
    tuple of str
        ``language``, the language it is a dialect of, and ``"shared"``: ``("gluon",
        "triton", "shared")`` for ``"gluon"``, ``("triton", "shared")`` for ``"triton"``
        (a gluon entry is not offered to a tl.* kernel).

    Raises
    ------
    InputError
        For a name that is neither.
    """
    name = entry_language(language)
    parent = DIALECTS.get(name)
    return (name, parent, "shared") if parent else (name, "shared")


def normalize_family(family: str) -> str:
    """``family`` in the catalog's spelling: lower case, ``-`` for ``_`` and spaces, an
    alias of :data:`FAMILY_ALIASES` read as its family.

    ``"mla_decode"`` (the op name a workload trace uses) and ``"MLA decode"`` are
    ``"mla-decode"``; ``"MatMul"`` and ``"gemv"`` are ``"gemm"``.

    Raises
    ------
    InputError
        If ``family`` is not a string.
    """
    if not isinstance(family, str):
        raise InputError(expected("a kernel family name (str)", repr(family), where="family"))
    return canonical_family_name("-".join(family.strip().lower().replace("_", " ").split()))


def canonical_family_name(name: str) -> str:
    """The family an alias names (``"matmul"`` is ``"gemm"``); any other name unchanged.

    Unlike :func:`normalize_family`, the name is taken as written: an entry's fields hold
    kebab-case names, which this maps without reading case or separators.
    """
    return FAMILY_ALIASES.get(name, name)


def family_alias_note(family: object) -> str | None:
    """What the family name ``family`` is read as, where it could mean another kernel.

    Parameters
    ----------
    family : str
        A family or alias as a person writes it, read as :func:`normalize_family` reads it
        (``"MoE"`` is ``"moe"``).

    Returns
    -------
    str or None
        The note of :data:`FAMILY_ALIAS_NOTES` (``"moe is read as moe-routing; an MoE
        layer's expert GEMMs are gemm"``), or None for any other name.
    """
    if not isinstance(family, str):
        return None
    return FAMILY_ALIAS_NOTES.get("-".join(family.strip().lower().replace("_", " ").split()))


def family_alias_shape(family: object) -> dict[str, float]:
    """The shape facts the family name ``family`` fixes as an alias (:data:`FAMILY_ALIAS_SHAPES`).

    Parameters
    ----------
    family : str
        A family or alias as a person writes it, read as :func:`family_alias_note` reads
        it (``"GEMV"`` is ``"gemv"``).

    Returns
    -------
    dict of str to float
        ``{"m": 1.0}`` for ``gemv``; empty for any other name (``gemm``, ``matmul``) or a
        non-str.
    """
    if not isinstance(family, str):
        return {}
    name = "-".join(family.strip().lower().replace("_", " ").split())
    return dict(FAMILY_ALIAS_SHAPES.get(name, {}))


def nearest_family(family: object) -> tuple[str, str] | None:
    """The nearest family for a kernel named as a family the catalog lacks, and why.

    Users name their kernel where a family goes (``--family kv_cache_append``,
    ``--family fp8_quant``); the catalog's families are kinds of kernels, and these
    kernels have none of their own. Names that are families or aliases get None.

    Parameters
    ----------
    family : str
        The name given, read in any case and with ``_`` or spaces for ``-``.

    Returns
    -------
    tuple of (str, str) or None
        The family and why, e.g. ``("elementwise", "a rotary embedding turns ...")`` for
        ``"apply_rotary_emb"``; None when no rule fits.
    """
    if not isinstance(family, str):
        return None
    name = "-".join(family.strip().lower().replace("_", " ").split())
    if name in FAMILY_PARENT or name in FAMILY_ALIASES or name == "any":
        return None
    for words, nearest, why in _NEAREST_FAMILIES:
        if any(re.search(rf"(?<![a-z]){re.escape(word)}", name) for word in words):
            return nearest, why
    return None


def family_aliases_text() -> str:
    """The aliases in words, for messages: ``"matmul, mm, ... for gemm"``."""
    by_family: dict[str, list[str]] = {}
    for alias, family in FAMILY_ALIASES.items():
        by_family.setdefault(family, []).append(alias)
    return "; ".join(f"{', '.join(aliases)} for {family}" for family, aliases in by_family.items())


def family_shape(family: str) -> dict[str, float]:
    """The shape facts ``family``'s name fixes, its own and its ancestors' (:data:`FAMILY_SHAPES`).

    Parameters
    ----------
    family : str
        A kernel family name, read as :func:`family_ancestors` reads it.

    Returns
    -------
    dict of str to float
        ``{"s_q": 1.0}`` for ``mla-decode`` and ``decode-attention``; empty for a family
        whose name fixes no shape (``attention``, ``gemm``). A descendant's fact wins over
        an ancestor's.
    """
    facts: dict[str, float] = {}
    for name in reversed(family_ancestors(family)):
        facts.update(FAMILY_SHAPES.get(name, {}))
    return facts


def family_ancestors(family: str) -> tuple[str, ...]:
    """Return ``family`` followed by its ancestors up to ``"any"``.

    Parameters
    ----------
    family : str
        A kernel family name, in any case and with ``_`` or spaces for ``-``
        (``"mla_decode"`` is ``"mla-decode"``, the op name a workload trace uses); unknown
        names are treated as direct children of ``any``.

    Returns
    -------
    tuple of str
        E.g. ``("mla-decode", "decode-attention", "attention", "any")``.
    """
    name = normalize_family(family)
    chain = [name]
    seen = {name}
    while chain[-1] != "any":
        parent = FAMILY_PARENT.get(chain[-1], "any")
        if parent in seen:  # defensive: the table is a tree, but never loop
            break
        chain.append(parent)
        seen.add(parent)
    return tuple(chain)

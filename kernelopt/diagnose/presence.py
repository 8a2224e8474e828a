"""Whether a catalog technique already shows in a kernel's source, read as text.

One check serves every part of kernelopt that must not recommend what a kernel already
does: the missing-fundamental and wrong-bottleneck detectors, the shortcut check, and the
profile hand-off built from benchmark rows. A technique is present when the source shows
its code pattern (``num_splits``, ``m_i``/``l_i``, ``make_tensor_descriptor``, a grid-stride
loop over tiles, ...) or names it with one of its catalog keywords (four letters or more).
Nothing is imported or run.

A match inside a comment or docstring does not count where the words around it say the
kernel does not do the technique or only plans it ("# TODO: split-KV", "no split-KV here",
"# could use persistent buffers", "split-KV would help"): the search goes on to the next
match. The words are few and listed beside the code: those of a plan or a guess ("try",
"could", "would", "later", ...) govern their clause (up to a comma, colon, semicolon,
parenthesis, "but", or the end of a ``#`` / ``//`` comment line); ``TODO``, ``FIXME``,
``XXX`` and labels such as "next:" their sentence; "no", "not", "without" and the like what
follows them in the clause, and "is not" also the name just before it; a "no" reaches the
later items of a list that ends in "or" ("no split-KV, TMA or persistent buffers"). Comments and
docstrings are told from code by :func:`kernelopt.diagnose.source.prose_spans`. A line
comment that is itself a statement (``# m_i = tl.maximum(m_i, s)``) is code taken out of
the kernel and does not count either. Code, and prose that states what the kernel does,
still count.

:func:`one_tile_row` tells where online softmax has nothing to do: a Triton softmax kernel
that reads its whole row in one tile, with no loop that carries a value from one tile to the
next. :func:`causal_mask` tells where a kernel masks causally, and :func:`needless_in` why a
kernel has no use for a technique (online softmax for a row read in one tile, causal tile
skipping for a kernel with no causal mask). :func:`partly_in` tells where a technique made
of two halves shows one: causal tile skipping's key loop that stops at the diagonal, without
the mask confined to the tiles the diagonal crosses.
"""

from __future__ import annotations

import ast
import functools
import re
from bisect import bisect_right
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import attrs

from kernelopt.diagnose.source import find_pattern, parse_python, prose_spans
from kernelopt.experiments.log import KernelSource

__all__ = [
    "CODE_PATTERNS",
    "ROW_TILE_BOUND",
    "Partly",
    "RecordedRows",
    "causal_mask",
    "names_entry",
    "needless_in",
    "one_tile_row",
    "partly_in",
    "present_ids",
    "present_in",
]

Hit = tuple[KernelSource, int, str]
"""Where something shows: the source, the 1-based line and that line's text."""

# One argument of a call on one line, with at most one level of nested parentheses.
_ARG = r"[^,()\n]*(?:\([^()\n]*\)[^,()\n]*)*"
# Names people give the SM count (``NUM_SMS``, ``num_sms``, ``props.multi_processor_count``).
_SMS = r"(?:NUM_SMS|num_sms|n_sms|N_SMS|\w*sm_count\w*|\w*SM_COUNT\w*|multi_processor_count)"
# Names people give the rows of a query tile (``BLOCK_M``, ``BLOCK_SIZE_M``, ``kBlockM``).
_BLOCK_M = r"\w*(?:BLOCK_(?:SIZE_)?M|block_(?:size_)?m|BlockM)\w*"
# Code that shows a technique is in a kernel even when no comment names it.
CODE_PATTERNS: dict[str, str] = {
    # Besides the usual names (``m_i``/``l_i``, ``alpha = tl.exp(...)``), the rescale
    # itself, whatever its names: a running max taken with ``tl.maximum`` and, shortly
    # after, the old sum or accumulator scaled by the exp of a difference of two names
    # (``nm = tl.maximum(m, bm); s = s * tl.exp(m - nm) + ...``).
    "online-softmax": (
        r"\bm_i\b[\s\S]{0,400}\bl_i\b|\brunning[_ ]max\b"
        r"|alpha\s*=\s*tl\.exp2?\(|tl\.maximum\(\s*m_i"
        r"|tl\.maximum\([\s\S]{0,400}?\*\s*tl\.(?:math\.)?exp2?\(\s*\(?\s*[A-Za-z_]\w*\s*-\s*"
        r"[A-Za-z_]\w*\s*[)*]"
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
    # The on-band stage of a causal loop in two stages: the key tiles from the query tile's
    # start to its end (``lo, hi = start_m * BLOCK_M, (start_m + 1) * BLOCK_M``); the
    # off-band stage before it runs unmasked.
    "causal-tile-skipping": (
        rf"\b(\w+)\s*\*\s*({_BLOCK_M})\s*,\s*\(\s*\1\s*\+\s*1\s*\)\s*\*\s*\2\b"
    ),
}
_COMPILED = {entry_id: re.compile(pattern) for entry_id, pattern in CODE_PATTERNS.items()}


def _keyword_pattern(keywords: Sequence[str]) -> re.Pattern[str] | None:
    phrases = [k for k in keywords if len(k) >= 4]
    if not phrases:
        return None
    parts = [r"[\s_\-]*".join(re.escape(w) for w in k.split()) for k in phrases]
    return re.compile(r"(?<![A-Za-z0-9])(?:" + "|".join(parts) + r")(?![A-Za-z0-9])", re.IGNORECASE)


# Where a comment or docstring divides into sentences: at ". ", "! ", "? ", and at a line
# break before a capital, a bullet or a blank line (after any "#", "//" or "*" marker); into
# clauses also at punctuation, a dash, "but"/"however"/..., and "instead of"/"rather than",
# which negate the clause they open. A line break inside a run of "#" or "//" comments ends
# a clause too: such lines are remarks of their own more often than one sentence wrapped.
# The whitespace before the optional marker is one unambiguous run, so a long indent costs
# one pass.
_BOUNDARY = re.compile(
    r"(?P<sentence>[.!?](?=\s|\Z)"
    r"|\n(?=[ \t]*(?:(?:#+|//+|\*(?!/))[ \t]*)?(?:\n|\Z|[A-Z]|[-*+\u2022][ \t]|\d+[.)][ \t])))"
    r"|(?P<instead>(?i:\binstead\s+of\b|\brather\s+than\b))"
    r"|(?P<clause>[,;:()\[\]{}\u2013\u2014]|\s--?\s"
    r"|(?i:\b(?:but|however|whereas|although|though|while)\b))"
    r"|(?P<line>\n)"
)
# The words that make a mention in prose say "not done" or "not yet", kept few so that a
# comment describing the code is not read as one that denies it:
# - todo: TODO, FIXME, XXX, TBD govern their sentence, wherever they stand in it;
# - label: "next:", "later:", "ideas:", "future:", "maybe:", "planned:" govern the rest of
#   their sentence;
# - plan: the words of a plan or a guess (try, could, would, should, might, maybe, perhaps,
#   planned, consider, "next step", "for later", "later" closing its clause) govern their
#   whole clause;
# - denial: "is not", "isn't", "was never", ... govern what follows them in their clause and
#   the name just before them ("split-KV is not used"), not the whole clause ("TMA tiles and
#   a QK^T that is not replicated" still states TMA);
# - after: "no", "not", "never", "neither", "nor", "without", "cannot", "don't", ... govern
#   what follows them in their clause: "split-KV, so no second pass" still states split-KV.
_NEGATOR = re.compile(
    r"(?P<todo>\b(?:TODO|FIXME|XXX|TBD)\b)"
    r"|(?P<label>\b(?:next(?:\s+steps?)?|later|future|ideas?|maybe|planned|plans?)\s*:)"
    r"|(?P<denial>\b(?:is|are|was|were|be|been)\s+(?:not|never)\b"
    r"|\b(?:is|are|was|were)n['\u2019]t\b)"
    r"|(?P<plan>\b(?:try|trying|could|would|should|might|maybe|perhaps|planned|planning|consider)\b"
    r"|\bnext\s+steps?\b|\bfor\s+later\b"
    r"|\blater\b(?=[ \t]*(?:[.!?,;:)]|\n|\*/|\"\"\"|'''|\Z)))"
    r"|(?P<after>\b(?:no|not|never|neither|nor|without|cannot)\b(?!-op\b)|\b\w+n['\u2019]t\b)",
    re.IGNORECASE,
)
_FAR = 1 << 62  # an offset past any text: "no such word"
# A negated list ("no split-KV, TMA or persistent buffers") is cut into clauses at its
# commas; the negation reaches its later items when each is a short phrase of the same
# sentence, none opens with a conjunction ("no padding, so TMA ..." states TMA), and the
# last joins with "or"/"nor" ("no padding, TMA tiles and a fused merge" lists what the
# kernel does, so "and" does not extend it).
_LIST_ITEM_WORDS = 6
_LIST_TAIL = re.compile(r"\b(?:or|nor)\b", re.IGNORECASE)
_NOT_AN_ITEM = re.compile(
    r"\s*(?:so|then|and|which|that|because|since|as|if|when|where|thus|hence)\b", re.IGNORECASE
)
_COMMENT_LINE = re.compile(r"[^\n]+")
# What may stand between a name and the "is not" that denies it: a word or two ("split-KV
# path is not used"), no punctuation.
_SUBJECT_GAP = re.compile(r"[ \t]*(?:[\w\-]+[ \t]+){0,2}")
# A line comment whose text is a statement: code taken out of the kernel, not said of it
# ("# m_i = tl.maximum(m_i, s)", "// tl.store(out, acc);", "# for k in range(0, n, BLOCK):").
# An assignment (``=`` not ``==``, after a name, an attribute or a subscript), a call that
# is the whole line, or a loop header. Prose rarely opens with a bare name and ``=``.
_COMMENTED_CODE = re.compile(
    r"[ \t]*(?:#+|//+)[ \t]*(?:"
    r"[A-Za-z_][\w.]*(?:\[[^\]\n]*\])?(?:[ \t]*,[ \t]*[A-Za-z_][\w.]*)*"
    r"[ \t]*(?:[-+*/%&|^]|<<|>>|//|\*\*)?=(?!=)[ \t]*\S"
    r"|[A-Za-z_][\w.]*\([^\n]*\)[ \t]*;?[ \t]*$"
    r"|for[ \t]+\w+[ \t]+in[ \t][^\n]*:[ \t]*$|for[ \t]*\([^\n]*;"
    r")"
)


@attrs.define
class _Remarks:
    """Which clauses of one source's comments and docstrings deny or defer what they name.

    Clauses are kept in text order (``starts``/``ends``); per clause, where its first
    "no"-like word stands (``after``) and the first start and last end of the words that
    govern all of it (``spread``); per sentence (``sentence`` maps a clause to one), the
    first label and the spread of its TODO-like markers; where each "is not" stands
    (``denials``); the lines of line comments that hold code taken out (``dead``, start and
    end). A negating word inside the match itself ("no padding", "without flushing" are
    catalog keywords) does not deny it.
    """

    starts: list[int] = attrs.Factory(list)
    ends: list[int] = attrs.Factory(list)
    after: list[int] = attrs.Factory(list)
    spread: list[tuple[int, int]] = attrs.Factory(list)
    sentence: list[int] = attrs.Factory(list)
    label: list[int] = attrs.Factory(list)
    todo: list[tuple[int, int]] = attrs.Factory(list)
    denials: list[int] = attrs.Factory(list)
    dead: list[tuple[int, int]] = attrs.Factory(list)

    def open(self, at: int, *, sentence: bool, after: int = _FAR) -> None:
        """Start a clause at ``at`` (and a sentence when ``sentence``)."""
        if self.ends and self.ends[-1] > at:
            self.ends[-1] = at
        if sentence:
            self.label.append(_FAR)
            self.todo.append((_FAR, -1))
        self.starts.append(at)
        self.ends.append(_FAR)
        self.after.append(after)
        self.spread.append((_FAR, -1))
        self.sentence.append(len(self.label) - 1)

    def denies(self, text: str, start: int, end: int) -> bool:
        """Whether a match at ``start:end`` of ``text`` lies in prose that denies or defers
        it."""
        k = bisect_right(self.dead, (start, _FAR)) - 1
        if k >= 0 and start < self.dead[k][1]:
            return True  # code commented out is not in the kernel
        i = bisect_right(self.starts, start) - 1
        if i < 0 or start >= self.ends[i]:
            return False  # code
        first, last = self.spread[i]
        if self.after[i] < start or first < start or last > end:
            return True
        j = bisect_right(self.denials, end - 1)
        if j < len(self.denials) and self.denials[j] < self.ends[i]:
            gap = _SUBJECT_GAP.match(text, end, self.denials[j])
            if gap is not None and gap.end() == self.denials[j]:
                return True
        s = self.sentence[i]
        first, last = self.todo[s]
        return self.label[s] < start or first < start or last > end


@functools.lru_cache(maxsize=32)
def _remarks(text: str, language: str) -> _Remarks:
    remarks = _Remarks()
    for span_start, span_end, lines in prose_spans(
        KernelSource(path="", text=text, language=language)
    ):
        first = len(remarks.starts)
        if lines:
            for line in _COMMENT_LINE.finditer(text, span_start, span_end):
                if _COMMENTED_CODE.match(line.group()):
                    remarks.dead.append((line.start(), line.end()))
        remarks.open(span_start, sentence=True)
        for cut in _BOUNDARY.finditer(text, span_start, span_end):
            kind = cut.lastgroup
            if kind == "line" and not lines:
                continue  # a docstring's or block comment's lines wrap its sentences
            after = cut.start() if kind == "instead" else _FAR
            remarks.open(cut.end(), sentence=kind == "sentence", after=after)
        remarks.ends[-1] = span_end
        for word in _NEGATOR.finditer(text, span_start, span_end):
            i = bisect_right(remarks.starts, word.start(), first) - 1
            s = remarks.sentence[i]
            if word.lastgroup in ("after", "denial"):
                remarks.after[i] = min(remarks.after[i], word.start())
                if word.lastgroup == "denial":
                    remarks.denials.append(word.start())
            elif word.lastgroup == "plan":
                remarks.spread[i] = (min(remarks.spread[i][0], word.start()), word.end())
            elif word.lastgroup == "label":
                remarks.label[s] = min(remarks.label[s], word.start())
            else:
                remarks.todo[s] = (min(remarks.todo[s][0], word.start()), word.end())
        _extend_negated_lists(remarks, text, first)
    return remarks


def _extend_negated_lists(remarks: _Remarks, text: str, first: int) -> None:
    """Carry a clause's "no"/"without" over the later items of its list (clauses from
    ``first`` on, one comment or docstring)."""
    count = len(remarks.starts)

    def joined(j: int) -> bool:  # clause j ends at a comma that opens clause j + 1
        return j + 1 < count and text[remarks.starts[j + 1] - 1] == ","

    # tail[j]: the last item of the "or"-list that clause j begins, or -1. From the right,
    # so each clause is read once however long the list (and clauses joined by a comma
    # share a sentence: a comma does not end one).
    tail = [-1] * (count + 1)
    for j in range(count - 1, first, -1):
        item = text[remarks.starts[j] : remarks.ends[j]]
        if len(item.split()) > _LIST_ITEM_WORDS or _NOT_AN_ITEM.match(item):
            continue
        if _LIST_TAIL.search(item):
            tail[j] = j
        elif joined(j):
            tail[j] = tail[j + 1]
    done = first
    for i in range(first, count - 1):
        if remarks.after[i] == _FAR or not joined(i) or tail[i + 1] < 0:
            continue
        for k in range(max(i + 1, done + 1), tail[i + 1] + 1):
            # Before the item's first character: every match in it is governed.
            remarks.after[k] = min(remarks.after[k], remarks.starts[k] - 1)
        done = max(done, tail[i + 1])


def _denied(source: KernelSource, start: int, end: int) -> bool:
    """Whether a comment or docstring of ``source`` denies or defers its match at
    ``start:end``."""
    return _remarks(source.text, source.language).denies(source.text, start, end)


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
        pattern of :data:`CODE_PATTERNS`, else one of the entry's keywords, else, for a
        technique made of two halves (causal tile skipping: the key loop bounded at the
        diagonal, and that loop in two stages), its first half where both show. A match in a
        comment or docstring that says the kernel does not do the technique, or plans it
        ("# TODO: split-KV", "no split-KV here"), is passed over.
    """
    entry_id = getattr(entry, "id", "")
    pattern = _COMPILED.get(entry_id)
    if pattern is not None:
        hit = find_pattern(sources, pattern, _denied)
        if hit is not None:
            return hit
    keywords = (*getattr(entry, "keywords", ()), entry_id.replace("-", " "))
    compiled = _keyword_pattern(keywords)
    hit = find_pattern(sources, compiled, _denied) if compiled is not None else None
    if hit is None and entry_id in _HALVES:
        first, second = _HALVES[entry_id]
        hit = first.find(sources)
        if hit is not None and second.find(sources) is None:
            hit = None
    return hit


def names_entry(entry: Any, text: str) -> bool:
    """Whether ``text`` (an experiment's title) names ``entry``'s technique: one of its
    catalog keywords of four letters or more, or its id in words.

    Parameters
    ----------
    entry : catalog entry
        Anything with an ``id`` and, optionally, ``keywords``.
    text : str
        The words to search.

    Returns
    -------
    bool
        True on a whole-word match (case ignored).
    """
    entry_id = str(getattr(entry, "id", ""))
    compiled = _keyword_pattern((*getattr(entry, "keywords", ()), entry_id.replace("-", " ")))
    return compiled is not None and compiled.search(text) is not None


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


# What makes a Triton function a softmax over what it loads: a load, the row's max and sum,
# and an exponential (``tl.exp``, ``tl.exp2``, ``tl.math.exp``, ``libdevice.exp``, ...).
_SOFTMAX_CALLS = frozenset({"tl.load", "tl.max", "tl.sum"})
_EXP = frozenset({"exp", "exp2"})


def _calls(function: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.Call]:
    """Every call in ``function``, nested calls and those of inner loops included."""
    return [node for node in ast.walk(function) if isinstance(node, ast.Call)]


def _bound_names(node: ast.AST) -> set[str]:
    """The names an assignment, augmented assignment or loop header binds."""
    if isinstance(node, ast.Assign):
        targets: list[ast.expr] = list(node.targets)
    elif isinstance(node, (ast.AugAssign, ast.AnnAssign, ast.For, ast.AsyncFor)):
        targets = [node.target]
    else:
        return set()
    return {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}


def _carries(function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Whether a loop of ``function`` rebinds a name bound before it (a parameter or an
    earlier assignment): a value that flows from one iteration to the next, as a running
    max, a sum or an accumulator over the tiles of a row does. A loop over whole rows
    binds its names afresh each time."""
    arguments = function.args
    parameters = {a.arg for a in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs)}
    loops = [n for n in ast.walk(function) if isinstance(n, (ast.For, ast.AsyncFor, ast.While))]
    for loop in loops:
        before = set(parameters)
        for node in ast.walk(function):
            if getattr(node, "lineno", loop.lineno) < loop.lineno:
                before |= _bound_names(node)
        for node in ast.walk(loop):
            if node is loop:
                continue
            if _bound_names(node) & before:
                return True
    return False


def one_tile_row(sources: Sequence[KernelSource]) -> tuple[KernelSource, int, str] | None:
    """Where a softmax kernel of ``sources`` reads its whole row in one tile, or None.

    Online softmax saves a second pass over a row too long for one tile; a kernel that
    loads the row once (``BLOCK_SIZE = triton.next_power_of_2(n_cols)``, one ``tl.load``,
    ``tl.max`` and ``tl.sum`` over it) has no second pass to save. Read from Python
    sources: a softmax kernel is a function that calls ``tl.load``, ``tl.max``, ``tl.sum``
    and an exponential. The row is in one tile when no function that calls ``tl`` has a
    loop carrying a value across iterations (a loop over rows does not; a loop over the
    tiles of a row, or over the keys of attention, does). Sources that define a kernel
    but cannot be read so (another language, Python that does not parse) leave the answer
    None.

    Parameters
    ----------
    sources : sequence of KernelSource
        The kernel sources (text only; nothing is imported or run).

    Returns
    -------
    (KernelSource, int, str) or None
        The source, the 1-based line and that line's text of the first softmax kernel's
        first ``tl.load``; None when no softmax kernel shows, or any kernel loops over
        tiles.
    """
    first: tuple[KernelSource, int, str] | None = None
    for source in sources:
        if source.is_diff:
            continue
        if source.language != "python":
            if source.defines_kernel:
                return None  # a CUDA or OpenCL kernel's loops are not read here
            continue
        module = parse_python(source.text)
        if module is None:
            if source.defines_kernel:
                return None  # a kernel that does not parse may loop over tiles
            continue
        lines = source.text.split("\n")
        for function in ast.walk(module):
            if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            calls = _calls(function)
            names = [ast.unparse(call.func) for call in calls]
            if not any(name.startswith("tl.") for name in names):
                continue  # host code: its loops time or check the kernel
            if _carries(function):
                return None
            if (
                first is None
                and set(names) >= _SOFTMAX_CALLS
                and any(name.rsplit(".", 1)[-1] in _EXP for name in names)
            ):
                load = min(c.lineno for c, n in zip(calls, names, strict=True) if n == "tl.load")
                first = (source, load, lines[load - 1].strip())
    return first


# What makes a kernel causal in its code: a flag or compile-time switch named for it
# (``IS_CAUSAL``, ``causal: bool``, ``is_causal=True``), in any case.
_CAUSAL_NAME = re.compile(r"\w*causal\w*", re.IGNORECASE)
# The end of a query tile as a bound of its key loop: ``(start_m + 1) * BLOCK_M``, in a
# ``tl.minimum(seqlen_k, (pid_m + 1) * BLOCK_M + shift)`` or a CUDA ``min(...)``.
_DIAGONAL_BOUND = re.compile(rf"\(\s*\w+\s*\+\s*1\s*\)\s*\*\s*{_BLOCK_M}\b")
_ROW, _COLUMN = "row", "column"


def _in_prose(source: KernelSource, start: int, _end: int) -> bool:
    """Whether offset ``start`` of ``source`` lies in a comment or docstring."""
    spans = _prose_starts(source.text, source.language)
    i = bisect_right(spans[0], start) - 1
    return i >= 0 and start < spans[1][i]


@functools.lru_cache(maxsize=32)
def _prose_starts(text: str, language: str) -> tuple[list[int], list[int]]:
    spans = prose_spans(KernelSource(path="", text=text, language=language))
    return [s for s, _, _ in spans], [e for _, e, _ in spans]


def _broadcast(node: ast.AST, names: dict[str, set[str]]) -> set[str]:
    """Which tile axes ``node`` is spread along: ``x[:, None]`` a row (one value a query
    row), ``x[None, :]`` a column (one a key), and the names bound to such expressions."""
    axes: set[str] = set()
    for part in ast.walk(node):
        if isinstance(part, ast.Name):
            axes |= names.get(part.id, set())
        if not isinstance(part, ast.Subscript) or not isinstance(part.slice, ast.Tuple):
            continue
        items = part.slice.elts
        if len(items) != 2:
            continue
        kinds = tuple(
            "none"
            if isinstance(i, ast.Constant) and i.value is None
            else "all"
            if isinstance(i, ast.Slice)
            else "other"
            for i in items
        )
        if kinds == ("all", "none"):
            axes.add(_ROW)
        elif kinds == ("none", "all"):
            axes.add(_COLUMN)
    return axes


def _position_compare(function: ast.FunctionDef | ast.AsyncFunctionDef) -> ast.Compare | None:
    """The first comparison in ``function`` of a value a query row has with one a key has
    (``offs_m[:, None] >= offs_n[None, :]``, ``cols[None, :] <= rows[:, None] + shift``,
    or names bound to them): a mask over positions, as a causal mask is."""
    names: dict[str, set[str]] = {}
    nodes = sorted(
        (n for n in ast.walk(function) if isinstance(n, (ast.Assign, ast.Compare))),
        key=lambda n: (n.lineno, n.col_offset),
    )
    for node in nodes:
        if isinstance(node, ast.Assign):
            axes = _broadcast(node.value, names)
            for name in _bound_names(node):
                names[name] = axes
            continue
        # One side per query row, another per key: a tile-wide value on either side (the
        # scores, a loaded tile) compared with a row's max is no mask over positions.
        sides = [_broadcast(side, names) for side in (node.left, *node.comparators)]
        if {_ROW} in sides and {_COLUMN} in sides:
            return node
    return None


def _python_kernels(
    sources: Sequence[KernelSource],
) -> list[tuple[KernelSource, ast.Module]] | None:
    """The parsed Python sources of ``sources``, or None when a kernel among them cannot be
    read so (another language, or Python that does not parse)."""
    parsed = []
    for source in sources:
        if source.is_diff:
            continue
        module = parse_python(source.text) if source.language == "python" else None
        if module is None:
            if source.defines_kernel:
                return None
            continue
        parsed.append((source, module))
    return parsed


def causal_mask(sources: Sequence[KernelSource]) -> Hit | None:
    """Where a kernel of ``sources`` masks causally, or None.

    A causal mask shows in code (comments and docstrings do not count) as a name with
    "causal" in it (a flag, a compile-time switch, a keyword argument), or, in Python, as a
    comparison of a value per query row with one per key (``offs_m[:, None] >=
    offs_n[None, :]``, ``cols[None, :] <= offs_m[:, None] + shift``, or names bound to such
    expressions in the same function).

    Parameters
    ----------
    sources : sequence of KernelSource
        The kernel sources (text only; nothing is imported or run).

    Returns
    -------
    (KernelSource, int, str) or None
        The source, the 1-based line and that line's text of the first sign.
    """
    hit = find_pattern(sources, _CAUSAL_NAME, _in_prose)
    if hit is not None:
        return hit
    for source, module in _python_kernels(sources) or ():
        lines = source.text.split("\n")
        for function in ast.walk(module):
            if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
                compare = _position_compare(function)
                if compare is not None:
                    return source, compare.lineno, lines[compare.lineno - 1].strip()
    return None


def _no_causal_mask(sources: Sequence[KernelSource]) -> str | None:
    """Why causal tile skipping has nothing to skip in ``sources``: no causal mask shows in
    kernels that could all be read; None where one shows or a kernel could not be read."""
    parsed = _python_kernels(sources)
    if not parsed or causal_mask(sources) is not None:
        return None
    paths = ", ".join(dict.fromkeys(source.path for source, _ in parsed))
    return (
        "the kernel shows no causal mask (no causal flag and no comparison of query and key "
        f"positions in {paths}): no key tile is wholly masked, so none can be skipped"
    )


def _one_tile_softmax(sources: Sequence[KernelSource]) -> str | None:
    """Why online softmax has no second pass to fold in ``sources``, or None."""
    row = one_tile_row(sources)
    if row is None:
        return None
    return f"the kernel reads each row in one tile ({row[0].path}:{row[1]})"


ROW_TILE_BOUND = 4096
"""The longest softmax row, in elements, taken to fit one tile where the kernel's block
cannot be read (no block set to a number in its code, or a block sized to the row with
``triton.next_power_of_2``). A 4096-element float32 row spread over Triton's default 4
warps is 32 registers a thread, well inside the 255 a thread may hold beside the
exponentials and the two reductions; rows longer than that (a large vocabulary, long key
sequences) are the ones the catalog's online softmax is for."""


@attrs.frozen
class RecordedRows:
    """The softmax row lengths a workload profile recorded for one op's calls.

    Parameters
    ----------
    op : str
        The op, as the profile names it.
    axis : str
        The axis the softmax runs along (a reduced axis, ``n``, ``experts``).
    least, most : float
        The shortest and longest row recorded.
    path : str
        The profile, relative to the log's root.
    """

    op: str
    axis: str
    least: float
    most: float
    path: str


# A block size set in code: ``BLOCK_N = 64``, ``BLOCK_N: tl.constexpr = 64``, a launch's
# ``BLOCK=256``, an autotune config's ``"BLOCK_N": 128``, ``block_size = ...``, and the
# value up to the end of its argument or line.
_BLOCK_NAME = r"\w*BLOCK\w*|\bblock_size\w*|\bkBlock\w*"
_BLOCK_SET = re.compile(
    rf"[\"']?\b(?P<name>{_BLOCK_NAME})\b[\"']?[ \t]*(?::[ \t]*[\w.]+[ \t]*)?"
    r"(?<![=!<>])(?:=|:)(?!=)[ \t]*(?P<value>[^\n]*)"
    rf"|#[ \t]*define[ \t]+(?P<macro>{_BLOCK_NAME})[ \t]+(?P<number>\d+)"
)
_INTEGER = re.compile(r"(?<![\w.])\d+(?![\w.])")


def _argument(value: str) -> str:
    """``value`` up to the comma or closing bracket that ends it at its own depth."""
    depth = 0
    for index, char in enumerate(value):
        if char in "([{":
            depth += 1
        elif char in ")]}":
            if depth == 0:
                return value[:index]
            depth -= 1
        elif char in ",;" and depth == 0:
            return value[:index]
    return value


def _row_blocks(sources: Sequence[KernelSource]) -> tuple[list[tuple[int, Hit]], Hit | None]:
    """The block sizes the code of ``sources`` sets to a number (the least number in the
    value: ``min(triton.next_power_of_2(n), 1024)`` caps the block at 1024), each with
    where; and where a block is sized to the row (``triton.next_power_of_2(n)``) with no
    number, or None."""
    numbered: list[tuple[int, Hit]] = []
    to_row: Hit | None = None
    for source in sources:
        if source.is_diff:
            continue
        lines = source.text.split("\n")
        for match in _BLOCK_SET.finditer(source.text):
            if _in_prose(source, match.start(), match.end()):
                continue
            line = source.text.count("\n", 0, match.start()) + 1
            hit = (source, line, lines[line - 1].strip())
            value = match.group("number") or _argument(match.group("value") or "")
            numbers = [int(n) for n in _INTEGER.findall(value)]
            if numbers:
                numbered.append((min(numbers), hit))
            elif "next_power_of_2" in value and to_row is None:
                to_row = hit
    return numbered, to_row


def _recorded_text(rows: Sequence[RecordedRows]) -> str:
    """What ``rows`` recorded, in words: ``"n is 8 to 256 in every call recorded
    (experiments/workload_profile.md)"``; ops named where there are several."""
    many = len({row.op for row in rows}) > 1
    parts = []
    for row in rows:
        least, most = (f"{v:g}" for v in (row.least, row.most))
        span = least if least == most else f"{least} to {most}"
        parts.append(f"{row.op}: {row.axis} is {span}" if many else f"{row.axis} is {span}")
    paths = ", ".join(dict.fromkeys(row.path for row in rows))
    return f"{'; '.join(parts)} in every call recorded ({paths})"


def _rows_fit_one_tile(sources: Sequence[KernelSource], rows: Sequence[RecordedRows]) -> str | None:
    """Why online softmax has nothing to fold where the recorded rows all fit one block:
    the smallest block the kernel sets to a number, or :data:`ROW_TILE_BOUND` where it
    sets none (or sizes one to the row); None where a recorded row is longer."""
    if not rows:
        return None
    numbered, to_row = _row_blocks(sources)
    longest = max(row.most for row in rows)
    recorded = _recorded_text(rows)
    if numbered:
        block, (source, line, _text) = min(numbered, key=lambda pair: pair[0])
        if to_row is None or block <= ROW_TILE_BOUND:
            if longest > block:
                return None
            return (
                f"every row fits one tile: {recorded}, none longer than the kernel's smallest "
                f"block, {block} ({source.path}:{line})"
            )
    if longest > ROW_TILE_BOUND:
        return None
    sized = (
        f"; the kernel sizes its block to the row ({to_row[0].path}:{to_row[1]})"
        if to_row is not None
        else "; the kernel's block could not be read"
    )
    return (
        f"every row fits one tile: {recorded}, none longer than {ROW_TILE_BOUND} elements, "
        f"what one tile holds in registers{sized}"
    )


# Why a kernel has no use for a technique, by the technique's id: what the kernel's code
# shows that leaves the technique nothing to do.
_NEEDLESS = {
    "online-softmax": _one_tile_softmax,
    "causal-tile-skipping": _no_causal_mask,
}
# The same, from the rows a workload profile recorded: they come first, whichever file
# was read as the kernel.
_NEEDLESS_FOR_ROWS = {
    "online-softmax": _rows_fit_one_tile,
}


def needless_in(
    entry: Any, sources: Sequence[KernelSource], rows: Sequence[RecordedRows] = ()
) -> str | None:
    """Why the kernel in ``sources`` has no use for ``entry``'s technique, or None.

    Online softmax folds a second pass over a row that takes several tiles: a softmax that
    reads each row in one tile (:func:`one_tile_row`) has none, nor one whose every row a
    workload profile recorded (``rows``) fits one block: the smallest block its code sets
    to a number (``BLOCK_N = 64``, ``BLOCK=256``, ``"BLOCK_N": 128``, ``#define
    BLOCK_SIZE 256``), or :data:`ROW_TILE_BOUND` elements where it sets none or sizes one to
    the row (``triton.next_power_of_2(n)``). Causal tile skipping skips
    the key tiles a causal mask empties: a kernel that shows no causal mask
    (:func:`causal_mask`), every kernel of it read, has none. Other techniques, and kernels
    that cannot be read (another language, Python that does not parse), give None.

    Parameters
    ----------
    entry : catalog entry
        Anything with an ``id``.
    sources : sequence of KernelSource
        The kernel sources (text only).
    rows : sequence of RecordedRows, optional
        The softmax row lengths a workload profile recorded, one per op; empty where none
        was read.

    Returns
    -------
    str or None
        The reason, a clause that names the line or the files it was read from.
    """
    entry_id = str(getattr(entry, "id", ""))
    by_rows = _NEEDLESS_FOR_ROWS.get(entry_id)
    recorded = None if by_rows is None else by_rows(sources, rows)
    if recorded is not None:
        return recorded
    check = _NEEDLESS.get(entry_id)
    return None if check is None or not sources else check(sources)


@attrs.frozen
class _Half:
    """One half of a technique made of two: what it is, and where it shows in sources."""

    name: str
    find: Callable[[Sequence[KernelSource]], Hit | None]


def _diagonal_bound(sources: Sequence[KernelSource]) -> Hit | None:
    """Where a key loop is bounded at the end of its query tile, or None."""
    return find_pattern(sources, _DIAGONAL_BOUND, _denied)


_LOOPS = (ast.For, ast.AsyncFor, ast.While)


def _multiplies(node: ast.AST) -> bool:
    """Whether ``node`` calls a ``dot`` (``tl.dot``, ``dot``): multiplies tiles."""
    return any(
        isinstance(n, ast.Call) and ast.unparse(n.func).rsplit(".", 1)[-1] == "dot"
        for n in ast.walk(node)
    )


def _key_loops(function: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """The loops of ``function`` that multiply tiles, none of their inner loops doing so:
    the loops over key tiles of an attention kernel."""
    loops = [n for n in ast.walk(function) if isinstance(n, _LOOPS) and _multiplies(n)]
    return sum(
        1
        for loop in loops
        if not any(other is not loop and other in set(ast.walk(loop)) for other in loops)
    )


def _two_stage_loop(sources: Sequence[KernelSource]) -> Hit | None:
    """Where a kernel walks its key tiles in two loops (an unmasked stage and a masked one),
    its own or those of a function it calls once a stage; None for one loop."""
    for source, module in _python_kernels(sources) or ():
        functions = [
            f for f in ast.walk(module) if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
        ]
        loops = {f.name: _key_loops(f) for f in functions}
        for function in functions:
            called = [
                ast.unparse(n.func).rsplit(".", 1)[-1]
                for n in ast.walk(function)
                if isinstance(n, ast.Call)
            ]
            stages = _key_loops(function) + sum(
                loops.get(name, 0) for name in called if name != function.name
            )
            if stages >= 2:
                line = source.text.split("\n")[function.lineno - 1].strip()
                return source, function.lineno, line
    return None


# Techniques made of two halves that show apart in code, by id: the first half alone is
# the technique in part.
_HALVES: dict[str, tuple[_Half, _Half]] = {
    "causal-tile-skipping": (
        _Half("the key loop stops at the query tile's diagonal", _diagonal_bound),
        _Half(
            "the mask kept to the key tiles the diagonal crosses (an unmasked loop over the "
            "tiles below it, a masked one over the diagonal)",
            _two_stage_loop,
        ),
    ),
}


@attrs.frozen
class Partly:
    """A technique of which the kernel shows one half.

    Parameters
    ----------
    shown : str
        The half that shows.
    where : (KernelSource, int, str)
        Where it shows: the source, the 1-based line and that line's text.
    lacking : str
        The half that does not.
    """

    shown: str
    where: Hit
    lacking: str


def partly_in(entry: Any, sources: Sequence[KernelSource]) -> Partly | None:
    """The half of ``entry``'s technique that ``sources`` show without the other, or None.

    Causal tile skipping has two halves: the key loop bounded at the query tile's diagonal
    (``hi = tl.minimum(seqlen_k, (start_m + 1) * BLOCK_M)``), which skips the tiles past
    it, and the mask kept to the tiles the diagonal crosses (the key loop in two stages,
    unmasked then masked). A kernel with both has the technique (:func:`present_in`); one
    with the bound alone has it in part.

    Parameters
    ----------
    entry : catalog entry
        Anything with an ``id``.
    sources : sequence of KernelSource
        The kernel sources (text only).

    Returns
    -------
    Partly or None
        None where the technique shows whole (:func:`present_in`), its first half does not
        show, or it has no halves.
    """
    halves = _HALVES.get(str(getattr(entry, "id", "")))
    if halves is None or not sources:
        return None
    first, second = halves
    hit = first.find(sources)
    if hit is None or present_in(entry, sources) is not None:
        return None  # not begun, or whole (both halves, its code pattern, a keyword)
    return Partly(shown=first.name, where=hit, lacking=second.name)

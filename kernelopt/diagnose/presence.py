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
next.
"""

from __future__ import annotations

import ast
import functools
import re
from bisect import bisect_right
from collections.abc import Iterable, Sequence
from typing import Any

import attrs

from kernelopt.diagnose.source import find_pattern, parse_python, prose_spans
from kernelopt.experiments.log import KernelSource

__all__ = ["CODE_PATTERNS", "names_entry", "one_tile_row", "present_ids", "present_in"]

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
        pattern of :data:`CODE_PATTERNS`, else one of the entry's keywords. A match in a
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
    return find_pattern(sources, compiled, _denied) if compiled is not None else None


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

"""Hypothesis strategies that generate valid catalog entries."""

from __future__ import annotations

from hypothesis import strategies as st

from kernelopt.catalog import (
    FAMILIES,
    SCOPES,
    Comparison,
    Condition,
    Entry,
    Evidence,
    EvidenceRow,
    Interaction,
    Kind,
    Op,
    Relation,
    SourceType,
)
from kernelopt.catalog.model import TAG_RE, says_none

# No '#', '|' or '`': those are structure in the template. The validators reject them
# where they would break it; an evidence cell carries '|' escaped, which
# test_table_cells.py round-trips, and the tests for malformed input cover the rest.
_ALPHABET = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 .,;:()+-=<>'/µ×—%_"
_WORD = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789", min_size=1, max_size=8)


def _one_line(text: str) -> str:
    return " ".join(text.split())


lines = (
    st.text(alphabet=_ALPHABET, min_size=1, max_size=40)
    .map(_one_line)
    .filter(lambda t: bool(t) and "<FILL" not in t)
)
contexts = lines.filter(lambda t: not TAG_RE.match(t))  # "metric: ..." would read as a trigger
ids = st.lists(_WORD, min_size=1, max_size=3).map("-".join)
keywords = (
    st.lists(_WORD, min_size=1, max_size=3)
    .flatmap(lambda ws: st.sampled_from([" ", "-", "_"]).map(lambda sep: sep.join(ws)))
    .filter(lambda k: k != "none")
)


def _prose(line_strategy: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    paragraph = st.lists(line_strategy, min_size=1, max_size=3).map("\n".join)
    return st.lists(paragraph, min_size=1, max_size=3).map("\n\n".join)


prose = _prose(lines)
notes = st.one_of(
    st.just(""), _prose(lines.filter(lambda t: not t.startswith(("Source type:", "Source:"))))
)
# Code blocks may hold '#' comments and even '## ' lines: the reader is fence-aware.
code_lines = st.one_of(lines, st.just("# a comment"), st.just("## not a heading"), st.just(""))
implementations = st.tuples(
    st.one_of(st.just(""), lines.map(lambda t: t + "\n\n")),
    st.lists(code_lines, min_size=1, max_size=4).map("\n".join),
).map(lambda p: f"{p[0]}```python\n{p[1]}\n```")

_names = st.sampled_from(["dram_pct", "tc_pct", "waves", "s_q", "kv_splits", "ridge", "x1"])
numbers = st.floats(allow_nan=False, allow_infinity=False, min_value=-1e9, max_value=1e9)
comparisons = st.one_of(
    st.builds(Comparison, name=_names, op=st.sampled_from(list(Op)), value=numbers),
    st.builds(Comparison, name=_names, op=st.sampled_from(list(Op)), other=_names),
)
conditions = st.builds(
    Condition,
    comparisons=st.lists(comparisons, min_size=1, max_size=3).map(tuple),
    note=st.one_of(st.just(""), lines),
)
rows = st.builds(EvidenceRow, config=lines, before=lines, after=lines, change=lines)
evidence = st.builds(
    Evidence,
    source_type=st.sampled_from(list(SourceType)),
    source=st.one_of(st.just(""), lines),
    rows=st.lists(rows, max_size=3).map(tuple),
    notes=notes,
)


@st.composite
def entries(draw: st.DrawFn) -> Entry:
    entry_id = draw(ids)
    targets = draw(st.lists(ids.filter(lambda t: t != entry_id), max_size=3, unique=True))
    interactions = tuple(
        Interaction(target=t, relation=draw(st.sampled_from(list(Relation))), note=draw(lines))
        for t in targets
    )
    return Entry(
        id=entry_id,
        name=draw(lines),
        kind=draw(st.sampled_from(list(Kind))),
        scope=draw(st.sampled_from(SCOPES)),
        families=tuple(
            draw(st.lists(st.sampled_from(FAMILIES), min_size=1, max_size=3, unique=True))
        ),
        fundamental_for=tuple(draw(st.lists(st.sampled_from(FAMILIES), max_size=2, unique=True))),
        keywords=tuple(draw(st.lists(keywords, max_size=5, unique=True))),
        contexts=tuple(draw(st.lists(contexts, min_size=1, max_size=3))),
        triggers=tuple(draw(st.lists(conditions, max_size=3))),
        shape_conditions=tuple(draw(st.lists(conditions, max_size=2))),
        mechanism=draw(prose),
        affected_metrics=tuple(draw(st.lists(lines, min_size=1, max_size=3))),
        implementation=draw(implementations),
        evidence=tuple(draw(st.lists(evidence, min_size=1, max_size=3))),
        generalization=draw(prose),
        pitfalls=tuple(draw(st.lists(lines, min_size=1, max_size=3))),
        interactions=interactions,
        interaction_notes=tuple(
            draw(st.lists(lines.filter(lambda t: not says_none(t)), max_size=2))
        ),
    )

"""A technique named in a comment that denies or defers it is not in the kernel."""

from __future__ import annotations

import time  # process_time: this test's CPU time, which other work on the machine does not inflate

import pytest

from kernelopt.catalog import Catalog
from kernelopt.diagnose.presence import present_ids, present_in
from kernelopt.diagnose.source import prose_spans
from kernelopt.experiments import KernelSource

CATALOG = Catalog.builtin()


def _cuda(text: str) -> str:
    """``text`` written as CUDA: "//" for "#", "/* */" for a docstring."""
    return text.replace("# ", "// ").replace('"""', "/* ", 1).replace('"""', " */", 1)


def _source(text: str, language: str) -> KernelSource:
    if language == "cuda":
        return KernelSource(path="k.cu", text=_cuda(text), language="cuda")
    return KernelSource(path="k.py", text=text, language="python")


def _hit(entry_id: str, text: str, language: str = "python") -> tuple[int, str] | None:
    hit = present_in(CATALOG.get(entry_id), [_source(text, language)])
    return None if hit is None else (hit[1], hit[2])


LANGUAGES = pytest.mark.parametrize("language", ["python", "cuda"])


@LANGUAGES
@pytest.mark.parametrize(
    ("entry_id", "text"),
    [
        # Planned: a TODO, FIXME or "next:" governs its sentence.
        ("split-kv-flash-decoding", "# TODO: split-KV for long sequences\nx = 1\n"),
        ("online-softmax", "# FIXME: add online softmax\nx = 1\n"),
        ("cuda-graphs", "# next: try CUDA graphs\nx = 1\n"),
        # Denied: "no", "without", "not" govern what follows them in the clause.
        ("split-kv-flash-decoding", "# no split-kv here: one program per sequence\nx = 1\n"),
        ("split-kv-flash-decoding", "# without split-KV the grid is b programs\nx = 1\n"),
        ("split-kv-flash-decoding", '"""Single pass, not split-KV."""\nx = 1\n'),
        ("split-kv-flash-decoding", "# one pass instead of split-KV\nx = 1\n"),
        ("split-kv-flash-decoding", "# split-KV is not needed at b=64\nx = 1\n"),
        ("split-kv-flash-decoding", "# the split-KV path isn't used at b=64\nx = 1\n"),
        # A negated list of short items ending in "or"/"nor": the negation runs to its end.
        ("block-pointers-tma", "# no split-KV, TMA or persistent buffers here\nx = 1\n"),
        ("buffer-persistence", "# no split-KV, TMA or persistent buffers here\nx = 1\n"),
        ("buffer-persistence", "# without split-KV, TMA, persistent buffers or graphs\nx = 1\n"),
        # A guess: the words of a plan govern their whole clause.
        ("buffer-persistence", "# could use persistent buffers\nx = 1\n"),
        ("split-kv-flash-decoding", "# split-KV would help at b=1\nx = 1\n"),
        ("split-kv-flash-decoding", "# add split-KV later\nx = 1\n"),
        # A TODO's sentence goes on over the comment's next line.
        ("split-kv-flash-decoding", "# TODO: for long sequences add a\n# split-KV path\nx = 1\n"),
        # Code commented out is not in the kernel.
        ("online-softmax", "# m_i = tl.maximum(m_i, s)\nx = 1\n"),
        ("split-kv-flash-decoding", "    # num_splits = 4\nx = 1\n"),
        ("cuda-graphs", "x = 1  # g.replay()\n"),
        ("persistent-grid", "# for tile in range(pid, n_tiles, NUM_SMS):\nx = 1\n"),
    ],
)
def test_a_denied_or_planned_mention_is_not_present(
    entry_id: str, text: str, language: str
) -> None:
    assert _hit(entry_id, text, language) is None


@LANGUAGES
@pytest.mark.parametrize(
    ("entry_id", "text", "line"),
    [
        # Code: identifiers and calls.
        ("split-kv-flash-decoding", "num_splits = 4\n", 1),
        ("split-kv-flash-decoding", "def _split_kv_kernel(q, k):\n    pass\n", 1),
        ("online-softmax", "m_i = tl.maximum(m_i, s)\n", 1),
        # Prose that states what the code does.
        ("online-softmax", "# online softmax: running max and sum\nx = 1\n", 1),
        ("split-kv-flash-decoding", '"""Split-KV decode: each program takes one piece."""\n', 1),
        # A negating word of another clause or sentence does not reach the mention.
        ("online-softmax", "# online softmax, so no second pass over K\n", 1),
        # After a negated clause, a list joined by "and", a clause that opens with a
        # conjunction, or a long clause states what the kernel does.
        ("block-pointers-tma", "# no padding, TMA tiles and a fused merge\n", 1),
        ("block-pointers-tma", "# no padding, so TMA or pointer loads\n", 1),
        ("block-pointers-tma", "# no masks, TMA tiles stream the whole sequence or its tail\n", 1),
        ("block-pointers-tma", "# no masks.\n# TMA or pointer loads\n", 2),
        # Prose about a name is not code taken out.
        ("online-softmax", "# m_i is the running max of the row\n", 1),
        ("split-kv-flash-decoding", "# Note: num_splits picks the pieces\n", 1),
        ("split-kv-flash-decoding", '"""Split-KV decode. Not tuned for b=64."""\n', 1),
        ("split-kv-flash-decoding", "# no atomics: split-KV writes partials\n", 1),
        ("split-kv-flash-decoding", "# split-KV instead of one program per sequence\n", 1),
        ("split-kv-flash-decoding", "# TODO: tune BLOCK_N\n# Split-KV over 4 pieces\n", 2),
        # "is not" denies the name just before it, not the whole clause.
        ("block-pointers-tma", '"""v2: TMA key tiles and a QK^T that is not replicated."""', 1),
        # A negating word inside the catalog keyword itself.
        ("uniform-length-fast-path", "# no padding: all sequences have one length\n", 1),
        # Code after a comment that denies the technique: the code's line.
        ("split-kv-flash-decoding", "# no split-kv here\nx = 1\nnum_splits = 4\n", 3),
        ("online-softmax", "# TODO: online softmax\nm_i = tl.maximum(m_i, s)\n", 2),
    ],
)
def test_code_and_stating_prose_are_present(
    entry_id: str, text: str, line: int, language: str
) -> None:
    hit = _hit(entry_id, text, language)
    assert hit is not None and hit[0] == line


def test_an_overlapping_match_after_a_denied_one_is_found() -> None:
    # The code pattern m_i ... l_i first matches from the comment's m_i; the code's m_i
    # and l_i, inside that first match, still count.
    text = "# no m_i here\nm_i = tl.full([M], 0.0)\nl_i = tl.zeros([M])\n"
    assert _hit("online-softmax", text) == (2, "m_i = tl.full([M], 0.0)")


def test_a_hash_in_a_string_or_an_assigned_string_is_not_prose() -> None:
    source = KernelSource(
        path="k.py",
        text='tag = "# no split-kv"\nsrc = """no split-kv"""\n# TODO: split-kv\n',
        language="python",
    )
    spans = [source.text[a:b] for a, b, _ in prose_spans(source)]
    assert spans == ["# TODO: split-kv"]
    hit = present_in(CATALOG.get("split-kv-flash-decoding"), [source])
    assert hit is not None and hit[1] == 1  # a string in code is code


def test_present_ids_skips_denied_mentions() -> None:
    text = (
        '"""Decode kernel: one program per sequence, not split-KV."""\n'
        "# TODO: CUDA graphs\n"
        "p = tl.exp2(s - m)\n"
    )
    found = present_ids(CATALOG, [_source(text, "python")])
    assert "exp2-folded-scale" in found
    assert not {"split-kv-flash-decoding", "cuda-graphs"} & found


@LANGUAGES
def test_a_long_file_of_comments_reads_in_linear_time(language: str) -> None:
    # 20,000 denying comment lines, each with a match, before the code that counts: every
    # match is weighed once, against clauses found in one pass over the comments.
    lines = "# TODO: split-kv for long sequences, no split-kv here\n" * 20_000
    block = '"""' + "Not split-kv, no split-kv. " * 5_000 + '"""\n'
    text = lines + block + "num_splits = 4\n"
    start = time.process_time()
    assert _hit("split-kv-flash-decoding", text, language) == (20_002, "num_splits = 4")
    # One long comment sentence with a match every few characters.
    assert _hit("split-kv-flash-decoding", "# TODO" + " split-kv" * 20_000 + "\n", language) is None
    # One negated list of 20,000 items, each negated again: each clause is read once.
    negated_list = '"""' + "no split-kv, " * 20_000 + 'split-kv or TMA."""\n'
    assert _hit("split-kv-flash-decoding", negated_list, language) is None
    assert time.process_time() - start < 2.0

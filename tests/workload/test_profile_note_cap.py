"""A profile lists the first notes of an op's calls its signature did not fit, and counts the rest.

A call whose tensors give one axis two sizes, or a tensor of more dims than its signature
declares, has a note naming its own sizes: a trace whose every call has its own shape had a
note per shape, 100,000 notes in the markdown and JSON of a trace of 100,000 such calls. As a
JSONL trace lists its first malformed lines and counts the rest, a profile lists the first
:data:`~kernelopt.workload.jsonl.MAX_LISTED_PROBLEMS` distinct notes of each op in full and
counts the calls of the rest in one closing note.
"""

from __future__ import annotations

from pathlib import Path

from kernelopt.workload import Call, TensorArg, WorkloadProfile, profile_calls, read_jsonl
from kernelopt.workload.jsonl import MAX_LISTED_PROBLEMS
from kernelopt.workload.markdown import parse_profile_md, render_profile_md
from kernelopt.workload.serialize import profile_from_json, profile_to_json

_CLASH = (
    "mla_decode: signature mla_decode: Expected axis b the same in q.shape[0] and "
    "block_table.shape[0], got {q} and {table}; its axes keep their argument names"
)
_MORE = "... and {calls} more calls of {op} whose signature did not fit"


def _tensor(name: str, *shape: int) -> TensorArg:
    return TensorArg(name=name, shape=shape, dtype="bfloat16")


def _clashing_decode(q_rows: int) -> Call:
    """An MLA decode call whose query gives ``b`` one size and its block table another."""
    return Call(
        op="mla_decode",
        args=(_tensor("q", q_rows, 1, 16, 576), _tensor("block_table", q_rows + 1, 4)),
    )


def _listed_and_more(profile: WorkloadProfile, op: str) -> tuple[list[str], list[str]]:
    """The notes of ``op`` listed in full, and its closing count notes."""
    listed = [note for note in profile.notes if note.startswith(f"{op}: ")]
    more = [note for note in profile.notes if note.startswith("... and ") and f" of {op} " in note]
    return listed, more


def test_a_trace_of_many_disagreeing_shapes_lists_the_first_and_counts_the_calls_of_the_rest(
    tmp_path: Path,
) -> None:
    line = (
        '{"op": "mla_decode", "args": {"q": {"shape": [%d, 1, 16, 576], "dtype": "bf16"}, '
        '"block_table": {"shape": [%d, 4], "dtype": "int32"}}, "duration_us": 2.0}'
    )
    shapes = 1000
    path = tmp_path / "calls.jsonl"
    path.write_text("\n".join(line % (q, q + 1) for q in range(1, shapes + 1)) + "\n")

    profile = profile_calls(read_jsonl(path))

    assert profile.calls == shapes
    in_label_order = sorted(range(1, shapes + 1), key=lambda q: f"q=[{q},")
    assert profile.notes == (
        *(_CLASH.format(q=q, table=q + 1) for q in in_label_order[:MAX_LISTED_PROBLEMS]),
        _MORE.format(calls=shapes - MAX_LISTED_PROBLEMS, op="mla_decode"),
    )


def test_the_count_is_of_calls_not_of_shapes() -> None:
    # Three calls of each shape: the shapes past the listed ones hold three calls apiece.
    calls = [_clashing_decode(q) for q in range(1, 31) for _ in range(3)]

    profile = profile_calls(calls)

    listed, more = _listed_and_more(profile, "mla_decode")
    assert len(listed) == MAX_LISTED_PROBLEMS
    assert more == [_MORE.format(calls=3 * (30 - MAX_LISTED_PROBLEMS), op="mla_decode")]


def test_one_call_past_the_listed_notes_is_counted_in_the_singular() -> None:
    profile = profile_calls([_clashing_decode(q) for q in range(1, MAX_LISTED_PROBLEMS + 2)])

    assert profile.notes[-1] == "... and 1 more call of mla_decode whose signature did not fit"
    assert len(profile.notes) == MAX_LISTED_PROBLEMS + 1


def test_as_many_notes_as_are_listed_are_not_counted() -> None:
    profile = profile_calls([_clashing_decode(q) for q in range(1, MAX_LISTED_PROBLEMS + 1)])

    assert len(profile.notes) == MAX_LISTED_PROBLEMS
    assert not any(note.startswith("... and ") for note in profile.notes)


def test_a_tensor_of_too_many_dims_in_each_shape_is_capped_per_op() -> None:
    # Two ops, each past the cap: each lists its own first notes and counts its own rest.
    five_dim_queries = [
        Call(
            op="sdpa",
            args=(_tensor("q", b, 2, 3, 4, 5), _tensor("k", b, 2, 3, 4), _tensor("v", b, 2, 3, 4)),
        )
        for b in range(1, 41)
    ]
    decode = [_clashing_decode(q) for q in range(1, 51)]

    profile = profile_calls([*five_dim_queries, *decode])

    for op, shapes in (("sdpa", 40), ("mla_decode", 50)):
        listed, more = _listed_and_more(profile, op)
        assert len(listed) == len(set(listed)) == MAX_LISTED_PROBLEMS, op
        assert more == [_MORE.format(calls=shapes - MAX_LISTED_PROBLEMS, op=op)]
    assert len(profile.notes) == 2 * (MAX_LISTED_PROBLEMS + 1)
    assert any("Expected q with at most 4 dims" in note for note in profile.notes)


def test_the_capped_notes_round_trip_through_markdown_and_json() -> None:
    profile = profile_calls([_clashing_decode(q) for q in range(1, 501)])

    markdown = render_profile_md(profile)

    assert parse_profile_md(markdown).notes == profile.notes
    assert profile_from_json(profile_to_json(profile)).notes == profile.notes
    note_lines = markdown.split("## Notes", 1)[1].strip().splitlines()
    assert note_lines[-1] == "- " + _MORE.format(calls=500 - MAX_LISTED_PROBLEMS, op="mla_decode")
    assert len(note_lines) == MAX_LISTED_PROBLEMS + 1


def test_a_profile_written_with_every_note_reads_every_note() -> None:
    # A file written before the notes were capped keeps all its notes when read.
    written = WorkloadProfile(
        source="calls",
        format="calls",
        notes=[_CLASH.format(q=q, table=q + 1) for q in range(1, 101)],
    )

    assert parse_profile_md(render_profile_md(written)).notes == written.notes
    assert profile_from_json(profile_to_json(written)).notes == written.notes

"""workload_profile.md and JSON: exact round trips, and tolerant reading of hand-written files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kernelopt._errors import FormatError, InputError
from kernelopt.workload import (
    AxisStat,
    Call,
    OpProfile,
    ScalarArg,
    ShapeStat,
    TensorArg,
    ValueShare,
    WorkloadProfile,
    find_shortcuts,
    parse_profile_md,
    profile_calls,
    profile_from_json,
    profile_to_json,
    profile_trace,
    read_profile_md,
    render_profile_md,
    write_profile_md,
)
from kernelopt.workload.markdown import MARKER
from kernelopt.workload.signatures import AXIS_KINDS

FIXTURES = [
    "mla_decode_calls.jsonl",
    "softmax_topk_cpu.json",
    "sdpa_one_key_cpu.json",
    "flashinfer/bundle.json",
]


@pytest.mark.parametrize("name", FIXTURES)
def test_profiles_of_fixtures_round_trip(data: Path, name: str) -> None:
    profile = profile_trace(data / name, max_shapes=3)
    text = render_profile_md(profile)
    assert text.startswith(MARKER)
    assert read_profile_md(text) == profile
    assert parse_profile_md(text) == profile
    assert profile_from_json(profile_to_json(profile)) == profile


def _decode_calls(batches: list[int], page: int) -> list[Call]:
    return [
        Call(
            op="mla_decode",
            args=(
                TensorArg(name="q", shape=(b, 1, 128, 576), dtype="bfloat16"),
                TensorArg(name="kv_cache", shape=(8, page, 1, 576), dtype="bfloat16"),
                TensorArg(name="block_table", shape=(b, 2), dtype="int32"),
            ),
        )
        for b in batches
    ]


def test_hints_state_only_what_holds_for_the_calls_they_cite() -> None:
    # Pages of 64 in every call; one sequence in 1 of 4 calls.
    profile = profile_calls(_decode_calls([1, 2, 4, 4], page=64))
    op = profile.op("mla_decode")
    assert op.hint("page") is None  # never 1: "page size 1" is no fact about these calls
    hints = [line for line in render_profile_md(profile).splitlines() if "Hint" in line]
    assert hints == [
        "- Hint s_q: s_q = 1 in 100% of calls: one query token per sequence (plain decode): no "
        "causal mask among draft tokens and one query row per head",
        "- Hint b: b = 1 in 25.0% of calls: a single sequence: no batch loop; with one latent "
        "KV head, only query-head blocks and KV splits spread the work across SMs",
    ]
    assert read_profile_md(render_profile_md(profile)) == profile
    # Pages of one token: now the page hint holds, for the calls it cites.
    paged = profile_calls(_decode_calls([2, 2], page=1))
    assert "- Hint page: page = 1 in 100% of calls: page size 1:" in render_profile_md(paged)
    # Files written before the share was cited still read.
    old = render_profile_md(profile).replace("- Hint b: b = 1 in 25.0% of calls: ", "- Hint b: ")
    assert read_profile_md(old) == profile


def test_rendered_file_reads_well(data: Path) -> None:
    text = render_profile_md(profile_trace(data / "mla_decode_calls.jsonl"))
    assert "## Op: mla_decode" in text
    assert "- s_q = 1 in 80.0% of calls (45.3% of time)" in text
    assert "- h_kv = 1 in 100% of calls (100% of time)" in text
    assert "- top-1 shape: 60.0% of calls; top-1 by time: 54.7% of time" in text
    assert "- uniform-lengths [cache_seqlens.min() == cache_seqlens.max()]:" in text
    assert "| 1 | 6 | 60.0% | 240 | 41.0% |" in text
    assert "- line 5: args.q.shape: Expected dims in [0, 2**40], got [32, -1, 128, 576]" in text


def test_write_profile_md_and_json(tmp_path: Path, data: Path) -> None:
    profile = profile_trace(data / "mla_decode_calls.jsonl")
    md = write_profile_md(profile, tmp_path / "experiments" / "workload_profile.md")
    assert read_profile_md(md) == profile
    assert read_profile_md(str(md)) == profile
    as_json = write_profile_md(profile, tmp_path / "profile.json")
    data_ = json.loads(as_json.read_text())
    assert data_["schema"] == "kernelopt-workload-profile/1"
    assert [s["rule"] for s in data_["shortcuts"]] == [s.rule for s in find_shortcuts(profile)]
    assert profile_from_json(as_json.read_text()) == profile


def test_json_rejects_extra_keys_and_other_documents(data: Path) -> None:
    text = profile_to_json(profile_trace(data / "mla_decode_calls.jsonl"))
    doc = json.loads(text)
    doc["profile"]["ops"][0]["surprise"] = 1
    with pytest.raises(FormatError, match="surprise"):
        profile_from_json(json.dumps(doc))
    with pytest.raises(FormatError, match="schema"):
        profile_from_json('{"profile": {}}')
    with pytest.raises(FormatError, match="JSON text"):
        profile_from_json("{")


def test_json_with_a_key_given_twice_is_refused(data: Path) -> None:
    # json keeps the last of two values for one key: the other was dropped without a word.
    profile = profile_trace(data / "mla_decode_calls.jsonl")
    text = json.dumps(json.loads(profile_to_json(profile)))
    twice = text.replace('"calls": ', '"calls": 999999, "calls": ', 1)
    with pytest.raises(FormatError, match="Expected a JSON object with each key once, got 'calls'"):
        profile_from_json(twice)
    assert profile_from_json(text) == profile


def test_a_broken_kernelopt_file_is_read_tolerantly(data: Path) -> None:
    text = render_profile_md(profile_trace(data / "mla_decode_calls.jsonl"))
    broken = text.replace("- Family: mla-decode\n", "")
    with pytest.raises(FormatError, match="Family"):
        parse_profile_md(broken)
    profile = read_profile_md(broken)
    assert "not in kernelopt's exact layout" in profile.notes[0]
    op = profile.op()
    assert op.op == "mla_decode" and op.calls == 10
    assert op.axis("s_q") is not None


def test_missing_path_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"an existing workload_profile\.md"):
        read_profile_md(tmp_path / "nope.md")


def test_handwritten_seed_profile(data: Path) -> None:
    profile = read_profile_md(data / "handwritten_profile.md")
    assert profile.format == "markdown"
    op = profile.op()
    assert op.op == "MLA decode (DeepSeek-V3, TP8)"
    assert op.signature == "mla_decode" and op.family == "mla-decode"  # found from the title
    assert op.calls == 48213
    assert [s.calls for s in op.shapes] == [41000, 5000, 2213]
    assert [s.call_share for s in op.shapes] == pytest.approx([0.85, 0.104, 0.046])
    assert op.shapes[0].axes_dict == {"b": 32, "s_q": 1, "h_q": 128, "seqlen": 4096}
    assert op.shapes[0].time_us == pytest.approx(41000 * 41.2)  # avg latency x count
    s_q = op.axis("s_q")
    assert s_q is not None and s_q.size1_share == pytest.approx(0.896)
    h_kv, page = op.axis("h_kv"), op.axis("page")
    assert h_kv is not None and h_kv.size1_share == 1.0 and h_kv.distinct == 1
    assert page is not None and page.min == 64 and page.max == 64
    # What it could not read is listed, with line numbers.
    assert any(n.startswith("line 19: not read: - Speculative decoding") for n in profile.notes)
    assert any("line 23: not read: table with columns Idea, Status" in n for n in profile.notes)
    found = {(s.rule, s.axis) for s in find_shortcuts(profile)}
    assert ("size1-axis", "s_q") in found and ("dominant-shape", None) in found
    assert ("size1-axis", "h_kv") not in found  # fixed by design in MLA
    # And it survives kernelopt's own round trip.
    assert read_profile_md(render_profile_md(profile)) == profile


@pytest.mark.parametrize(
    ("text", "axis", "value", "share"),
    [
        ("# Op: softmax\n\n- n = 1 in 100% of calls\n", "n", 1, 1.0),
        ("Kernel: `topk`\n\n`k` is always 1\n", "k", 1, 1.0),
        ("## Workload profile - gemm\n* M == 1 in all calls\n", "M", 1, 1.0),
        ("op: x\nseqlen = 4096 in 62.5% of calls (80% of time)\n", "seqlen", 4096, 0.625),
    ],
)
def test_statement_forms(text: str, axis: str, value: float, share: float) -> None:
    op = read_profile_md(text).op()
    stat = op.axis(axis)
    assert stat is not None and stat.share_of(value) is not None
    assert stat.share_of(value).call_share == share  # type: ignore[union-attr]


@pytest.mark.parametrize(
    "table",
    [
        "| b | s_q | Calls | % |\n|---|---|---|---|\n"
        "| 32 | 1 | 300 | 75% |\n| 32 | 16 | 100 | 25% |\n",
        "| Shape | Count |\n|---|---|\n| b=32, s_q=1 | 300 |\n| b=32, s_q=16 | 100 |\n",
        "| shape | share |\n|-|-|\n| q=[32,1,128] | 0.75 |\n| q=[32,16,128] | 0.25 |\n",
        "| Shape (b, s_q) | n | time (ms) |\n|---|---|---|\n"
        "| 32x1 | 300 | 1.5 |\n| 32x16 | 100 | 2 |\n",
    ],
)
def test_table_forms(table: str) -> None:
    op = read_profile_md("# Workload profile: op\n\n" + table).op()
    assert len(op.shapes) == 2
    assert op.shapes[0].call_share == pytest.approx(0.75)
    names = {n for n, _ in op.shapes[0].axes}
    assert names in ({"b", "s_q"}, {"q[0]", "q[1]", "q[2]"})


@pytest.mark.parametrize("share_column", ["%", "% of calls", "share", "calls (%)"])
def test_n_beside_only_a_share_column_is_the_axis(share_column: str) -> None:
    # "n" names a count or a softmax length; with no other column for the shape it is the
    # length, or the table said nothing.
    text = (
        f"# Workload profile: softmax\n\n| n | {share_column} |\n|---|---|\n"
        "| 1 | 90% |\n| 512 | 10% |\n"
    )
    op = read_profile_md(text).op()
    n = op.axis("n")
    assert n is not None and n.size1_share == pytest.approx(0.9)
    assert [s.rule for s in find_shortcuts(op)] == ["size1-reduction", "dominant-shape"]


@pytest.mark.parametrize("label", ["other", "**Other**", "rest", "others"])
def test_an_other_row_counts_in_the_shares(label: str) -> None:
    # Dropped, its 1000 calls made s_q = 1 look like 90% of the calls instead of 45%.
    text = (
        "# Workload profile: mla_decode\n\n| b | s_q | Count |\n|---|---|---|\n"
        f"| 32 | 1 | 900 |\n| 32 | 4 | 100 |\n| {label} | - | 1000 |\n| **Total** | | 2000 |\n"
    )
    op = read_profile_md(text).op()
    assert op.calls == 2000
    assert [s.call_share for s in op.shapes] == [0.45, 0.05]
    assert op.other is not None and (op.other.calls, op.other.call_share) == (1000, 0.5)
    assert "size1-axis" not in {s.rule for s in find_shortcuts(op)}


def test_an_other_row_of_a_share_table_is_kept_as_other() -> None:
    text = (
        "# Workload profile: softmax\n\n| n | % of calls |\n|---|---|\n"
        "| 1 | 40% |\n| 512 | 20% |\n| other | 40% |\n"
    )
    op = read_profile_md(text).op()
    assert [s.call_share for s in op.shapes] == [0.4, 0.2]
    assert op.other is not None and op.other.call_share == 0.4
    assert find_shortcuts(op) == []


def test_nothing_readable_is_said_so() -> None:
    profile = read_profile_md("# Notes\n\nThe kernel is slow.\n")
    assert profile.ops == ()
    assert "no shape table or axis statement found" in profile.notes


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.one_of(
            st.text(max_size=60),
            st.sampled_from(
                [
                    "| a | b |",
                    "|---|---|",
                    "| 1 | 2% |",
                    "| Shape | Count |",
                    "| (1,2) | x |",
                    "# Op: x",
                    "## Op: ",
                    "s_q = 1 in 150% of calls",
                    "k = 1e999 in 5% of calls",
                    "x is always -3",
                    MARKER,
                    "# Workload profile",
                    "- Calls: 3",
                    "### Shapes",
                    "| # | Calls | % calls | Time (us) | % time | Axes | Args |",
                    "1e9999 calls",
                ]
            ),
        ),
        max_size=25,
    )
)
def test_tolerant_reader_never_raises(lines: list[str]) -> None:
    profile = read_profile_md("\n".join(lines) + "\n")
    assert isinstance(profile, WorkloadProfile)
    render_profile_md(profile)  # whatever was read can be written


# --- arbitrary profiles round-trip --------------------------------------------------------

_text = st.text(st.characters(blacklist_categories=("Cs", "Cc")), max_size=12)
_name = st.text(st.characters(blacklist_categories=("Cs", "Cc")), min_size=1, max_size=8).filter(
    lambda s: s.strip() == s and s not in ("-",) and ": " not in s and not s.endswith(":")
)
_ident = st.from_regex(r"[a-z_][a-z0-9_]{0,6}", fullmatch=True)
_num = st.one_of(st.integers(-(10**6), 10**6), st.floats(-1e9, 1e9, allow_nan=False))
_share = st.floats(0, 1)
_opt_share = st.none() | _share


@st.composite
def _op_profiles(draw: st.DrawFn) -> OpProfile:
    calls = draw(st.none() | st.integers(0, 10**6))
    time = draw(st.none() | st.floats(0, 1e9))
    values = draw(
        st.lists(
            st.builds(
                ValueShare,
                value=_num,
                calls=st.none() | st.integers(0, 10**6),
                call_share=_share,
                time_us=st.none() | st.floats(0, 1e9),
                time_share=_opt_share,
            ),
            max_size=3,
        )
    )
    axes = draw(
        st.lists(
            st.builds(
                AxisStat,
                name=_name,
                kind=st.sampled_from(AXIS_KINDS),
                source=_text,
                min=st.none() | _num,
                median=st.none() | _num,
                max=st.none() | _num,
                time_median=st.none() | _num,
                distinct=st.none() | st.integers(0, 99),
                values=st.just(tuple(values)),
            ),
            max_size=3,
        )
    )
    shape = st.builds(
        ShapeStat,
        args=_text,
        axes=st.lists(st.tuples(_ident, _num), max_size=3, unique_by=lambda pair: pair[0]).map(
            tuple
        ),
        calls=st.none() | st.integers(0, 10**6),
        call_share=_share,
        time_us=st.none() | st.floats(0, 1e9),
        time_share=_opt_share,
    )
    return OpProfile(
        op=draw(_text),
        signature=draw(st.none() | _ident),
        family=draw(_text),
        calls=calls,
        timed_calls=draw(st.none() | st.integers(0, 10)),
        time_us=time,
        distinct_shapes=draw(st.none() | st.integers(0, 10)),
        shapes=tuple(draw(st.lists(shape, max_size=3))),
        other=draw(st.none() | shape),
        axes=tuple(axes),
        reduced=tuple(draw(st.lists(_name, max_size=2))),
        fixed=tuple(draw(st.lists(_name, max_size=2))),
        select=draw(st.none() | st.tuples(_name, _name)),
        lengths=draw(st.none() | _ident),
        padded=tuple(draw(st.lists(st.tuples(_name, _name), max_size=2))),
        hints=tuple(draw(st.lists(st.tuples(_ident, _text), max_size=2))),
    )


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.builds(
        WorkloadProfile,
        source=_text,
        format=_text,
        ops=st.lists(_op_profiles(), max_size=2).map(tuple),
        records=st.none() | st.integers(0, 10**6),
        skipped=st.integers(0, 10),
        notes=st.lists(_text, max_size=3).map(tuple),
    )
)
def test_any_profile_round_trips_through_markdown_and_json(profile: WorkloadProfile) -> None:
    assert parse_profile_md(render_profile_md(profile, shortcuts=[])) == profile
    assert profile_from_json(profile_to_json(profile)) == profile


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["f", "aten::g", "a|b"]),
            st.lists(st.integers(0, 9), max_size=3),
            st.sampled_from(["x", "y z", "k=v", "p|q"]),
            st.one_of(st.none(), st.floats(0, 1e4)),
            st.one_of(st.integers(-3, 3), st.floats(-1, 1, allow_nan=False), st.text(max_size=3)),
        ),
        min_size=1,
        max_size=12,
    )
)
def test_profiles_of_random_calls_round_trip(items: list[tuple]) -> None:
    calls = [
        Call(
            op=op,
            args=(
                TensorArg(name=name, shape=tuple(shape), dtype="float32"),
                ScalarArg(name="s", value=scalar),
            ),
            duration_us=duration,
        )
        for op, shape, name, duration, scalar in items
    ]
    profile = profile_calls(calls, max_shapes=2, max_values=2)
    assert read_profile_md(render_profile_md(profile)) == profile


def test_everything_but_json_works_without_cattrs(data: Path, tmp_path: Path) -> None:
    # The GPU machines run the project without cattrs installed.
    import subprocess
    import sys

    code = f"""
import sys
class Block:
    def find_spec(self, name, path=None, target=None):
        if name == "cattrs" or name.startswith("cattrs."):
            raise ImportError("no cattrs here")
sys.meta_path.insert(0, Block())
from kernelopt.workload import find_shortcuts, profile_trace, read_profile_md, render_profile_md
profile = profile_trace({str(data / "mla_decode_calls.jsonl")!r})
assert read_profile_md(render_profile_md(profile)) == profile
print(len(find_shortcuts(profile)))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "3"


def test_a_shape_names_each_axis_once() -> None:
    with pytest.raises(InputError, match="axes: Expected each axis named once"):
        ShapeStat(args="x", axes=(("b", 1.0), ("b", 2.0)))


def test_the_other_row_of_kernelopts_layout_is_read_tolerantly_too(data: Path) -> None:
    # The fallback for a damaged kernelopt file: its `| other |` row (under `#`) holds the
    # calls of the shapes past max_shapes.
    profile = profile_trace(data / "mla_decode_calls.jsonl", max_shapes=1)
    text = render_profile_md(profile).replace("<!-- kernelopt workload-profile v1 -->\n", "")
    op = read_profile_md(text).op()
    assert op.calls == 10
    assert op.other is not None and (op.other.calls, op.other.call_share) == (2, 0.2)


def test_a_path_ending_in_upper_case_json_is_written_as_json(tmp_path: Path, data: Path) -> None:
    # `kernelopt inspect` reads "X.MD" as markdown; "X.JSON" was written as markdown.
    profile = profile_trace(data / "mla_decode_calls.jsonl")
    written = write_profile_md(profile, tmp_path / "PROFILE.JSON")
    assert profile_from_json(written.read_text()) == profile


def test_the_trace_a_profile_was_read_from_is_not_written_over(
    tmp_path: Path, data: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Writing the profile to its own trace replaced the calls with the profile's text.
    trace = tmp_path / "calls.jsonl"
    trace.write_bytes((data / "mla_decode_calls.jsonl").read_bytes())
    before = trace.read_bytes()
    profile = profile_trace(trace)
    for target in (trace, tmp_path / "." / "calls.jsonl"):
        with pytest.raises(InputError, match="path: Expected a path other than the file"):
            write_profile_md(profile, target)
    assert trace.read_bytes() == before
    # A hand-written profile would lose its prose in the same way.
    mine = tmp_path / "workload_profile.md"
    mine.write_text((data / "handwritten_profile.md").read_text())
    with pytest.raises(InputError, match="the markdown source"):
        write_profile_md(read_profile_md(mine), mine)
    # A profile kernelopt wrote may be written again where it is: nothing is lost there.
    exact = write_profile_md(profile, tmp_path / "exact.md")
    write_profile_md(read_profile_md(exact), exact)
    assert read_profile_md(exact) == profile
    # Profiles made from calls in memory name no file, though their source reads "calls".
    monkeypatch.chdir(tmp_path)
    Path("calls").write_text("not a trace\n")
    calls = [Call(op="f", args=(TensorArg(name="x", shape=(2, 1), dtype="float32"),))]
    write_profile_md(profile_calls(calls), "calls")


def test_a_byte_order_mark_is_not_part_of_the_file(tmp_path: Path, data: Path) -> None:
    # A file saved with a BOM (Windows editors) was read tolerantly when kernelopt wrote it,
    # and a hand-written one lost its op ('unknown', no signature: size1-axis instead of
    # size1-reduction).
    profile = profile_trace(data / "mla_decode_calls.jsonl")
    path = tmp_path / "workload_profile.md"
    path.write_text("\ufeff" + render_profile_md(profile), encoding="utf-8")
    assert read_profile_md(path) == profile
    assert parse_profile_md("\ufeff" + render_profile_md(profile)) == profile
    text = "# Workload profile: softmax\n\n| n | Count |\n|---|---|\n| 1 | 900 |\n| 512 | 100 |\n"
    path.write_text("\ufeff" + text, encoding="utf-8")
    for source in (path, "\ufeff" + text):
        read = read_profile_md(source)
        assert read.op().op == "softmax" and read.op().signature == "softmax"
        assert "size1-reduction" in {s.rule for s in find_shortcuts(read)}


NOT_A_SIZE = "(a shape size is a non-negative integer)"


def test_axis_columns_refuse_negative_and_fractional_sizes() -> None:
    text = (
        "# Workload profile: op\n\n| b | s_q | Count |\n|---|---|---|\n"
        "| -3 | 1 | 5 |\n| 32 | 1.5 | 5 |\n| 32 | 2 | 5 |\n| 1.5k | 1e1 | 5 |\n"
    )
    profile = read_profile_md(text)
    op = profile.op()
    values = {axis.name: sorted(v.value for v in axis.values) for axis in op.axes}
    assert values == {"b": [32.0, 1500.0], "s_q": [1.0, 2.0, 10.0]}
    assert f"line 5: not read: b = -3 {NOT_A_SIZE}" in profile.notes
    assert f"line 6: not read: s_q = 1.5 {NOT_A_SIZE}" in profile.notes
    # As for any cell it cannot read, the rest of the row still counts.
    assert op.calls == 20


@pytest.mark.parametrize(
    ("cell", "wrong"),
    [
        ("(32, -1, 128)", "dim1 = -1"),
        ("32x0.5", "dim1 = 0.5"),
        ("b=32 s_q=-2", "s_q = -2"),
        ("q=[32,1.25,128]", "q[1] = 1.25"),
    ],
)
def test_shape_cells_refuse_negative_and_fractional_sizes(cell: str, wrong: str) -> None:
    text = (
        "# Workload profile: op\n\n| Shape | Count |\n|---|---|\n"
        f"| {cell} | 5 |\n| (32, 1, 128) | 15 |\n"
    )
    profile = read_profile_md(text)
    op = profile.op()
    # The other dims of the row are kept, as its calls are: dropped, they raised the
    # share of the other shape to 100 %.
    wrong_axis = wrong.split(" = ")[0]
    assert [s.calls for s in op.shapes] == [15, 5] and op.calls == 20
    assert wrong_axis not in dict(op.shapes[1].axes)
    assert f"line 5: not read: {wrong} {NOT_A_SIZE}" in profile.notes


def test_statements_refuse_negative_and_fractional_sizes() -> None:
    text = (
        "# Op: softmax\n\n- n = -1 in 50% of calls, k = 4 in 100% of calls\n"
        "- h is always 2.5\n- m = 0 in all calls\n"
    )
    profile = read_profile_md(text)
    assert {axis.name for axis in profile.op().axes} == {"k", "m"}
    assert f"line 3: not read: n = -1 {NOT_A_SIZE}" in profile.notes
    assert f"line 4: not read: h = 2.5 {NOT_A_SIZE}" in profile.notes
    assert not any(note.startswith("line 4: not read: - h") for note in profile.notes)


def test_a_note_on_a_table_row_names_that_rows_line() -> None:
    # Counted in the table's body, without its separator row, the note named the line
    # above the row.
    text = "# op: x\n\n| b | calls |\n|---|---|\n| 2 | 4 |\n| abc | 5 |\n"
    assert "line 6: not read: cells under b" in read_profile_md(text).notes

"""What a normalization backward's engineer met in the catalog: an entry on the dgamma /
dbeta column reduction, a note naming the metrics that unjudged conditions still need, and
a refused axis name (``hidden``) pointed to its shape fact (``reduce_len``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kernelopt import InputError, cli
from kernelopt.catalog import (
    AXIS_FACTS,
    SHAPE_FACTS,
    Catalog,
    SourceType,
    metrics_missing,
    parse_condition,
    shape_fact_for_axis,
    shape_facts_missing,
)
from kernelopt.workload import facts as workload_facts

from .conftest import make_entry, write_entry

CATALOG = Catalog.builtin()
ENTRY = "two-stage-column-reduction"


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = cli.main(["catalog", *args])
    out, err = capsys.readouterr()
    return code, out, err


# --- the entry -----------------------------------------------------------------------------


def test_a_search_for_the_dgamma_partial_reduction_ranks_the_column_reduction_first(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = run(capsys, "search", "layernorm", "backward", "dgamma", "partial", "reduction")
    assert code == 0
    assert out.split()[1] == ENTRY


def test_the_column_reduction_applies_to_normalization_and_column_reduction_kernels() -> None:
    entry = CATALOG.get(ENTRY)
    assert set(entry.families) == {"normalization", "column-reduction"}
    assert ENTRY in [m.id for m in CATALOG.query(family="normalization")]
    assert ENTRY in [m.id for m in CATALOG.query(family="column-reduction")]
    # A row reduction (a per-token amax, a softmax's max) has no sum across programs.
    assert ENTRY not in [m.id for m in CATALOG.query(family="reduction")]
    # Not a standard technique of every normalization kernel: a forward has no column sum,
    # and `kernelopt diagnose` would report every forward LayerNorm as lacking it.
    assert entry.fundamental_for == ()
    assert ENTRY not in [e.id for e in CATALOG.fundamentals("normalization")]


def test_the_column_reduction_cites_public_figures_for_and_against_it() -> None:
    entry = CATALOG.get(ENTRY)
    blocks = [b for b in entry.evidence if b.rows]
    assert blocks and all(b.source_type is SourceType.EXTERNAL_REPORT for b in entry.evidence)
    assert all("https://github.com/" in b.source for b in blocks)
    changes = [row.change for block in blocks for row in block.rows]
    # Atomics win at some shapes: the entry says so rather than only what favours it.
    assert any("atomics win" in change for change in changes)
    assert any(change.startswith("-") for change in changes)


def test_a_memory_bound_normalization_backward_is_matched_with_its_roofline_metrics(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = run(
        capsys,
        "match",
        "--family",
        "normalization",
        "--metric",
        "dram_pct=45",
        "--metric",
        "arith_intensity=0.5",
        "--metric",
        "ridge=200",
    )
    assert code == 0
    assert out.split()[1] == ENTRY
    assert "arith_intensity" not in err


# --- unjudged conditions ---------------------------------------------------------------------


def test_match_names_the_metrics_that_conditions_left_unjudged_need(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = run(capsys, "match", "--family", "normalization", "--metric", "dram_pct=45")
    assert (code, out) == (0, "no matching entries\n")
    assert err == (
        "kernelopt catalog: 3 entries are left out with conditions unjudged, each pairing a "
        "metric given with one not given; to judge them, add --metric NAME=VALUE for: "
        "arith_intensity, ridge (two-stage-column-reduction, vectorized-coalesced-loads); "
        "tc_pct (software-pipelining)\n"
    )


def test_the_json_answer_stays_a_pure_document_beside_the_note(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = run(
        capsys, "match", "--family", "normalization", "--metric", "dram_pct=45", "--json"
    )
    assert code == 0 and json.loads(out) == []
    assert err.startswith("kernelopt catalog: 3 entries are left out with conditions unjudged")


def test_supplying_the_named_metrics_judges_the_conditions_and_ends_the_note(
    capsys: pytest.CaptureFixture[str],
) -> None:
    metrics = ["dram_pct=45", "tc_pct=0", "arith_intensity=0.5", "ridge=200"]
    args = [a for m in metrics for a in ("--metric", m)]
    code, out, err = run(capsys, "match", "--family", "normalization", *args)
    assert code == 0 and err == ""
    # Each match is a score line, then its reasons as "- ..." lines.
    found = {line.split()[1] for line in out.splitlines() if not line.lstrip().startswith("-")}
    assert {ENTRY, "software-pipelining", "vectorized-coalesced-loads"} <= found


def test_an_entry_in_the_answer_is_not_noted_for_its_other_conditions(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # kv_splits >= 32 holds; kv_splits > 8 and waves > 2 waits on waves, and could only
    # rank the entry higher.
    code, out, err = run(capsys, "match", "--metric", "kv_splits=32")
    assert code == 0 and out.split()[1] == "too-many-kv-splits"
    assert err == ""


def test_a_shape_condition_waiting_on_another_fact_is_a_partial_match(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # m = 1 alone is a GEMV-shaped GEMM: split-K is shown, naming the fact that settles it,
    # rather than "no matching entries" and a note.
    code, out, err = run(capsys, "match", "--shape", "m=1", "--family", "gemm")
    assert code == 0 and out.splitlines()[0].split()[1] == "split-k-gemm"
    assert "shape m <= 32 (m=1) held; k >= 4096 not judged without k (a partial match)" in out
    assert "left out" not in err
    # Given, the fact settles it either way.
    code, out, _ = run(capsys, "match", "--shape", "m=1", "--shape", "k=1024", "--family", "gemm")
    assert out == "no matching entries\n"


def test_missing_names_leave_out_conditions_already_false_or_about_other_names() -> None:
    entries = [
        make_entry(
            triggers=(
                parse_condition("dram_pct < 60 and tc_pct < 60"),
                parse_condition("dram_pct > 90 and l2_hit_pct < 50"),
                parse_condition("waves < 1"),
            ),
            shape_conditions=(parse_condition("m <= 32 and k >= 4096"),),
            interactions=(),
        )
    ]
    # dram_pct=45 makes the second false whatever l2_hit_pct is; the third reads no
    # metric given.
    assert metrics_missing(entries, {"dram_pct": 45}) == {"tc_pct": ("demo-trick",)}
    assert metrics_missing(entries, {"dram_pct": 45, "tc_pct": 0}) == {}
    assert shape_facts_missing(entries, {"m": 1}) == {"k": ("demo-trick",)}
    assert shape_facts_missing(entries, {"m": 64}) == {}


@pytest.mark.parametrize("entries", ["dram_pct", 3, [make_entry(), "x"]])
def test_missing_names_refuse_what_is_not_entries(entries: object) -> None:
    with pytest.raises(InputError, match=r"Expected an iterable of Entry \(a Catalog\), got"):
        metrics_missing(entries, {"dram_pct": 45})  # type: ignore[arg-type]


def test_missing_names_refuse_facts_that_are_not_a_mapping() -> None:
    with pytest.raises(InputError, match=r"Expected a mapping of names to numbers, got"):
        shape_facts_missing(CATALOG, [("m", 1)])  # type: ignore[arg-type]


# --- axis names ------------------------------------------------------------------------------


def test_a_hidden_size_given_as_a_shape_fact_is_pointed_to_reduce_len(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = run(capsys, "match", "--shape", "hidden=4097")
    assert code == 2 and out == ""
    assert err.startswith("kernelopt catalog: error: --shape: Expected a shape fact name in ")
    assert err.endswith(
        "got 'hidden'; 'hidden' names an axis, and the shape fact for it is most likely "
        "reduce_len (length of the reduced axis): --shape reduce_len=4097\n"
    )


@pytest.mark.parametrize(
    ("axis", "fact"),
    [
        ("d_model", "reduce_len"),
        ("Hidden-Size", "reduce_len"),
        ("dim", "reduce_len"),
        ("seq_len", "seqlen_k"),
        ("num_kv_heads", "h_kv"),
        ("batch_size", "b"),
    ],
)
def test_common_axis_names_are_pointed_to_their_fact(
    capsys: pytest.CaptureFixture[str], axis: str, fact: str
) -> None:
    code, _, err = run(capsys, "match", "--shape", f"{axis}=8")
    assert code == 2
    assert err.endswith(f"most likely {fact} ({SHAPE_FACTS[fact]}): --shape {fact}=8\n")


def test_a_name_that_is_no_axis_gets_no_hint_and_a_fact_is_taken_as_the_fact(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, _, err = run(capsys, "match", "--shape", "hiden=8")
    assert code == 2 and "names an axis" not in err
    # A GEMM's n is a shape fact itself: taken, not pointed elsewhere.
    assert run(capsys, "match", "--shape", "n=4097")[0] == 0


def test_a_users_own_condition_on_an_axis_name_is_taken(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "k"
    own = make_entry(shape_conditions=(parse_condition("hidden >= 4096"),), interactions=())
    write_entry(root, own)
    code, out, err = run(capsys, "match", "--shape", "hidden=4097", "--knowledge", str(root))
    assert code == 0, err
    assert out.split()[1] == "demo-trick"


def test_every_axis_name_points_to_a_shape_fact_and_is_none_itself() -> None:
    assert set(AXIS_FACTS.values()) <= set(SHAPE_FACTS)
    assert not set(AXIS_FACTS) & set(SHAPE_FACTS)
    assert shape_fact_for_axis(" D-Model ") == "reduce_len"
    assert shape_fact_for_axis("rows") is None


def test_the_workload_reads_its_axis_names_as_the_same_facts() -> None:
    for fact, names in workload_facts._ALIASES.items():
        for name in names:
            if name != fact:
                assert AXIS_FACTS[name] == fact, name

"""A metric or shape fact no entry conditions on: the API names what entries read, and
`catalog match` tells "no entry matched" from "no entry knows this name"."""

from __future__ import annotations

import doctest
import json
from pathlib import Path

import pytest

from kernelopt import InputError, cli
from kernelopt.catalog import METRICS, SHAPE_FACTS, Catalog, parse_condition
from kernelopt.catalog import query as query_module
from kernelopt.catalog.query import metrics_read, shape_facts_read

from .conftest import make_entry, write_entry

CATALOG = Catalog.builtin()


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = cli.main(["catalog", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_metrics_read_lists_both_sides_of_every_trigger_once() -> None:
    first = make_entry(
        triggers=(
            parse_condition("dram_pct > 60"),
            parse_condition("arith_intensity < ridge and dram_pct > 20"),
        ),
        interactions=(),
    )
    second = make_entry(
        id="other-trick",
        triggers=(parse_condition("my_stall_pct > 40"),),
        shape_conditions=(parse_condition("s_q == 1 and h_q >= 64"),),
        interactions=(),
    )
    catalog = Catalog([first, second])
    assert metrics_read(catalog) == ("arith_intensity", "dram_pct", "my_stall_pct", "ridge")
    assert shape_facts_read(catalog) == ("h_q", "s_q")
    assert metrics_read([]) == () and shape_facts_read(Catalog()) == ()


def test_an_unread_metric_answers_empty_and_is_told_apart_by_metrics_read() -> None:
    # A misspelt name, or a measurement of the user's own: the query takes it (a whole
    # profile record may be passed) and metrics_read says no entry reads it.
    record = {"dram_throughput_pct": 90.0, "my_stall_pct": 55.0}
    assert CATALOG.query(metrics=record) == []
    assert set(record).isdisjoint(metrics_read(CATALOG))
    # A name that is read and holds still answers, the extra names being ignored.
    assert CATALOG.query(metrics={**record, "kv_splits": 32})
    every_trigger = {n for e in CATALOG for c in e.triggers for n in c.names}
    assert set(metrics_read(CATALOG)) == every_trigger
    every_shape = {n for e in CATALOG for c in e.shape_conditions for n in c.names}
    assert set(shape_facts_read(CATALOG)) == every_shape


def test_metrics_read_docstring_example_runs() -> None:
    result = doctest.testmod(query_module)
    assert result.attempted > 0 and result.failed == 0


@pytest.mark.parametrize("entries", ["dram_pct", 3, [1], [make_entry(), "x"]])
def test_metrics_read_refuses_what_is_not_entries(entries: object) -> None:
    with pytest.raises(InputError, match=r"Expected an iterable of Entry \(a Catalog\), got"):
        metrics_read(entries)  # type: ignore[arg-type]


def test_match_says_on_stderr_that_no_entry_reads_a_vocabulary_metric(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert "regs_per_thread" in METRICS and "regs_per_thread" not in metrics_read(CATALOG)
    code, out, err = run(capsys, "match", "--metric", "regs_per_thread=255")
    assert (code, out) == (0, "no matching entries\n")
    lines = err.splitlines()
    assert len(lines) == 1
    note, _, listed = lines[0].partition(", closest first: ")
    assert note == (
        "kernelopt catalog: no entry has a condition on metric 'regs_per_thread', so it "
        "matches nothing; entries condition on these metrics"
    )
    assert sorted(listed.split(", ")) == list(metrics_read(CATALOG))


def test_match_json_stays_clean_and_the_note_names_only_the_unread_metric(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = run(
        capsys, "match", "--metric", "kv_splits=32", "--metric", "regs_per_thread=255", "--json"
    )
    assert code == 0
    assert "too-many-kv-splits" in [m["id"] for m in json.loads(out)]
    assert len(err.splitlines()) == 1
    assert "metric 'regs_per_thread'" in err and "'kv_splits'" not in err


def test_match_note_lists_the_closest_names_first(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "k"
    write_entry(root, make_entry(triggers=(parse_condition("regs_per_warp > 100"),)))
    code, _, err = run(capsys, "match", "--metric", "regs_per_thread=255", "--knowledge", str(root))
    assert code == 0
    assert "closest first: regs_per_warp, " in err


def test_match_says_on_stderr_that_no_entry_reads_a_vocabulary_shape_fact(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert "b" in SHAPE_FACTS and "b" not in shape_facts_read(CATALOG)
    code, out, err = run(capsys, "match", "--shape", "b=32", "--shape", "s_q=1")
    assert code == 0 and "size-1-axis-shortcut" in out
    assert err.startswith(
        "kernelopt catalog: no entry has a condition on shape fact 'b', so it matches "
        "nothing; entries condition on these shape facts, closest first: "
    )
    assert len(err.splitlines()) == 1


def test_match_refuses_a_misspelt_metric_listing_the_closest_name_first(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = run(capsys, "match", "--metric", "dram_throughput_pct=90")
    assert code == 2 and out == ""
    assert err.startswith(
        "kernelopt catalog: error: --metric: Expected a metric name in dram_pct, "
    )
    assert err.rstrip().endswith("(closest first), got 'dram_throughput_pct'")
    # Every accepted name is listed: those entries read and the vocabulary's.
    listed = err.split("name in ", 1)[1].split(" (closest first)")[0].split(", ")
    assert sorted(listed) == sorted({*metrics_read(CATALOG), *METRICS})


def test_match_refuses_before_it_notes_anything(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "match", "--metric", "regs_per_thread=255", "--shape", "s_qq=1")
    assert code == 2 and out == ""
    assert len(err.splitlines()) == 1
    assert err.startswith("kernelopt catalog: error: --shape: Expected a shape fact name in s_q, ")

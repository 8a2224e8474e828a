"""What a user of a Triton GEMM (a fused bias + GELU epilogue) meets in the catalog.

The names a GEMM goes by (PyTorch's op names, GEMV) are families, the standard techniques
of a family have a subcommand, the catalog page says truthfully where each metric comes
from, and a keyword matches as a whole phrase.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from kernelopt import cli
from kernelopt._errors import InputError
from kernelopt.bench import Ceilings, Roofline, TuningResult, copy_cost
from kernelopt.catalog import (
    FAMILY_ALIASES,
    METRICS,
    Catalog,
    family_ancestors,
    lint_tree,
    render_entry,
)
from kernelopt.catalog.vocabulary import family_alias_shape, normalize_family

from .conftest import make_entry, write_entry

DOCS = Path(__file__).resolve().parents[2] / "docs" / "catalog.md"
ALIASES = ("matmul", "MatMul", "mm", "bmm", "addmm", "linear", "GEMV", "gemv")


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = cli.main(["catalog", *args])
    out, err = capsys.readouterr()
    return code, out, err


# --- family aliases ----------------------------------------------------------------------


@pytest.mark.parametrize("alias", ALIASES)
def test_a_gemm_alias_is_read_as_gemm_in_python_queries(alias: str) -> None:
    catalog = Catalog.builtin()
    assert catalog.canonical_family(alias) == "gemm"
    assert family_ancestors(alias) == ("gemm", "any")
    gemm = [m.id for m in catalog.query(family="gemm")]
    assert gemm and [m.id for m in catalog.query(family=alias)] == gemm
    # gemv also fixes m = 1, at which grouped tile order has no use.
    assert [e.id for e in catalog.fundamentals(alias)] == [
        e.id for e in catalog.fundamentals("gemm", shape=family_alias_shape(alias))
    ]
    text = "tma store epilogue of the GEMM"
    assert [m.id for m in catalog.tag(text, family=alias)] == [
        m.id for m in catalog.tag(text, family="gemm")
    ]


def test_every_alias_names_a_family_and_linear_attention_stays_its_own() -> None:
    catalog = Catalog.builtin()
    assert set(FAMILY_ALIASES.values()) <= set(catalog.families())
    assert not set(FAMILY_ALIASES) & set(catalog.families())  # listed once, canonically
    assert normalize_family("linear attention") == "linear-attention"
    assert normalize_family("Linear_Attention") == "linear-attention"


@pytest.mark.parametrize("command", ["list", "fundamentals"])
def test_the_command_line_takes_a_family_alias(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, gemm, _ = run(capsys, command, "--family", "gemm")
    assert code == 0 and gemm
    code, out, err = run(capsys, command, "--family", "matmul")
    assert (code, out, err) == (0, gemm, "")


def test_match_takes_a_family_alias(capsys: pytest.CaptureFixture[str]) -> None:
    code, gemm, notes = run(capsys, "match", "--metric", "dram_pct=85", "--family", "gemm")
    assert code == 0
    assert run(capsys, "match", "--metric", "dram_pct=85", "--family", "Gemv") == (0, gemm, notes)


def test_an_unknown_family_error_names_the_aliases(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "list", "--family", "matmull")
    assert code == 2 and out == ""
    assert "(or matmul, mm, bmm, addmm, linear, gemv for gemm; " in err
    assert "take-along-dim for gather; " in err and "), got 'matmull'" in err
    with pytest.raises(InputError, match=r"family: Expected .* gemv for gemm; .*\), got 'gem'"):
        Catalog.builtin().canonical_family("gem")


def test_an_entry_stores_an_alias_under_its_canonical_family() -> None:
    entry = make_entry(families=("gemm", "matmul"), fundamental_for=("gemv",))
    assert entry.families == ("gemm",)
    assert entry.fundamental_for == ("gemm",)
    assert "- families: gemm\n" in render_entry(entry)


def test_an_entry_file_naming_an_alias_is_found_as_gemm_and_lint_asks_for_the_name(
    tmp_path: Path,
) -> None:
    entry = make_entry(families=("gemm",), fundamental_for=("gemm",), interactions=())
    path = write_entry(tmp_path, entry)
    text = path.read_text(encoding="utf-8")
    path.write_text(
        text.replace("- families: gemm\n", "- families: matmul\n").replace(
            "- fundamental_for: gemm\n", "- fundamental_for: mm\n"
        ),
        encoding="utf-8",
    )
    catalog = Catalog.load(tmp_path, with_builtin=False)
    assert [m.id for m in catalog.query(family="gemm")] == ["demo-trick"]
    assert [e.id for e in catalog.fundamentals("gemm")] == ["demo-trick"]
    problems = lint_tree(tmp_path)
    assert not [p for p in problems if p.is_error]
    messages = [p.message for p in problems]
    assert any("canonical form" in m and "gemm" in m for m in messages), messages
    assert not any("known family" in m for m in messages), messages


# --- `catalog fundamentals` --------------------------------------------------------------


def test_fundamentals_lists_what_the_library_lists(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "fundamentals", "--family", "mla-decode")
    expected_ids = [e.id for e in Catalog.builtin().fundamentals("mla-decode")]
    lines = out.splitlines()
    assert code == 0 and err == ""
    assert [line.split()[0] for line in lines] == expected_ids
    assert lines[0].split()[-3:] == ["fundamental", "for", "mla-decode"]
    assert lines[-1].endswith(
        "fundamental for any (a method for every kernel, not a technique of its family)"
    )


def test_fundamentals_json_says_which_family_each_is_fundamental_for(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = run(capsys, "fundamentals", "--family", "mla_decode", "--json")
    data = json.loads(out)
    assert code == 0
    assert [d["id"] for d in data] == [e.id for e in Catalog.builtin().fundamentals("mla-decode")]
    assert data[0]["fundamental_via"] == "mla-decode"
    assert data[-1]["fundamental_via"] == "any"
    assert all(d["fundamental_via"] in d["fundamental_for"] for d in data)
    assert all(d["path"].endswith(".md") for d in data)


def test_fundamentals_keeps_one_language_and_one_kind(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A Triton-only fundamental of gemm, and a shared anti-pattern fundamental for gemm.
    write_entry(tmp_path, make_entry(scope="triton", families=("gemm",), fundamental_for=("gemm",)))
    write_entry(
        tmp_path,
        make_entry(
            id="demo-pitfall", kind="anti-pattern", families=("gemm",), fundamental_for=("gemm",)
        ),
    )
    catalog = Catalog.load(tmp_path)
    every = [e.id for e in catalog.fundamentals("gemm")]
    assert every[:2] == ["demo-pitfall", "demo-trick"]
    assert [e.id for e in catalog.fundamentals("gemm", language="Triton")] == every
    cuda = [e.id for e in catalog.fundamentals("gemm", language="cuda")]
    assert cuda == [i for i in every if i != "demo-trick"]
    knowledge = ("--knowledge", str(tmp_path), "--family", "gemm")
    code, out, _ = run(capsys, "fundamentals", *knowledge, "--language", "cuda")
    assert code == 0 and [line.split()[0] for line in out.splitlines()] == cuda
    code, out, _ = run(capsys, "fundamentals", *knowledge, "--kind", "anti-pattern", "--json")
    assert code == 0 and [d["id"] for d in json.loads(out)] == ["demo-pitfall"]
    with pytest.raises(InputError, match=r"language: Expected a language in .*, got 'rust'"):
        catalog.fundamentals("gemm", language="rust")


def test_fundamentals_reads_a_knowledge_tree(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_entry(tmp_path, make_entry(families=("gemm",), fundamental_for=("gemm",)))
    code, out, _ = run(capsys, "fundamentals", "--family", "gemv", "--knowledge", str(tmp_path))
    assert code == 0
    assert out.splitlines()[0].split() == [
        "demo-trick",
        "optimization",
        "shared",
        "fundamental",
        "for",
        "gemm",
    ]


def test_fundamentals_with_none_recorded_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_entry(tmp_path, make_entry(families=("gemm",)))
    code, out, _ = run(
        capsys, "fundamentals", "--family", "softmax", "--kind", "anti-pattern",
        "--knowledge", str(tmp_path), "--language", "cutile",
    )  # fmt: skip
    assert code == 0
    assert out == "no standard techniques recorded for softmax or its ancestors\n"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((), "Expected the required --family, got none"),
        (("--family", "bogus"), "--family: Expected a kernel family among"),
    ],
)
def test_fundamentals_refuses_a_missing_or_unknown_family(
    args: tuple[str, ...], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    try:
        code = cli.main(["catalog", "fundamentals", *args])
    except SystemExit as exit_:  # argparse's own refusals end the parse
        code = exit_.code
    out, err = capsys.readouterr()
    assert code == 2 and out == "" and message in err


def test_the_catalog_help_and_page_name_the_fundamentals_subcommand(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit):
        cli.main(["catalog", "--help"])
    out = capsys.readouterr().out
    assert re.search(r"^\s+fundamentals\s+the standard techniques of a family$", out, re.M)
    page = DOCS.read_text(encoding="utf-8")
    assert "$ kernelopt catalog fundamentals --family gemm --language triton\n" in page
    assert "| `fundamentals` |" in page


# --- where each metric comes from --------------------------------------------------------


def _vocabulary_row(page: str, label: str) -> str:
    found = re.search(rf"^\| {re.escape(label)} \| (.*) \|$", page, re.M)
    assert found is not None, f"Expected a vocabulary row {label!r}"
    return found[1]


def _names_in(cell: str) -> list[str]:
    return [n for n in re.findall(r"`([a-z_0-9]+)`", cell) if n in METRICS]


def test_the_page_says_which_metrics_kernelopt_bench_computes() -> None:
    page = DOCS.read_text(encoding="utf-8")
    computed = _names_in(_vocabulary_row(page, "Metrics computed by `kernelopt.bench`"))
    given = _names_in(_vocabulary_row(page, "Metrics you measure and pass in"))
    # Every metric of the vocabulary is on one row, once.
    assert sorted(computed + given) == sorted(METRICS)
    ceilings = Ceilings(gpu="g", copy_bytes_per_s=1e12, matmul_flop_per_s=1e15)
    point = Roofline(ceilings=ceilings, cost=copy_cost(1 << 20)).place(
        5.0, launch_overhead_pct=12.0
    )
    tuning = TuningResult(
        best_config=None, best=None, start=None, trials=(), space_size=1, pruned=0,
        stop_reason="exhausted", elapsed_s=0.0,
    )  # fmt: skip
    produced = set(point.metrics()) | set(tuning.metrics())
    assert set(computed) == produced & set(METRICS)
    assert "waves" in given and "Metrics (from `kernelopt.bench`)" not in page


# --- keywords match as whole phrases -----------------------------------------------------


def _split_kv_catalog() -> Catalog:
    return Catalog(
        [make_entry(keywords=("split-kv", "split kv", "num_splits"), name="Split KV Decode")]
    )


@pytest.mark.parametrize("text", ["split-K GEMV path for M=1", "split_k gemm", "splitkv2"])
def test_a_keyword_is_not_named_by_a_prefix_of_it(text: str) -> None:
    catalog = _split_kv_catalog()
    assert catalog.tag(text) == []
    assert [m for m in catalog.query(keyword=text) if any("names" in r for r in m.reasons)] == []


@pytest.mark.parametrize("text", ["split kv", "SPLIT_KV decode", "split-kv", "num-splits=16"])
def test_a_keyword_is_named_in_any_spelling_of_its_separators(text: str) -> None:
    assert [m.id for m in _split_kv_catalog().tag(text)] == ["demo-trick"]

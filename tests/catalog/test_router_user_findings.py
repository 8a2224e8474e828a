"""A Triton MoE router (softmax, top-k, permutation) meets the catalog.

The workload and the catalog speak of the same kernels: every family a built-in workload
signature names is a catalog family, and the router's families (``moe``, ``topk``,
``gather``) are accepted wherever a family is read. A top-k profile gets the entries its
workload shortcuts link to (top-1 is an argmax, k >= n a sort) and not the shared-index
gather, whose shape condition every top-k meets.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import torch

from kernelopt import cli
from kernelopt.catalog import FAMILIES, Catalog, family_ancestors
from kernelopt.catalog.vocabulary import normalize_family
from kernelopt.workload import (
    Call,
    ScalarArg,
    TensorArg,
    find_shortcuts,
    profile_calls,
    write_profile_md,
)
from kernelopt.workload.signatures import BUILTIN_SIGNATURES

CATALOG = Catalog.builtin()
# The router's expert counts and token counts the user profiled: every n with every rows.
EXPERTS = (8, 64, 256)
TOKENS = (1, 17, 4097)


def _topk_calls(k: Callable[[int], int]) -> list[Call]:
    """One top-k call per (tokens, experts) pair: logits [tokens, experts] float16, k(n)."""
    return [
        Call(
            op="topk",
            args=(
                TensorArg(name="logits", shape=(rows, n), dtype="float16"),
                ScalarArg(name="k", value=k(n)),
            ),
        )
        for rows in TOKENS
        for n in EXPERTS
    ]


def _profile(tmp_path: Path, calls: list[Call], name: str) -> Path:
    path = tmp_path / f"{name}_profile.md"
    write_profile_md(profile_calls(calls), path)
    return path


def _gather_calls() -> list[Call]:
    """A gather of 64 of 4096 columns with an expanded index (stride 0 along the rows)."""
    call = Call(
        op="gather",
        args=(
            TensorArg(name="x", shape=(32, 4096), dtype="bfloat16"),
            ScalarArg(name="dim", value=1),
            TensorArg(name="index", shape=(32, 64), dtype="int64", stride=(0, 1)),
        ),
    )
    return [call] * 4


def _match_ids(capsys: pytest.CaptureFixture[str], *args: str) -> list[str]:
    assert cli.main(["catalog", "match", *args, "--json"]) == 0
    return [item["id"] for item in json.loads(capsys.readouterr().out)]


# --- one vocabulary of kernel families -----------------------------------------------------


def test_every_family_a_builtin_workload_signature_names_is_a_catalog_family() -> None:
    named = {signature.family for signature in BUILTIN_SIGNATURES}
    assert [f for f in sorted(named) if normalize_family(f) not in FAMILIES] == []


@pytest.mark.parametrize(
    ("typed", "chain"),
    [
        ("topk", ("topk", "reduction", "any")),
        ("top_k", ("topk", "reduction", "any")),
        ("moe", ("moe-routing", "topk", "reduction", "any")),
        ("MoE router", ("moe-routing", "topk", "reduction", "any")),
        ("gather", ("gather", "any")),
        ("index_select", ("gather", "any")),
        ("take_along_dim", ("gather", "any")),
    ],
)
def test_the_router_families_sit_in_the_family_tree(typed: str, chain: tuple[str, ...]) -> None:
    assert family_ancestors(typed) == chain
    assert CATALOG.canonical_family(typed) == chain[0]


@pytest.mark.parametrize("family", ["moe", "topk", "gather", "top-k", "index_select"])
def test_fundamentals_list_and_match_accept_the_router_families(
    family: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["catalog", "fundamentals", "--family", family]) == 0
    assert "cuda-event-instrumentation" in capsys.readouterr().out
    assert cli.main(["catalog", "list", "--family", family]) == 0
    assert "size-1-axis-shortcut" in capsys.readouterr().out
    shape = ["--shape", "select_k=1", "--shape", "select_n=64"]
    assert cli.main(["catalog", "match", "--family", family, *shape]) == 0
    captured = capsys.readouterr()
    # moe is read as the router; the note on stderr says so, and nothing else is said.
    note = (
        "kernelopt catalog: note: moe is read as moe-routing; an MoE layer's expert GEMMs "
        "are gemm\n"
    )
    assert "size-1-axis-shortcut" in captured.out
    assert captured.err == (note if family == "moe" else "")


def test_the_gather_entry_belongs_to_gathers_only() -> None:
    entry = CATALOG.get("gather-index-select")
    assert entry.families == ("gather",)
    listed = {m.entry.id for m in CATALOG.query(family="gather")}
    assert "gather-index-select" in listed
    for family in ("topk", "moe", "softmax", "any"):
        assert "gather-index-select" not in {m.entry.id for m in CATALOG.query(family=family)}
    # Its keywords name no top-k: a search for one is not answered with the gather.
    assert not any("top" in keyword for keyword in entry.keywords)


# --- a top-k profile gets what its shortcuts link to, not the gather -----------------------


@pytest.mark.parametrize(
    ("name", "k", "fact"),
    [("k1", lambda n: 1, "select_k == 1"), ("kE", lambda n: n, "select_k >= select_n")],
)
def test_a_top_k_profile_matches_what_its_shortcuts_link_to(
    name: str,
    k: Callable[[int], int],
    fact: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    calls = _topk_calls(k)
    linked = {i for s in find_shortcuts(profile_calls(calls)) for i in s.catalog_ids}
    assert linked == {"size-1-axis-shortcut"}
    profile = _profile(tmp_path, calls, name)
    assert cli.main(["catalog", "match", "--profile", str(profile)]) == 0
    out = capsys.readouterr().out
    assert out.split()[1] == "size-1-axis-shortcut" and f"shape {fact} (" in out
    assert "applies to topk (via any)" in out and "gather-index-select" not in out
    ids = _match_ids(capsys, "--profile", str(profile), "--family", "softmax")
    assert ids == ["size-1-axis-shortcut"]


def test_a_top_k_of_neither_one_nor_all_matches_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    calls = _topk_calls(lambda n: 8 if n > 8 else 2)
    assert [s for s in find_shortcuts(profile_calls(calls)) if s.catalog_ids] == []
    assert _match_ids(capsys, "--profile", str(_profile(tmp_path, calls, "k8"))) == []


def test_a_gather_profile_still_finds_the_gather_entry(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    calls = _gather_calls()
    linked = {i for s in find_shortcuts(profile_calls(calls)) for i in s.catalog_ids}
    assert "gather-index-select" in linked
    profile = _profile(tmp_path, calls, "gather")
    assert linked <= set(_match_ids(capsys, "--profile", str(profile)))
    assert cli.main(["catalog", "match", "--profile", str(profile)]) == 0
    out = capsys.readouterr().out
    assert "applies to gather\n" in out and "size-1-axis-shortcut" not in out


def test_a_typed_family_wins_over_the_profile_op(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    profile = _profile(tmp_path, _gather_calls(), "gather")
    assert "gather-index-select" not in _match_ids(
        capsys, "--profile", str(profile), "--family", "topk"
    )


# --- the size-1 entry says what top-1 and select-all are, and is found by those words ------


@pytest.mark.parametrize(("words", "first"), [("top-k", 1), ("argmax", 1), ("top-1", 1)])
def test_top_k_words_find_the_size_1_shortcut_first(
    words: str, first: int, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["catalog", "search", words]) == 0
    out = capsys.readouterr().out
    assert out.split()[first] == "size-1-axis-shortcut" and "gather-index-select" not in out


def test_a_top_k_experiment_is_no_size_1_shortcut_but_a_top_1_as_argmax_is() -> None:
    # Keywords tag experiment descriptions: "top-k" alone names no technique.
    assert CATALOG.tag("exp 3: triton top-k router with a bitonic merge") == []
    tagged = [m.entry.id for m in CATALOG.tag("exp 4: top-1 routing as an argmax")]
    assert tagged == ["size-1-axis-shortcut"]


def _topk_lastdim() -> Callable[..., Any]:
    code = CATALOG.get("size-1-axis-shortcut").implementation
    block = re.search(r"```python\n(.*?)```", code, re.DOTALL)
    namespace: dict[str, Any] = {"torch": torch}
    exec(block.group(1) if block else code, namespace)  # the entry's own text, a module we ship
    return namespace["topk_lastdim"]  # type: ignore[no-any-return]


@pytest.mark.parametrize("n", [1, 8, 64])
def test_the_top_k_shortcuts_give_torch_topk_values(n: int) -> None:
    topk_lastdim = _topk_lastdim()
    x = torch.randn(17, n, generator=torch.Generator().manual_seed(n))
    x[0, 0] = float("nan")  # top-k ranks NaN first; max and a descending sort do too
    for k in (1, n):
        values, indices = topk_lastdim(x, k)
        expected = torch.topk(x, k, dim=-1)
        assert torch.equal(values.isnan(), expected.values.isnan())
        assert torch.equal(values.nan_to_num(), expected.values.nan_to_num())
        # The indices pick the same values (random floats: no ties to reorder).
        picked = torch.gather(x, -1, indices)
        assert torch.equal(picked.nan_to_num(), expected.values.nan_to_num())

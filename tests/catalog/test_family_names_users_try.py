"""Family names users type for their own kernels: an alias that could mean two kernels
(moe) says which one it is read as; RoPE is elementwise; a kernel with no family of its
own (a KV-cache append, an fp8 quantizer) is refused with the nearest family; a near
spelling gets a "did you mean". A family's only fundamental being a measurement method
is said to be one."""

from __future__ import annotations

import pytest

from kernelopt import InputError, cli
from kernelopt.catalog import Catalog
from kernelopt.catalog.vocabulary import family_alias_note, nearest_family

CATALOG = Catalog.builtin()
MOE_NOTE = "moe is read as moe-routing; an MoE layer's expert GEMMs are gemm"


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = cli.main(["catalog", *args])
    out, err = capsys.readouterr()
    return code, out, err


# --- moe: the router, not the expert GEMMs -------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [
        ("fundamentals", "--family", "moe"),
        ("list", "--family", "MoE"),
        ("match", "--family", "moe", "--shape", "select_k=1", "--shape", "select_n=64"),
        ("list", "--family", "moe", "--json"),
    ],
)
def test_moe_says_it_is_read_as_the_router(
    args: tuple[str, ...], capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, *args)
    assert code == 0 and out
    assert err.splitlines()[0] == f"kernelopt catalog: note: {MOE_NOTE}"


@pytest.mark.parametrize("family", ["moe-routing", "moe-router", "gemm", "topk"])
def test_names_of_one_kernel_get_no_note(family: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "list", "--family", family)
    assert code == 0 and err == ""


def test_the_note_is_in_the_vocabulary_for_other_readers() -> None:
    assert family_alias_note("MoE") == MOE_NOTE
    assert family_alias_note("moe_routing") is None
    assert family_alias_note(3) is None


# --- kernels named as families -------------------------------------------------------------


@pytest.mark.parametrize("typed", ["rope", "RoPE", "rotary", "rotary_embedding"])
def test_rope_is_elementwise(typed: str) -> None:
    assert CATALOG.canonical_family(typed) == "elementwise"


@pytest.mark.parametrize(
    ("typed", "nearest", "why"),
    [
        ("kv-cache-append", "elementwise", "a scatter into a (paged) cache"),
        ("reshape_and_cache", "elementwise", "a scatter into a (paged) cache"),
        ("quantization", "reduction", "a per-token or per-block quantizer"),
        ("quant", "reduction", "a per-token or per-block quantizer"),
        ("per_token_fp8_quant", "reduction", "a per-token or per-block quantizer"),
        ("dequant", "elementwise", "a dequantizer scales each element"),
        ("apply_rotary_emb", "elementwise", "a rotary embedding"),
    ],
)
def test_a_kernel_with_no_family_is_refused_with_the_nearest(
    typed: str, nearest: str, why: str, capsys: pytest.CaptureFixture[str]
) -> None:
    name = typed.lower().replace("_", "-")
    with pytest.raises(InputError, match=rf"got '{typed}'; {name} names a kernel with no family"):
        CATALOG.canonical_family(typed)
    code, out, err = run(capsys, "fundamentals", "--family", typed)
    assert (code, out) == (2, "")
    assert f"got '{typed}'; {name} names a kernel with no family of its own, nearest " in err
    assert f"nearest {nearest}: {why}" in err
    # The family named is one the commands take.
    assert run(capsys, "list", "--family", nearest)[0] == 0


def test_a_near_spelling_gets_a_did_you_mean(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "list", "--family", "elementwize")
    assert code == 2 and err.endswith("got 'elementwize'; did you mean 'elementwise'?\n")
    code, _, err = run(capsys, "list", "--family", "bogus")
    assert code == 2 and err.endswith("got 'bogus'\n")


def test_families_and_aliases_have_no_nearest() -> None:
    for name in ("gemm", "moe", "rope", "any", "reduction", "Top_K"):
        assert nearest_family(name) is None
    assert nearest_family("europe") is None  # "rope" only where no letter comes before


# --- fundamentals: a measurement method says it is one -------------------------------------


def test_a_method_fundamental_for_any_is_said_to_be_one(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = run(capsys, "fundamentals", "--family", "elementwise")
    assert code == 0
    assert " ".join(out.split()) == (
        "cuda-event-instrumentation optimization shared fundamental for any "
        "(a method for every kernel, not a technique of its family)"
    )
    assert err == (
        "kernelopt catalog: note: no technique is recorded as standard for elementwise or "
        "its ancestors; what is listed is fundamental for any, a method for every kernel, "
        "not a technique of its family\n"
    )
    # A family with techniques of its own lists them first and needs no note.
    code, out, err = run(capsys, "fundamentals", "--family", "gemm")
    assert code == 0 and err == "" and out.splitlines()[0].endswith("fundamental for gemm")

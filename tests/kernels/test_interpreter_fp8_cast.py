"""The catalog's ``triton-interpreter-fp8-cast`` entry, measured.

Under ``TRITON_INTERPRET=1`` Triton 3.6 casts float32 to ``tl.float8e4nv`` in software and
loses the rounding carry (31.45 → 16) and NaN; the entry's helper rounds onto the e4m3 grid
in float32 first, so the cast only repacks exact values. These tests hold the helper to
torch's cast, code for code, on the values the entry's evidence names, and record what the
plain cast gives where it runs (the share of codes that differ), without asserting the
interpreter's defect: a Triton that fixes it must not fail them.
"""

from __future__ import annotations

import re

import pytest
import torch
import triton
import triton.language as tl

from kernelopt.catalog import Catalog

_BLOCK = 1024


@triton.jit
def _round_e4m3(v):
    # The entry's Implementation helper, kept equal to it by test_entry_shows_this_helper.
    a = tl.abs(v)
    e = tl.floor(tl.log2(tl.maximum(a, 2.0**-6)))
    step = tl.exp2(e - 3)
    r = ((a / step + 12582912.0) - 12582912.0) * step
    # A zero is returned as given: -0.0 keeps its sign (negating 0.0 interpreted may not).
    return tl.where(a == 0, v, r * tl.where(v < 0, -1.0, 1.0))


@triton.jit
def _store_e4m3(x_ptr, y_ptr, n, ROUND_FIRST: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    if ROUND_FIRST:
        x = _round_e4m3(x)
    tl.store(y_ptr + offs, x.to(tl.float8e4nv), mask=mask)


def _values() -> torch.Tensor:
    """The evidence's 69 632 values: randn × 8, randn × 0.01 (subnormals), named cases."""
    g = torch.Generator().manual_seed(0)
    named = torch.tensor([31.45, 7.95, 0.0, -0.0, 447.0, -0.00195, 1.0625, 240.0])
    x = torch.cat(
        [torch.randn(1 << 16, generator=g) * 8, torch.randn(4088, generator=g) * 1e-2, named]
    )
    assert x.numel() == 69_632
    return x


def _cast(x: torch.Tensor, *, round_first: bool) -> torch.Tensor:
    device = "cuda" if torch.cuda.is_available() else "cpu"
    x = x.to(device)
    y = torch.full(x.shape, float("nan"), dtype=torch.float32, device=device).to(
        torch.float8_e4m3fn
    )
    _store_e4m3[(triton.cdiv(x.numel(), _BLOCK),)](
        x, y, x.numel(), ROUND_FIRST=round_first, BLOCK=_BLOCK
    )
    return y.cpu()


def test_helper_gives_torchs_codes() -> None:
    x = _values()
    got = _cast(x, round_first=True)
    want = x.to(torch.float8_e4m3fn)
    differ = (got.view(torch.uint8) != want.view(torch.uint8)).sum().item()
    assert differ == 0, (
        f"Expected the helper's e4m3 codes to equal torch's cast, got {differ} differing"
    )


def test_plain_cast_named_values_are_recorded() -> None:
    # What the plain cast gives; on Triton 3.6's interpreter 31.45 → 16 and 7.95 → 4.
    x = torch.tensor([31.45, 7.95, 1.0, 0.3])
    got = _cast(x, round_first=False).float()
    want = x.to(torch.float8_e4m3fn).float()
    assert torch.isfinite(got).all()
    # Values the cast gets right everywhere (no carry): 1.0 and 0.3125.
    assert got[2:].tolist() == want[2:].tolist() == [1.0, 0.3125]


def test_entry_shows_this_helper() -> None:
    entry = Catalog.builtin().get("triton-interpreter-fp8-cast")
    code = entry.implementation
    for line in ("tl.floor(tl.log2(tl.maximum(a, 2.0 ** -6)))", "tl.exp2(e - 3)", "12582912.0"):
        assert line in code, line
    assert re.search(r"tests/kernels/test_interpreter_fp8_cast\.py", entry.evidence[0].source)


@pytest.mark.skipif(
    torch.cuda.is_available() or not triton.__version__.startswith("3.6."),
    reason="the entry's evidence is Triton 3.6's interpreter",
)
def test_interpreter_share_of_differing_codes_is_what_the_entry_says() -> None:
    # The entry's evidence: 2.3 % of randn × 8 codes differ under Triton 3.6's interpreter,
    # and 31.45, 7.95 and NaN come out 16, 4 and 384.
    x = _values()[: 1 << 16]
    got = _cast(x, round_first=False)
    want = x.to(torch.float8_e4m3fn)
    share = (got.view(torch.uint8) != want.view(torch.uint8)).float().mean().item()
    assert round(share * 100, 1) == 2.3, share
    named = _cast(torch.tensor([31.45, 7.95, float("nan")]), round_first=False).float()
    assert named.tolist() == [16.0, 4.0, 384.0]

"""docs/mla.md's claims, as a user reads them: the pair's metadata checks, errors, names.

On the CPU the FlashMLA pair reads its metadata's pieces (host tensors cost no
synchronization), so a copy of the metadata, which carries no record of the lengths it was
made for, is held to ``cache_seqlens`` there: every key covered once, ``num_splits`` its
prefix sums, each split piece writing a slot of its own sequence.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import torch

from kernelopt._errors import InputError
from kernelopt.kernels.mla import (
    MLADecodePlan,
    get_mla_metadata,
    mla_decode_ref,
    mla_decode_with_kvcache,
    split_kv_resources,
)
from kernelopt.kernels.mla.schedule import WorkUnit

# Inputs are CPU tensors: on the CPU the pair reads its pieces and the plan runs there.
cpu_only = pytest.mark.skipif(torch.cuda.is_available(), reason="CPU plans and pieces only")

PAGE = 16
SCALE = 192**-0.5
DOC = Path(__file__).resolve().parents[2] / "docs" / "mla.md"


def _inputs(
    seqlens: tuple[int, ...], *, s_q: int = 1, h_q: int = 2
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Random ``q [b, s_q, h_q, 576]``, a cache of shuffled pages and its block table.

    The table is one page wider than the longest sequence needs, so a sequence one key
    longer than the metadata's still fits it and only the pieces can refuse it.
    """
    gen = torch.Generator().manual_seed(sum(seqlens) * 7 + s_q)
    width = -(-max(seqlens) // PAGE) + 1
    num_blocks = len(seqlens) * width
    q = torch.randn(len(seqlens), s_q, h_q, 576, generator=gen)
    kv = torch.randn(num_blocks, PAGE, 1, 576, generator=gen)
    table = torch.randperm(num_blocks, generator=gen).view(len(seqlens), width)
    return q, kv, table.to(torch.int32)


def _lengths(*values: int) -> torch.Tensor:
    return torch.tensor(values, dtype=torch.int32)


def _call(
    q: torch.Tensor,
    kv: torch.Tensor,
    table: torch.Tensor,
    seqlens: torch.Tensor,
    meta: torch.Tensor,
    splits: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor]:
    return mla_decode_with_kvcache(q, kv, table, seqlens, 512, meta, splits, SCALE)


@cpu_only
def test_copied_metadata_for_the_previous_lengths_is_refused() -> None:
    # A serving loop that keeps a copy of last step's metadata: each sequence grew by one
    # key, and the pieces stop at the old lengths. The answer lost those keys, no error.
    old = _lengths(70, 17)
    q, kv, table = _inputs((71, 18))
    meta, splits = get_mla_metadata(old, 2, 1)
    copy, copy_splits = meta.clone(), splits.clone()
    message = (
        r"tile_scheduler_metadata: Expected pieces of sequence 0 that cover its keys \[0, 71\)"
    )
    with pytest.raises(InputError, match=message) as refused:
        _call(q, kv, table, _lengths(71, 18), copy, copy_splits)
    assert "make the metadata again" in str(refused.value)
    assert str(refused.value).endswith("got [0, 64), [64, 70)")
    # The page quotes this message word for word.
    assert str(refused.value) in " ".join(DOC.read_text(encoding="utf-8").split())
    # The copy with the lengths it was made for still runs, and right.
    out, _ = _call(q, kv, table, old, copy, copy_splits)
    ref_out, _ = mla_decode_ref(q, kv, table, old, softmax_scale=SCALE)
    assert float((out.double() - ref_out).norm() / ref_out.norm()) < 2e-6


@cpu_only
def test_metadata_that_leaves_a_sequence_out_is_refused() -> None:
    # Sequence 1's output would be left as torch.empty gave it.
    q, kv, table = _inputs((40, 17))
    meta = torch.tensor([[0, 0, 40, -1], [0, 0, 40, -1]], dtype=torch.int32)
    splits = torch.tensor([0, 1, 2], dtype=torch.int32)
    with pytest.raises(InputError, match=r"sequence 0 .* got \[0, 40\), \[0, 40\)"):
        _call(q, kv, table, _lengths(40, 17), meta, splits)
    gap = torch.tensor([[0, 0, 16, 0], [0, 32, 40, 1], [1, 0, 17, -1]], dtype=torch.int32)
    with pytest.raises(InputError, match=r"sequence 0 .* got \[0, 16\), \[32, 40\)"):
        _call(q, kv, table, _lengths(40, 17), gap, torch.tensor([0, 2, 3], dtype=torch.int32))


@cpu_only
def test_num_splits_that_are_not_the_pieces_prefix_sums_are_refused() -> None:
    # The merge reads slots num_splits[b] ... num_splits[b + 1] - 1 of the workspace.
    q, kv, table = _inputs((40, 17))
    meta = torch.tensor([[0, 0, 16, 0], [0, 16, 40, 1], [1, 0, 17, -1]], dtype=torch.int32)
    wrong = torch.tensor([0, 1, 3], dtype=torch.int32)
    message = r"num_splits: Expected the prefix sums .* \(\[0, 2, 3\]\), got \[0, 1, 3\]"
    with pytest.raises(InputError, match=message):
        _call(q, kv, table, _lengths(40, 17), meta, wrong)
    out, _ = _call(q, kv, table, _lengths(40, 17), meta, torch.tensor([0, 2, 3]).int())
    ref_out, _ = mla_decode_ref(q, kv, table, _lengths(40, 17), softmax_scale=SCALE)
    assert float((out.double() - ref_out).norm() / ref_out.norm()) < 2e-6


@cpu_only
def test_a_slot_outside_its_sequence_is_refused_before_it_is_written() -> None:
    # The workspace holds one slot a piece: slot 7 would be written past it.
    q, kv, table = _inputs((40, 17))
    splits = torch.tensor([0, 2, 3], dtype=torch.int32)
    for slots, shown in (((0, 7, -1), r"\[0, 7\]"), ((0, 1, 2), r"\[2\]")):
        meta = torch.tensor(
            [[0, 0, 16, slots[0]], [0, 16, 40, slots[1]], [1, 0, 17, slots[2]]],
            dtype=torch.int32,
        )
        with pytest.raises(InputError, match=rf"tile_scheduler_metadata: .* got {shown}$"):
            _call(q, kv, table, _lengths(40, 17), meta, splits)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"strategy": ""}, r"strategy: Expected strategy .* or 'seesaw', got ''$"),
        ({"strategy": "hopper", "kv_fp8": True}, r"strategy: Expected .* got 'hopper'$"),
        ({"pair_merge": True}, r"strategy: Expected strategy 'seesaw' .* got 'split_kv'$"),
        (
            {"strategy": "seesaw", "dtype": "float32"},
            r"Expected a 16-bit dtype .* got dtype 'float32', capability 90$",
        ),
    ],
)
def test_resources_name_the_strategy_as_the_plan_does(options, message) -> None:
    # An empty strategy read "got " with nothing after it.
    with pytest.raises(InputError, match=message):
        split_kv_resources(s_q=1, h_q=16, **options)


def test_plan_names_a_strategy_that_cannot_read_fp8_quoted() -> None:
    with pytest.raises(InputError, match=r"strategy: Expected .* \(kv_fp8=True\), got 'naive'$"):
        MLADecodePlan(
            [5], s_q=1, h_q=2, page_size=PAGE, softmax_scale=SCALE, dtype=torch.float32,
            strategy="naive", kv_fp8=True,
        )  # fmt: skip


def test_work_units_are_built_by_keyword_as_the_page_shows() -> None:
    # The page showed WorkUnit(batch, split, key_start, key_end), a TypeError as written.
    page = DOC.read_text(encoding="utf-8")
    assert "`WorkUnit(batch=, split=, key_start=, key_end=)`, keyword-only" in page
    unit = WorkUnit(batch=0, split=1, key_start=16, key_end=40)
    assert unit.num_keys == 24
    with pytest.raises(TypeError):
        WorkUnit(0, 1, 16, 40)  # type: ignore[misc]


@cpu_only
def test_run_names_q_on_another_device_than_planned() -> None:
    # "Running checks shapes, dtypes, devices ... against the plan": a q on another device
    # was reported as a cache on the wrong one ("kv_cache: Expected device meta (as q)").
    q, kv, table = _inputs((40, 17))
    plan = MLADecodePlan(
        _lengths(40, 17), s_q=1, h_q=2, page_size=PAGE, softmax_scale=SCALE, dtype=torch.float32
    )
    with pytest.raises(InputError, match=r"^q: Expected device cpu \(as planned\), got meta$"):
        plan.run(q.to("meta"), kv, table)


def test_the_anchors_the_page_cites_are_files_of_the_repository() -> None:
    # The page cited anchors/h200-2026-12-02.json, a path no checkout has.
    repo = DOC.parents[1]
    cited = re.findall(r"`([\w./-]*anchors[\w.-]*\.json)`", DOC.read_text(encoding="utf-8"))
    assert cited, "the page cites its anchors"
    assert [path for path in cited if not (repo / path).is_file()] == []

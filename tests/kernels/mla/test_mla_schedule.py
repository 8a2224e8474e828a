"""The split-KV scheduler, as pure Python: coverage, balance, cost optimality, restraint."""

from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kernelopt import InputError
from kernelopt.kernels.mla.schedule import (
    Schedule,
    build_schedule,
    estimate_cost,
    plan_schedule,
    split_ranges,
)

seqlens_st = st.lists(st.integers(1, 5000), min_size=1, max_size=40)
block_st = st.sampled_from([16, 32, 64])


def _check_coverage(s: Schedule) -> None:
    # Every key of every sequence in exactly one piece, pieces contiguous and tile-aligned.
    by_batch: dict[int, list] = {}
    for u in s.units:
        by_batch.setdefault(u.batch, []).append(u)
    assert sorted(by_batch) == list(range(len(s.seqlens)))
    for b, units in by_batch.items():
        units.sort(key=lambda u: u.split)
        assert [u.split for u in units] == list(range(s.splits[b]))
        assert units[0].key_start == 0
        assert units[-1].key_end == s.seqlens[b]
        for prev, nxt in itertools.pairwise(units):
            assert prev.key_end == nxt.key_start
        for u in units:
            assert u.key_start % s.block_n == 0
            assert u.key_end > u.key_start
        tiles = [math.ceil(u.num_keys / s.block_n) for u in units]
        assert max(tiles) - min(tiles) <= 1, f"unbalanced pieces {tiles}"


def _check_tables(s: Schedule) -> None:
    offsets = s.split_offsets
    assert offsets[0] == 0 and len(offsets) == len(s.seqlens) + 1
    assert offsets[-1] == s.num_units
    slots = set()
    for row, u in zip(s.table(), s.units, strict=True):
        assert row[:3] == [u.batch, u.key_start, u.key_end]
        if s.splits[u.batch] == 1:
            assert row[3] == -1
        else:
            assert offsets[u.batch] <= row[3] < offsets[u.batch + 1]
            slots.add(row[3])
    assert len(slots) == sum(n for n in s.splits if n > 1)
    # Dispatch order: most keys first.
    keys = [u.num_keys for u in s.units]
    assert keys == sorted(keys, reverse=True)


@settings(max_examples=200, deadline=None)
@given(
    seqlens=seqlens_st,
    block_n=block_st,
    m_tiles=st.integers(1, 32),
    slots=st.integers(1, 264),
    max_splits=st.none() | st.integers(1, 64),
)
def test_plan_covers_every_key_once(seqlens, block_n, m_tiles, slots, max_splits) -> None:
    s = plan_schedule(
        seqlens, block_n=block_n, m_tiles=m_tiles, num_slots=slots, max_splits=max_splits
    )
    _check_coverage(s)
    _check_tables(s)
    assert s.has_splits == any(n > 1 for n in s.splits)
    if max_splits is not None:
        assert max(s.splits) <= max_splits
    assert max(s.splits) <= slots


@settings(max_examples=150, deadline=None)
@given(seqlens=seqlens_st, block_n=block_st, m_tiles=st.integers(1, 8), slots=st.integers(1, 200))
def test_plan_is_optimal_for_its_cost_model(seqlens, block_n, m_tiles, slots) -> None:
    # The search space: chunks ceil(longest / n) for n = 1 .. slots pieces of the longest
    # sequence; brute force it through build_schedule and the plain cost estimate.
    s = plan_schedule(seqlens, block_n=block_n, m_tiles=m_tiles, num_slots=slots, tolerance=0.0)
    longest = max(math.ceil(n / block_n) for n in seqlens)
    for pieces in range(1, min(longest, slots) + 1):
        chunk = math.ceil(longest / pieces)
        splits = [math.ceil(math.ceil(n / block_n) / chunk) for n in seqlens]
        other = build_schedule(seqlens, splits, block_n=block_n, m_tiles=m_tiles, num_slots=slots)
        assert s.est_cost <= other.est_cost + 1e-9


@settings(max_examples=100, deadline=None)
@given(
    seqlen=st.integers(1, 20000),
    batch_waves=st.integers(1, 4),
    slots=st.integers(1, 200),
    m_tiles=st.integers(1, 4),
)
def test_full_device_is_never_split(seqlen, batch_waves, slots, m_tiles) -> None:
    # Equal lengths whose programs fill whole waves already: splitting only adds overhead.
    if (batch_waves * slots) % m_tiles:
        return
    batch = batch_waves * slots // m_tiles
    s = plan_schedule([seqlen] * batch, block_n=64, m_tiles=m_tiles, num_slots=slots)
    assert not s.has_splits
    assert s.num_units == batch


def test_long_single_sequence_is_spread_over_the_device() -> None:
    s = plan_schedule([65536], block_n=64, m_tiles=1, num_slots=132)
    assert 64 <= s.num_units <= 132
    assert s.est_cost < 0.1 * estimate_cost([(1024, 1)], m_tiles=1, num_slots=132)


def test_trial_matrix_plans() -> None:
    # b=32, t=4096 on 132 SMs: the memory-bound h=16 point splits to fill the device,
    # the h=128 s=16 point (32 row tiles a sequence) already has 1024 programs.
    h16 = plan_schedule([4096] * 32, block_n=64, m_tiles=1, num_slots=264)
    assert h16.has_splits and h16.num_units * 1 <= 264
    h128_s16 = plan_schedule([4096] * 32, block_n=32, m_tiles=32, num_slots=132)
    assert not h128_s16.has_splits


def test_mixed_lengths_split_only_the_long_ones() -> None:
    s = plan_schedule([8000] + [40] * 7, block_n=32, m_tiles=1, num_slots=64)
    assert s.splits[0] > 1
    assert all(n == 1 for n in s.splits[1:])
    assert s.units[0].batch == 0  # the longest pieces go first


def test_estimate_cost_counts_waves() -> None:
    # 5 programs of 10 tiles on 2 slots: 3 waves of 10 + overhead 1.
    assert estimate_cost([(10, 5)], m_tiles=1, num_slots=2, overhead_tiles=1) == 33
    # Longest first: [9, 9, 3, 3] on 2 slots -> waves led by 9 and 3.
    assert estimate_cost([(3, 2), (9, 2)], m_tiles=1, num_slots=2, overhead_tiles=0) == 12
    assert estimate_cost([(4, 1)], m_tiles=3, num_slots=2, overhead_tiles=0) == 8


def test_split_ranges_balance_and_alignment() -> None:
    assert split_ranges(130, 3, 16) == [(0, 48), (48, 96), (96, 130)]
    assert split_ranges(1, 1, 64) == [(0, 1)]
    with pytest.raises(InputError, match="Expected between 1 and 3 pieces, got 4"):
        split_ranges(40, 4, 16)


def test_uniform_pieces_only_when_every_sequence_has_the_same_count() -> None:
    # The merge computes slots b · n + j only when every sequence has the same n >= 2.
    assert build_schedule([4096] * 3, 4, block_n=64).uniform_pieces == 4
    assert build_schedule([130], 9, block_n=16).uniform_pieces == 9
    assert build_schedule([17, 100], 1000, block_n=16).uniform_pieces == 0  # 2 and 7
    assert build_schedule([300, 300], 1, block_n=16).uniform_pieces == 0  # nothing to merge
    h16 = plan_schedule([4096] * 32, block_n=64, m_tiles=1, num_slots=264)
    assert h16.uniform_pieces == h16.splits[0] > 1
    assert plan_schedule([8000] + [40] * 7, block_n=32, m_tiles=1, num_slots=64).uniform_pieces == 0
    for s in (build_schedule([4096] * 3, 4, block_n=64), h16):
        n = s.uniform_pieces
        assert s.split_offsets == tuple(range(0, n * s.batch_size + 1, n))


def test_build_schedule_caps_pieces_at_tiles() -> None:
    s = build_schedule([17, 100], 1000, block_n=16)
    assert s.splits == (2, 7)
    _check_coverage(s)


def test_table_sums_the_split_counts_once(monkeypatch) -> None:
    # Every plan uploads table(); it summed the counts of every sequence again for every
    # split piece, 135 ms of host time per decode step at b = 1024.
    s = build_schedule([300] * 64, 4, block_n=16)
    expected_rows = [[u.batch, u.key_start, u.key_end, s.slot(u)] for u in s.units]
    sums = 0
    offsets = Schedule.split_offsets.fget
    assert offsets is not None

    def counted(self: Schedule) -> tuple[int, ...]:
        nonlocal sums
        sums += 1
        return offsets(self)

    monkeypatch.setattr(Schedule, "split_offsets", property(counted))
    assert s.table() == expected_rows
    assert sums <= 1


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"seqlens": []}, "Expected at least one sequence"),
        ({"seqlens": [5, 0]}, "seqlens\\[1\\]: Expected a cache length of at least 1, got 0"),
        ({"block_n": 0}, "block_n: Expected a positive integer, got 0"),
        ({"num_slots": 0}, "num_slots: Expected a positive integer, got 0"),
        ({"max_splits": 0}, "max_splits: Expected a positive integer or None, got 0"),
        # A fractional length was cut to an int; a NaN or negative tolerance or overhead
        # left no eligible plan (a bare "min() arg is an empty sequence").
        ({"seqlens": [5.5]}, "seqlens\\[0\\]: Expected an integer cache length, got 5.5"),
        ({"seqlens": [True]}, "seqlens\\[0\\]: Expected an integer cache length, got True"),
        ({"tolerance": float("nan")}, "tolerance: Expected a finite value >= 0, got nan"),
        ({"tolerance": -0.5}, "tolerance: Expected a finite value >= 0, got -0.5"),
        ({"overhead_tiles": -5}, "overhead_tiles: Expected a finite value >= 0, got -5"),
        ({"overhead_tiles": float("inf")}, "overhead_tiles: Expected a finite value >= 0"),
        ({"m_tiles": 1.5}, "m_tiles: Expected a positive integer, got 1.5"),
    ],
)
def test_plan_rejects_bad_arguments(kwargs, message) -> None:
    args = {"seqlens": [10], "block_n": 16, "m_tiles": 1, "num_slots": 4} | kwargs
    with pytest.raises(InputError, match=message):
        plan_schedule(args.pop("seqlens"), **args)


def test_build_schedule_rejects_what_plan_schedule_rejects() -> None:
    with pytest.raises(InputError, match="seqlens\\[0\\]: Expected an integer cache length"):
        build_schedule([7.9], 1, block_n=16)
    with pytest.raises(InputError, match="overhead_tiles: Expected a finite value >= 0"):
        build_schedule([10], 1, block_n=16, overhead_tiles=float("nan"))


def test_one_count_for_every_sequence_is_named_as_passed() -> None:
    # num_splits=0 was reported at num_splits[0], an index the caller never wrote.
    with pytest.raises(InputError, match=r"^num_splits: Expected at least one piece, got 0$"):
        build_schedule([9, 5], 0, block_n=16)
    with pytest.raises(InputError, match=r"^num_splits\[1\]: Expected at least one piece"):
        build_schedule([9, 5], [1, -2], block_n=16)


def test_split_counts_as_an_array_are_taken() -> None:
    # A NumPy array (or a tensor) of counts was refused as "Expected an int or a list of
    # ints", though the plan takes lengths in either form.
    import numpy as np
    import torch

    for counts in (np.array([1, 3]), np.array([1, 3], dtype=np.int32), torch.tensor([1, 3])):
        schedule = build_schedule([40, 200], counts, block_n=16)
        assert schedule.splits == (1, 3)
    with pytest.raises(InputError, match=r"num_splits: Expected an int or a list of ints"):
        build_schedule([40, 200], np.array([1.0, 3.0]), block_n=16)
    with pytest.raises(InputError, match=r"num_splits: Expected an int or a list of ints"):
        build_schedule([40, 200], np.array([[1, 3]]), block_n=16)

"""The FP8 ring kernel's barrier protocol, simulated on the host with the kernel's placement.

kernelopt/kernels/mla/ring_fp8.py moves a key tile through three hand-offs, each waited on
by phase parity: loader → dequantizer (ring slots and scale slots, in tile order), and
dequantizer ⇄ consumer (each consumer's staging buffer: filled, then free again). A parity
wait cannot tell the phase it wants from the one two back, so each is sound only if the
previous use of the barrier has completed by the time of the wait. This test runs the
four roles as interleavings chosen at random (copies land late and out of order) and
checks that every wait that passes finds what it asked for, that nothing is overwritten
before its reader released it, and that no interleaving deadlocks. ``_slot`` is the
kernel's own function, called as Python.
"""

from __future__ import annotations

import random

import pytest

from kernelopt.kernels.mla import ring_fp8

PARTS = 5  # a key tile: four e4m3 groups of 128 columns and the RoPE part


def _slot(j: int, c: int, slots: int) -> tuple[int, int]:
    slot, phase = ring_fp8._slot.fn(j, c, slots)
    return int(slot), int(phase)


def _passes(completed: int, parity: int) -> bool:
    """mbarrier.try_wait.parity: the phase of that parity is the last one completed."""
    return (completed & 1) != parity


class _State:
    def __init__(self, slots: int, scale_slots: int) -> None:
        self.full = [0] * slots
        self.free = [0] * slots
        self.content: list[tuple[int, int] | None] = [None] * slots
        self.released = [True] * slots
        self.sc_full = [0] * scale_slots
        self.sc_free = [0] * scale_slots
        self.sc_content: list[int | None] = [None] * scale_slots
        self.sc_released = [True] * scale_slots
        self.st_full = [0, 0]
        self.st_free = [0, 0]
        self.staged: list[int | None] = [None, None]
        self.st_released = [True, True]
        self.in_flight: list[tuple[str, int, object]] = []


def _simulate(*, slots: int, scale_slots: int, tiles: int, rng: random.Random) -> str | None:
    st = _State(slots, scale_slots)
    # The loader's copies in issue order: the tile's scales, then its ten parts.
    copies = [(j, c) for j in range(tiles) for c in (-1, *range(PARTS))]
    issued = 0
    dq_tile, dq_step = 0, -2  # -2: wait for the staging buffer; -1: the scales; 0-9: parts
    todo = {g: list(range(g, tiles, 2)) for g in (0, 1)}
    while issued < len(copies) or st.in_flight or dq_tile < tiles or todo[0] or todo[1]:
        moves: list[str] = []
        if issued < len(copies):
            j, c = copies[issued]
            if c < 0:
                s = j % scale_slots
                ok = _passes(st.sc_free[s], ((j // scale_slots) & 1) ^ 1)
            else:
                s, phase = _slot(j, c, slots)
                ok = _passes(st.free[s], phase ^ 1)
            if ok:
                moves.append("issue")
        if st.in_flight:
            moves.append("land")
        if dq_tile < tiles:
            j, g = dq_tile, dq_tile & 1
            if dq_step == -2:
                ok = _passes(st.st_free[g], ((j >> 1) & 1) ^ 1)
            elif dq_step == -1:
                ok = _passes(st.sc_full[j % scale_slots], (j // scale_slots) & 1)
            else:
                s, phase = _slot(j, dq_step, slots)
                ok = _passes(st.full[s], phase)
            if ok:
                moves.append("dequant")
        for g in (0, 1):
            if todo[g] and _passes(st.st_full[g], (todo[g][0] >> 1) & 1):
                moves.append(f"consume{g}")
        if not moves:
            return "deadlock"
        move = rng.choice(moves)
        if move == "issue":
            j, c = copies[issued]
            if c < 0:
                s = j % scale_slots
                if not st.sc_released[s]:
                    return f"scales of tile {j} copied over unreleased slot {s}"
                st.sc_released[s] = False
                st.in_flight.append(("scale", s, j))
            else:
                s, _ = _slot(j, c, slots)
                if not st.released[s]:
                    return f"part {c} of tile {j} copied over unreleased slot {s}"
                st.released[s] = False
                st.in_flight.append(("part", s, (j, c)))
            issued += 1
        elif move == "land":
            kind, s, item = st.in_flight.pop(rng.randrange(len(st.in_flight)))
            if kind == "scale":
                st.sc_content[s] = item  # type: ignore[assignment]
                st.sc_full[s] += 1
            else:
                st.content[s] = item  # type: ignore[assignment]
                st.full[s] += 1
        elif move == "dequant":
            j, g = dq_tile, dq_tile & 1
            if dq_step == -2:
                if not st.st_released[g]:
                    return f"tile {j} staged over consumer {g}'s unreleased tile"
                st.st_released[g] = False
            elif dq_step == -1:
                s = j % scale_slots
                if st.sc_content[s] != j:
                    return f"dequantizer took scales {st.sc_content[s]} for tile {j}"
                st.sc_released[s] = True
                st.sc_free[s] += 1
            else:
                s, _ = _slot(j, dq_step, slots)
                if st.content[s] != (j, dq_step):
                    return f"dequantizer took {st.content[s]} for {(j, dq_step)}"
                st.released[s] = True
                st.free[s] += 1
            dq_step += 1
            if dq_step == PARTS:
                st.staged[g] = j
                st.st_full[g] += 1
                dq_tile, dq_step = dq_tile + 1, -2
        else:
            g = int(move[-1])
            j = todo[g].pop(0)
            if st.staged[g] != j:
                return f"consumer {g} took staged tile {st.staged[g]} for {j}"
            st.st_released[g] = True
            st.st_free[g] += 1
    return None


def _first_failure(*, slots: int, scale_slots: int, runs: int) -> str | None:
    for seed in range(runs):
        for tiles in (1, 2, 3, 9):
            failure = _simulate(
                slots=slots, scale_slots=scale_slots, tiles=tiles, rng=random.Random(seed)
            )
            if failure is not None:
                return f"seed {seed}, {tiles} tiles: {failure}"
    return None


def test_every_wait_finds_its_part_with_the_shipped_ring() -> None:
    assert _first_failure(slots=ring_fp8.SLOTS, scale_slots=ring_fp8.SCALE_SLOTS, runs=300) is None


@pytest.mark.parametrize(("slots", "scale_slots"), [(10, 1), (11, 2), (16, 3), (30, 8)])
def test_every_wait_finds_its_part_at_other_ring_sizes(slots: int, scale_slots: int) -> None:
    assert _first_failure(slots=slots, scale_slots=scale_slots, runs=100) is None


def test_a_ring_smaller_than_a_tile_still_streams() -> None:
    # The dequantizer releases each part as it reads it, so even a ring of two slots
    # cannot deadlock: the loader only ever waits for a part the dequantizer will read.
    assert _first_failure(slots=2, scale_slots=1, runs=50) is None

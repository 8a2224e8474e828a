"""The ring kernel's barrier protocol, simulated on the host with the kernel's own placement.

The ring kernel (kernelopt/kernels/mla/ring.py) waits on each chunk's barrier by phase
parity. A parity wait cannot tell the chunk it wants from the slot's content two phases
back, so it is sound only if the slot's previous content has landed by the time of the
wait. Copies complete in any order. This test runs the loader and the two consumers as
an interleaving chosen at random (copies land late and out of order, consumers release
each chunk as soon as they see it: the most a consumer can run ahead) and checks that
every wait that passes finds the chunk it asked for, and every copy lands in a slot whose
previous chunk was released. ``_place`` is the kernel's own function, called as Python.
"""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest

from kernelopt.kernels.mla import ring

CHUNKS = 9  # a key tile: the rope chunk and eight value chunks
Place = Callable[[int, int, int], tuple[int, int]]


def _kernel_place(j: int, c: int, slots: int) -> tuple[int, int]:
    slot, phase = ring._place.fn(j, c, slots)
    return int(slot), int(phase)


def _shared_ring_place(j: int, c: int, slots: int) -> tuple[int, int]:
    """One ring shared by both consumers in tile order (the kernel before the halves)."""
    n = j * CHUNKS + c
    return n % slots, (n // slots) & 1


def _passes(completed_phases: int, parity: int) -> bool:
    """mbarrier.try_wait.parity: the phase of that parity is the last one completed."""
    return (completed_phases & 1) != parity


def _simulate(place: Place, *, slots: int, tiles: int, rng: random.Random) -> str | None:
    """Run one random interleaving; return what went wrong, or None."""
    full = [0] * slots  # completed phases of each slot's full barrier (copies landed)
    free = [0] * slots  # completed phases of each slot's free barrier (chunks released)
    content: list[tuple[int, int] | None] = [None] * slots
    released: list[bool] = [True] * slots
    in_flight: list[tuple[int, tuple[int, int]]] = []
    order = [(j, c) for j in range(tiles) for c in range(CHUNKS)]
    loaded = 0
    # Each consumer reads its tiles (G, G + 2, ...) chunk by chunk.
    todo = {g: [(j, c) for j in range(g, tiles, 2) for c in range(CHUNKS)] for g in (0, 1)}
    while loaded < len(order) or in_flight or todo[0] or todo[1]:
        moves: list[str] = []
        if loaded < len(order):
            slot, phase = place(*order[loaded], slots)
            if _passes(free[slot], phase ^ 1):
                moves.append("load")
        if in_flight:
            moves.append("land")
        for g in (0, 1):
            if todo[g]:
                slot, phase = place(*todo[g][0], slots)
                if _passes(full[slot], phase):
                    moves.append(f"read{g}")
        if not moves:
            return "deadlock"
        # Copies land late: landing is one choice among the others, and any copy may land.
        move = rng.choice(moves)
        if move == "load":
            item = order[loaded]
            slot, _ = place(*item, slots)
            if not released[slot] or any(s == slot for s, _ in in_flight):
                return f"copy of {item} into slot {slot} before its previous chunk was released"
            released[slot] = False
            in_flight.append((slot, item))
            loaded += 1
        elif move == "land":
            slot, item = in_flight.pop(rng.randrange(len(in_flight)))
            content[slot] = item
            full[slot] += 1
        else:
            g = int(move[-1])
            item = todo[g].pop(0)
            slot, _ = place(*item, slots)
            if content[slot] != item:
                return f"consumer {g} took slot {slot} for {item}; it held {content[slot]}"
            released[slot] = True
            free[slot] += 1
    return None


def _first_failure(place: Place, *, slots: int, runs: int) -> str | None:
    for seed in range(runs):
        failure = _simulate(place, slots=slots, tiles=12, rng=random.Random(seed))
        if failure is not None:
            return f"seed {seed}: {failure}"
    return None


def test_every_wait_finds_its_chunk_with_the_shipped_ring() -> None:
    assert _first_failure(_kernel_place, slots=ring.SLOTS, runs=400) is None


@pytest.mark.parametrize("slots", [18, 20, 26])
def test_every_wait_finds_its_chunk_at_other_ring_sizes(slots: int) -> None:
    assert _first_failure(_kernel_place, slots=slots, runs=150) is None


def test_a_ring_shared_in_tile_order_can_take_a_chunk_still_in_flight() -> None:
    # The failure the halves remove: with 24 slots shared in tile order, a consumer that
    # finished its tile early passes the parity wait of a slot whose previous chunk (the
    # other consumer's) has not landed.
    failure = _first_failure(_shared_ring_place, slots=24, runs=400)
    assert failure is not None and "took slot" in failure

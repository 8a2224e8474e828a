"""Host-side split-KV scheduler: which program handles which keys of which sequence.

Flash-decoding splits each sequence's keys into contiguous pieces processed by separate
programs, then merges the partial results by their log-sum-exp. Too few pieces leave
multiprocessors idle; too many pay a fixed cost per piece (loading the query tile, writing
a float32 partial output, merging it). The scheduler picks one *chunk size* ``C`` (in key
tiles of ``block_n`` keys) for the whole batch, cuts every sequence into
``ceil(tiles / C)`` balanced pieces, and chooses ``C`` among ``ceil(longest / n)`` for
``n`` = 1 … ``num_slots`` pieces of the longest sequence, by a small cost model:

* every piece becomes ``m_tiles`` programs (one per tile of query rows), each costing its
  key tiles plus ``overhead_tiles``;
* programs run in waves of ``num_slots`` (multiprocessors × programs per multiprocessor),
  longest first, and a wave lasts as long as its longest program.

The cheapest chunk wins; among chunks within ``tolerance`` of it the one with the fewest
pieces wins, so a batch that already fills the device is never split. The plan is pure
Python, runs once per decode step (from a host copy of ``cache_seqlens``), and is uploaded
as a small int32 table; the kernels never synchronize with the host.
"""

from __future__ import annotations

import math
import numbers
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence, Set

import attrs

from kernelopt._errors import InputError, expected

__all__ = [
    "DEFAULT_OVERHEAD_TILES",
    "DEFAULT_TOLERANCE",
    "Schedule",
    "WorkUnit",
    "build_schedule",
    "estimate_cost",
    "plan_schedule",
    "split_ranges",
]

DEFAULT_OVERHEAD_TILES = 4.0
"""Fixed cost of one program in key-tile times (query load, output or partial write, merge)."""
DEFAULT_TOLERANCE = 0.03
"""Relative cost slack within which fewer pieces are preferred."""


def _positive(instance: object, attribute: attrs.Attribute[int], value: int) -> None:
    # None or "x" failed comparing with 1, and True, 3.5, NaN or inf passed.
    if not _is_count(value) or value < 1:
        raise InputError(expected("a positive integer", repr(value), where=attribute.name))


@attrs.frozen(kw_only=True)
class WorkUnit:
    """One piece of one sequence: keys ``[key_start, key_end)`` of sequence ``batch``.

    ``split`` numbers the pieces of a sequence from 0 in key order.

    Raises
    ------
    InputError
        For a field that is not an integer >= 0 (a bool, a float, text), or an empty
        key range (``key_end <= key_start``), naming the field.
    """

    batch: int
    split: int
    key_start: int
    key_end: int

    def __attrs_post_init__(self) -> None:
        # One test of the four fields, Python ints first: the scheduler builds a unit per
        # piece, hundreds a plan, and per-field validators cost that much more each plan.
        batch, split, start, end = self.batch, self.split, self.key_start, self.key_end
        if not (
            type(batch) is int  # exactly int, so a bool takes the slow path and is refused
            and type(split) is int
            and type(start) is int
            and type(end) is int
            and batch >= 0
            and split >= 0
            and 0 <= start < end
        ):
            _refuse_unit((batch, split, start, end))

    @property
    def num_keys(self) -> int:
        """Keys in this piece."""
        return self.key_end - self.key_start


@attrs.frozen(kw_only=True)
class Schedule:
    """A split-KV plan for one batch of cache lengths.

    Attributes
    ----------
    seqlens : tuple of int
        Cache length of each sequence.
    block_n : int
        Key-tile size the pieces are aligned to (every ``key_start`` is a multiple).
    splits : tuple of int
        Pieces per sequence (at least 1).
    units : tuple of WorkUnit
        Every piece, in dispatch order (most keys first).
    m_tiles, num_slots : int
        The query-row tiles per piece and the concurrent program slots the cost assumed.
    est_cost : float
        The model's makespan, in key-tile times.
    """

    seqlens: tuple[int, ...]
    block_n: int = attrs.field(validator=_positive)
    splits: tuple[int, ...]
    units: tuple[WorkUnit, ...]
    m_tiles: int = attrs.field(default=1, validator=_positive)
    num_slots: int = attrs.field(default=1, validator=_positive)
    est_cost: float = 0.0

    @property
    def batch_size(self) -> int:
        """Number of sequences."""
        return len(self.seqlens)

    @property
    def num_units(self) -> int:
        """Number of pieces (the split kernel's second grid dimension)."""
        return len(self.units)

    @property
    def split_offsets(self) -> tuple[int, ...]:
        """Prefix sums of ``splits``: ``[b + 1]``, FlashMLA's ``num_splits`` layout.

        Piece ``j`` of sequence ``b`` owns partial-output slot ``split_offsets[b] + j``.
        """
        offsets = [0]
        for n in self.splits:
            offsets.append(offsets[-1] + n)
        return tuple(offsets)

    @property
    def uniform_pieces(self) -> int:
        """Pieces a sequence when every sequence has the same number, at least 2; else 0.

        The merge then computes each sequence's slots (``b · n + j``) instead of reading
        :attr:`split_offsets` from the device.
        """
        first = self.splits[0] if self.splits else 0
        return first if first > 1 and all(n == first for n in self.splits) else 0

    @property
    def has_splits(self) -> bool:
        """Whether any sequence is cut in more than one piece (so a merge is needed)."""
        return any(n > 1 for n in self.splits)

    def slot(self, unit: WorkUnit) -> int:
        """The partial-output slot a piece writes.

        Parameters
        ----------
        unit : WorkUnit
            A piece of this schedule.

        Returns
        -------
        int
            ``split_offsets[unit.batch] + unit.split``, or -1 when the piece's sequence
            is a single piece (it writes the output directly).
        """
        if self.splits[unit.batch] == 1:
            return -1
        return self.split_offsets[unit.batch] + unit.split

    def table(self) -> list[list[int]]:
        """Rows ``[batch, key_start, key_end, slot]`` in dispatch order (the kernel's table)."""
        # The prefix sums once, not once a piece: this runs at every plan, for every piece.
        offsets = self.split_offsets
        return [
            [
                u.batch,
                u.key_start,
                u.key_end,
                -1 if self.splits[u.batch] == 1 else offsets[u.batch] + u.split,
            ]
            for u in self.units
        ]


def split_ranges(seqlen: int, pieces: int, block_n: int) -> list[tuple[int, int]]:
    """Cut keys ``[0, seqlen)`` into ``pieces`` contiguous ranges of near-equal tile counts.

    Boundaries fall on multiples of ``block_n``; tile counts differ by at most one.
    """
    tiles = -(-seqlen // block_n)
    if not 1 <= pieces <= tiles:
        raise InputError(expected(f"between 1 and {tiles} pieces", pieces, where="splits"))
    bounds = [(j * tiles) // pieces for j in range(pieces + 1)]
    return [(bounds[j] * block_n, min(bounds[j + 1] * block_n, seqlen)) for j in range(pieces)]


def estimate_cost(
    piece_tiles: Iterable[tuple[int, int]],
    *,
    m_tiles: int,
    num_slots: int,
    overhead_tiles: float = DEFAULT_OVERHEAD_TILES,
) -> float:
    """Makespan, in key-tile times, of pieces run longest first in waves of ``num_slots``.

    Parameters
    ----------
    piece_tiles : iterable of (tiles, count)
        ``count`` pieces of ``tiles`` key tiles each (repeats are summed).
    m_tiles : int
        Programs per piece (query-row tiles).
    num_slots : int
        Programs that run at once.
    overhead_tiles : float
        Fixed cost of a program.
    """
    histogram: Counter[int] = Counter()
    for tiles, count in piece_tiles:
        histogram[tiles] += count * m_tiles
    total = 0.0
    next_head = 0  # position (longest first) of the program that opens the next wave
    seen = 0
    for tiles in sorted(histogram, reverse=True):
        count = histogram[tiles]
        if next_head < seen + count:
            heads = (seen + count - 1 - next_head) // num_slots + 1
            total += heads * (tiles + overhead_tiles)
            next_head += heads * num_slots
        seen += count
    return total


def _balanced_pieces(tiles: int, pieces: int) -> list[tuple[int, int]]:
    # `pieces` near-equal parts of `tiles`: (size, count) pairs.
    small, extra = divmod(tiles, pieces)
    parts = [(small + 1, extra)] if extra else []
    if pieces - extra:
        parts.append((small, pieces - extra))
    return parts


def _chunk_candidates(longest: int, max_pieces: int) -> list[int]:
    # Distinct values of ceil(longest / n) for n = 1 .. max_pieces, largest first.
    chunks: list[int] = []
    n = 1
    while n <= max_pieces:
        c = -(-longest // n)
        chunks.append(c)
        if c == 1:
            break
        n = -(-longest // (c - 1))
    return chunks


def _planned_unit(batch: int, split: int, key_start: int, key_end: int) -> WorkUnit:
    """A WorkUnit of fields the scheduler cut itself (integers >= 0, ``key_start <
    key_end`` by construction), set without the check a caller's WorkUnit goes through.

    A plan builds one unit per piece, hundreds at a time: the check made each plan of a
    batch with 256 pieces 5 % slower, for values that cannot fail it.
    """
    unit: WorkUnit = _new_object(WorkUnit)
    _set_field(unit, "batch", batch)
    _set_field(unit, "split", split)
    _set_field(unit, "key_start", key_start)
    _set_field(unit, "key_end", key_end)
    return unit


_new_object = object.__new__
_set_field = object.__setattr__  # WorkUnit is frozen: its own __setattr__ refuses


def _refuse_unit(fields: tuple[object, ...]) -> None:
    """Name the first field of a WorkUnit that is no integer >= 0, or its empty range;
    NumPy integers and other integral types that pass are accepted as they are."""
    for name, value in zip(("batch", "split", "key_start", "key_end"), fields, strict=True):
        if not _is_count(value) or value < 0:  # type: ignore[operator]
            raise InputError(expected("an integer >= 0", repr(value), where=name))
    start, end = fields[2], fields[3]
    if end <= start:  # type: ignore[operator]
        raise InputError(expected(f"key_end > key_start ({start})", repr(end), where="key_end"))


def _is_count(value: object) -> bool:
    # Any integer (NumPy's too), not a bool: 5.5 keys or True pieces are not counts.
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _check_seqlens(seqlens: Sequence[int]) -> tuple[int, ...]:
    # None failed in tuple(), and b"x" was read as one length of 120 (its byte). A set or
    # a dict iterates without order, or its keys.
    if isinstance(seqlens, str | bytes | Set | Mapping) or not isinstance(seqlens, Iterable):
        raise InputError(
            expected("a sequence of cache lengths", type(seqlens).__name__, where="seqlens")
        )
    values = tuple(seqlens)
    if not values:
        raise InputError(expected("at least one sequence", "an empty batch", where="seqlens"))
    if all(type(n) is int and n >= 1 for n in values):
        return values  # Python ints, each >= 1: the common case, without the slow checks
    for i, n in enumerate(values):
        if not _is_count(n):
            raise InputError(expected("an integer cache length", repr(n), where=f"seqlens[{i}]"))
        if n < 1:
            raise InputError(expected("a cache length of at least 1", n, where=f"seqlens[{i}]"))
    return tuple(int(n) for n in values)


def _check_sizes(**sizes: object) -> None:
    """Positive integer sizes (``block_n``, ``m_tiles``, ``num_slots``)."""
    for name, value in sizes.items():
        if not _is_count(value) or value < 1:  # type: ignore[operator]
            raise InputError(expected("a positive integer", repr(value), where=name))


def _check_slack(**values: object) -> None:
    """Finite, non-negative model terms (``overhead_tiles``, ``tolerance``): a NaN or a
    negative one leaves no plan within the tolerance of the cheapest."""
    for name, value in values.items():
        number = isinstance(value, numbers.Real) and not isinstance(value, bool)
        if not number or not math.isfinite(value) or value < 0:  # type: ignore[arg-type,operator]
            raise InputError(expected("a finite value >= 0", repr(value), where=name))


_SPLIT_COUNTS = (
    "an int or a list of ints (also as an integer NumPy array or tensor: 0-d for one count "
    "for all, 1-D for one per sequence)"
)


def build_schedule(
    seqlens: Sequence[int],
    splits: int | Sequence[int],
    *,
    block_n: int,
    m_tiles: int = 1,
    num_slots: int = 1,
    overhead_tiles: float = DEFAULT_OVERHEAD_TILES,
) -> Schedule:
    """A schedule with the given pieces per sequence (an int applies to every sequence, a
    NumPy integer or a 0-d integer tensor too; one per sequence as a list, a 1-D NumPy array
    or a tensor).

    A count larger than a sequence's key tiles is reduced to its tile count, so
    ``splits=1_000_000`` means "one piece per tile". Used for tuning sweeps and tests.
    """
    values = _check_seqlens(seqlens)
    _check_sizes(block_n=block_n, m_tiles=m_tiles, num_slots=num_slots)
    _check_slack(overhead_tiles=overhead_tiles)
    given = splits  # as passed, for the refusal: tensor(2.) is not the float 2.0
    if getattr(splits, "ndim", None) in (0, 1) and hasattr(splits, "tolist"):
        # A 0-d or 1-D NumPy array or tensor, read as the number or list it holds (no
        # import of either here: the scheduler is pure Python). A 0-d tensor is no
        # numbers.Integral, though np.int64 is: both are one count for all.
        splits = splits.tolist()
    if isinstance(splits, numbers.Integral) and not isinstance(splits, bool):
        if splits < 1:
            raise InputError(expected("at least one piece", int(splits), where="num_splits"))
        counts = [int(splits)] * len(values)
    elif (
        isinstance(splits, Sequence)
        and not isinstance(splits, str)
        and all(isinstance(n, numbers.Integral) and not isinstance(n, bool) for n in splits)
    ):
        counts = [int(n) for n in splits]
    else:
        raise InputError(expected(_SPLIT_COUNTS, repr(given), where="num_splits"))
    if len(counts) != len(values):
        raise InputError(expected(f"{len(values)} split counts", len(counts), where="num_splits"))
    for b, n in enumerate(counts):
        if n < 1:
            raise InputError(expected("at least one piece", n, where=f"num_splits[{b}]"))
    return _schedule(values, counts, block_n, m_tiles, num_slots, overhead_tiles)


def _schedule(
    values: tuple[int, ...],
    counts: list[int],
    block_n: int,
    m_tiles: int,
    num_slots: int,
    overhead_tiles: float,
) -> Schedule:
    """The schedule of checked lengths and piece counts (each >= 1): :func:`plan_schedule`
    comes here with what it checked and chose, without checking it all again."""
    pieces: list[tuple[int, int]] = []
    # (-keys, batch, split, start, end): sorted as tuples, most keys first, then by
    # sequence and piece, with no key function; (batch, split) is unique, so start and end
    # never decide the order.
    ranges: list[tuple[int, int, int, int, int]] = []
    final: list[int] = []
    for b, (seqlen, n) in enumerate(zip(values, counts, strict=True)):
        n = min(n, -(-seqlen // block_n))
        final.append(n)
        for j, (start, end) in enumerate(split_ranges(seqlen, n, block_n)):
            ranges.append((start - end, b, j, start, end))
            pieces.append((-(-(end - start) // block_n), 1))
    ranges.sort()
    units = [_planned_unit(b, j, start, end) for _, b, j, start, end in ranges]
    cost = estimate_cost(
        pieces, m_tiles=m_tiles, num_slots=num_slots, overhead_tiles=overhead_tiles
    )
    return Schedule(
        seqlens=values,
        block_n=block_n,
        splits=tuple(final),
        units=tuple(units),
        m_tiles=m_tiles,
        num_slots=num_slots,
        est_cost=cost,
    )


def plan_schedule(
    seqlens: Sequence[int],
    *,
    block_n: int,
    m_tiles: int,
    num_slots: int,
    overhead_tiles: float = DEFAULT_OVERHEAD_TILES,
    tolerance: float = DEFAULT_TOLERANCE,
    max_splits: int | None = None,
) -> Schedule:
    """Choose the pieces per sequence that minimize the modelled makespan.

    Parameters
    ----------
    seqlens : sequence of int
        Cache length of every sequence (each at least 1).
    block_n : int
        Key-tile size of the split kernel; pieces are whole tiles.
    m_tiles : int
        Query-row tiles per sequence: ``ceil(s_q · h_q / BLOCK_M)``.
    num_slots : int
        Programs the device runs at once (multiprocessors × programs per multiprocessor).
    overhead_tiles : float
        Fixed cost of a program, in key-tile times.
    tolerance : float
        Relative slack within which the plan with fewer pieces is preferred.
    max_splits : int, optional
        Most pieces for any one sequence.

    Returns
    -------
    Schedule
        The chosen plan; ``est_cost`` is its modelled makespan.
    """
    values = _check_seqlens(seqlens)
    _check_sizes(block_n=block_n, m_tiles=m_tiles, num_slots=num_slots)
    _check_slack(overhead_tiles=overhead_tiles, tolerance=tolerance)
    if max_splits is not None and (not _is_count(max_splits) or max_splits < 1):
        raise InputError(
            expected("a positive integer or None", repr(max_splits), where="max_splits")
        )
    tiles_hist = Counter(-(-n // block_n) for n in values)
    longest = max(tiles_hist)
    max_pieces = min(longest, num_slots, max_splits or longest)

    best: tuple[float, int, int] | None = None  # (cost, units, chunk)
    scored: list[tuple[float, int, int]] = []
    for chunk in _chunk_candidates(longest, max_pieces):
        pieces: list[tuple[int, int]] = []
        units = 0
        for tiles, count in tiles_hist.items():
            n = -(-tiles // chunk)
            units += n * count
            pieces.extend((size, k * count) for size, k in _balanced_pieces(tiles, n))
        cost = estimate_cost(
            pieces, m_tiles=m_tiles, num_slots=num_slots, overhead_tiles=overhead_tiles
        )
        scored.append((cost, units, chunk))
        if best is None or cost < best[0]:
            best = (cost, units, chunk)
    assert best is not None  # at least the unsplit chunk is scored
    limit = best[0] * (1.0 + tolerance)
    eligible = [entry for entry in scored if entry[0] <= limit]
    _, _, chosen = min(eligible, key=lambda entry: (entry[1], entry[0]))
    tiles_of = [-(-n // block_n) for n in values]
    splits = [-(-tiles // chosen) for tiles in tiles_of]
    return _schedule(values, splits, block_n, m_tiles, num_slots, overhead_tiles)

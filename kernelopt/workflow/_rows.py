"""Choosing benchmark rows: one implementation, one row per trial point, the floor share.

Shared by the profile built from rows (:mod:`~kernelopt.workflow.from_rows`) and the
target check (:mod:`~kernelopt.workflow.target`), so both read a JSONL file the same way.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from kernelopt._errors import InputError, expected
from kernelopt.bench.records import BenchRow
from kernelopt.workflow._fields import LISTED, listed
from kernelopt.workflow._points import point_words

__all__ = ["by_point", "check_rows", "floor_pct", "measured_on", "one_gpu", "one_impl", "same_gpu"]


def check_rows(rows: Iterable[object], where: str) -> list[BenchRow]:
    """``rows`` as a list, refusing anything but :class:`BenchRow` items (and a lone str)."""
    if isinstance(rows, (str, bytes)) or not isinstance(rows, Iterable):
        raise InputError(
            expected("a sequence of BenchRow (read_rows)", type(rows).__name__, where=where)
        )
    found: list[BenchRow] = []
    for row in rows:
        if not isinstance(row, BenchRow):
            raise InputError(expected("BenchRow rows (read_rows)", type(row).__name__, where=where))
        found.append(row)
    return found


def one_impl(
    rows: Sequence[BenchRow],
    wanted: str | None,
    prefer: str | None,
    where: str,
    *,
    choose: str = "impl=",
) -> str:
    """The implementation to read: ``wanted``, else ``prefer`` if present, else the only one;
    an error on several names ``choose``, the argument that picks one."""
    impls = list(dict.fromkeys(row.impl for row in rows))
    if wanted is not None:
        if wanted not in impls:
            raise InputError(
                expected(f"rows of impl {wanted!r}", listed(impls, limit=LISTED), where=where)
            )
        return wanted
    if prefer is not None and prefer in impls:
        return prefer
    if len(impls) != 1:
        # Say that the preferred name matched nothing, or the reader hunts for it in the list.
        what = "rows of one implementation"
        if prefer is not None:
            what = f"rows of impl {prefer!r}, or of one implementation"
        raise InputError(
            expected(f"{what} (choose one with {choose})", listed(impls, limit=LISTED), where=where)
        )
    return impls[0]


def one_gpu(rows: Sequence[BenchRow], impl: str, where: str) -> str:
    """The GPU ``impl``'s rows were timed on (empty when none names one); an error when
    they name several, since one row per point would keep whichever came last."""
    gpus = list(dict.fromkeys(row.gpu for row in rows if row.gpu))
    if len(gpus) > 1:
        raise InputError(
            expected(f"rows of {impl} from one GPU (keep one GPU's rows)", gpus, where=where)
        )
    return gpus[0] if gpus else ""


def same_gpu(row: BenchRow, gpu: str) -> bool:
    """Whether ``row`` may be compared with rows timed on ``gpu``: the same device, or one
    side names none."""
    return not gpu or not row.gpu or row.gpu == gpu


def by_point(rows: Sequence[BenchRow]) -> dict[str, BenchRow]:
    """One row per trial point (its config in canonical words), in the rows' order."""
    out: dict[str, BenchRow] = {}
    for row in rows:
        out[point_words(row.config)] = row  # a later row of a point replaces an earlier one
    return out


def measured_on(row: BenchRow) -> str:
    """The ISO date of the row's timestamp; empty when it has none (never today's date,
    which would be a guess)."""
    return row.timestamp[:10] if re.match(r"^\d{4}-\d{2}-\d{2}", row.timestamp) else ""


def floor_pct(row: BenchRow) -> float | None:
    """The roofline floor over the measured time, %: stated in the metrics, or from the
    row's floor time; None when the row gives neither."""
    if "floor_pct" in row.metrics:
        return row.metrics["floor_pct"]
    if row.floor and row.median > 0:
        return 100.0 * row.floor / row.median
    return None

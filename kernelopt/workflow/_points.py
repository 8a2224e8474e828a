"""One spelling of a trial point, so rows of the same point always share a key.

Benchmark JSONL stores config keys sorted (``b h s t``), a profile writes ``b s t h``:
both become ``b=32 s=1 t=4096 h=16`` (b, s, t first, other keys sorted). A term written
``t~4096`` (lengths around 4096) is ``t=~4096``.
"""

from __future__ import annotations

from collections.abc import Mapping

from kernelopt._errors import InputError, expected
from kernelopt.bench.trials import TrialPoint
from kernelopt.experiments.points import point_words

__all__ = ["point_of", "point_words", "trial_point"]

_LEADING = ("b", "s", "t")  # the axes every trial point has, first in its spelling


def trial_point(value: TrialPoint | Mapping[str, int], *, where: str) -> TrialPoint:
    """``value`` as a TrialPoint: itself, or a mapping of b, s, t and other axes (each
    checked by TrialPoint); anything else is an InputError naming ``where``."""
    if isinstance(value, TrialPoint):
        return value
    if not isinstance(value, Mapping):
        raise InputError(
            expected("a TrialPoint or a mapping of axes", type(value).__name__, where=where)
        )
    missing = [axis for axis in _LEADING if axis not in value]
    if missing:
        raise InputError(
            expected(
                "a point with b, s and t", f"{dict(value)!r} (no {', '.join(missing)})", where=where
            )
        )
    extra = {key: axis for key, axis in value.items() if key not in _LEADING}
    return TrialPoint(b=value["b"], s=value["s"], t=value["t"], extra=extra)


def point_of(config: Mapping[str, object]) -> str:
    """A row's trial point: the name its benchmark gave it (a ``point`` entry), else its
    config's terms (display-only entries such as ``dtype`` then count too)."""
    named = config.get("point")
    return point_words(named) if isinstance(named, str) and named.strip() else point_words(config)

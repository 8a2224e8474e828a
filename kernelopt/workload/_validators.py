"""attrs validators of the workload records, raising :class:`~kernelopt._errors.InputError`.

attrs' own validators raise ``ValueError``/``TypeError`` in attrs' words; a user building a
record by hand (or a profile read back from JSON) gets ``Expected X, got Y`` naming the field
instead. Each factory returns a validator ``check(instance, attribute, value)``. The
argument checks at the end do the same for the public functions.
"""

from __future__ import annotations

import math
import numbers
import os
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from kernelopt._checks import finite as _finite
from kernelopt._errors import InputError, expected
from kernelopt._fileio import special_kind

__all__ = [
    "Validator",
    "as_path",
    "as_tuple",
    "count",
    "finite",
    "finite_float",
    "instance_of",
    "is_callable",
    "is_file",
    "items_of",
    "no_file",
    "one_of",
    "positive_int",
    "require",
    "share",
    "text",
]

Validator = Callable[[object, Any, Any], None]


def finite_float(value: object) -> float | None:
    """``value`` as a float when it is a finite real number (not a bool); None otherwise.

    Parameters
    ----------
    value : object
        A decoded JSON value, a number read from a file, or anything else.

    Returns
    -------
    float or None
        None for non-numbers, NaN, infinities, and integers beyond the float range.
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return None
    try:
        # JSON integers are unbounded: math.isfinite and float() raise OverflowError on a
        # 400-digit one instead of answering.
        number = float(value)
    except (OverflowError, ValueError):
        return None
    return number if math.isfinite(number) else None


def finite(*, minimum: float | None = None, optional: bool = False) -> Validator:
    """A finite real number, not a bool or string (``>= minimum``; None if ``optional``)."""
    # The shared validator, typed so that attrs keeps the field's own annotation.
    shared = _finite(minimum=minimum, optional=optional)
    floor = -math.inf if minimum is None else minimum

    def check(instance: object, attribute: Any, value: object) -> None:
        # A plain float or int in range, what the trace readers build: passed without the
        # checks below (an ABC test each), which take most of the time of building a record.
        if value.__class__ is float and math.isfinite(value) and value >= floor:  # type: ignore[operator]
            return
        if value.__class__ is int and -(2**53) <= value <= 2**53 and value >= floor:  # type: ignore[operator]
            return
        if isinstance(value, int) and not isinstance(value, bool) and finite_float(value) is None:
            # An integer beyond the float range: the shared check would raise OverflowError.
            bound = "" if minimum is None else f" >= {minimum:g}"
            what = f"a finite number{bound}" + (" or None" if optional else "")
            raise _fail(what, value, attribute)
        shared(instance, attribute, value)

    return check


def as_tuple(value: Any) -> Any:
    """A converter: an iterable (not a string) as a tuple; anything else unchanged, for the
    field's validator to refuse with a message naming the field (``tuple(5)`` would raise a
    bare TypeError first)."""
    if value.__class__ is tuple:  # the common case, without the ABC test below
        return value
    if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
        return value
    return tuple(value)


def _fail(what: str, value: object, attribute: Any) -> InputError:
    return InputError(expected(what, repr(value), where=attribute.name))


def share(*, optional: bool = False) -> Validator:
    """A fraction in ``[0, 1]`` (a sum of rounded shares may pass 1 by 1e-9)."""

    def check(_instance: object, attribute: Any, value: object) -> None:
        if value.__class__ is float and 0.0 <= value <= 1.0 + 1e-9:  # type: ignore[operator]
            return  # the common case, without finite_float's ABC test
        if value is None and optional:
            return
        number = finite_float(value)
        ok = number is not None and 0.0 <= number <= 1.0 + 1e-9
        if not ok:
            raise _fail("a number in [0, 1]" + (" or None" if optional else ""), value, attribute)

    return check


def count(*, minimum: int = 0, optional: bool = False) -> Validator:
    """An ``int`` (not a bool) ``>= minimum``: a count of calls, records, shapes."""

    def check(_instance: object, attribute: Any, value: object) -> None:
        if value.__class__ is int and value >= minimum:  # type: ignore[operator]
            return  # the common case, in one test
        if value is None and optional:
            return
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            raise _fail(
                f"an integer >= {minimum}" + (" or None" if optional else ""), value, attribute
            )

    return check


def text(*, optional: bool = False, nonempty: bool = False) -> Validator:
    """A ``str`` (non-blank when ``nonempty``); written as is to markdown and JSON."""

    def check(_instance: object, attribute: Any, value: object) -> None:
        if value is None and optional:
            return
        if not isinstance(value, str) or (nonempty and not value.strip()):
            what = "a non-empty string" if nonempty else "a string"
            raise _fail(what + (" or None" if optional else ""), value, attribute)

    return check


def one_of(choices: Sequence[str]) -> Validator:
    """One of ``choices``."""

    def check(_instance: object, attribute: Any, value: object) -> None:
        if value not in choices:
            raise _fail(f"one of {', '.join(choices)}", value, attribute)

    return check


def instance_of(kind: type | tuple[type, ...], what: str, *, optional: bool = False) -> Validator:
    """An instance of ``kind`` (``what`` names it in the message)."""

    def check(_instance: object, attribute: Any, value: object) -> None:
        if value is None and optional:
            return
        if not isinstance(value, kind):
            raise _fail(what + (" or None" if optional else ""), value, attribute)

    return check


def items_of(kind: type | tuple[type, ...] | Callable[[], type], what: str) -> Validator:
    """A tuple whose items are instances of ``kind``.

    ``kind`` may be a function returning the class, for a class defined in a module that
    imports this one's (the lookup then happens at the first check).
    """

    def check(_instance: object, attribute: Any, value: object) -> None:
        wanted = kind if isinstance(kind, (type, tuple)) else kind()
        if not isinstance(value, tuple):
            raise _fail(f"a sequence of {what}", value, attribute)
        if all(item.__class__ is wanted for item in value):
            return  # the common case: items of the very class, without an ABC test each
        for item in value:
            if not isinstance(item, wanted):
                raise _fail(f"a sequence of {what}", item, attribute)

    return check


def is_callable(*, optional: bool = False) -> Validator:
    """A callable (None too when ``optional``)."""

    def check(_instance: object, attribute: Any, value: object) -> None:
        if value is None and optional:
            return
        if not callable(value):
            raise _fail("a callable" + (" or None" if optional else ""), value, attribute)

    return check


# --------------------------------------------------------------------------------------
# Argument checks of the public functions


def _shown(value: object) -> str:
    """A wrong argument as the message shows it: short values as written, others by type."""
    if value is None or isinstance(value, (bool, int, float)):
        return repr(value)
    if isinstance(value, str):
        return repr(value) if len(value) <= 80 else repr(value[:77] + "...")
    name = type(value).__name__
    return f"{'an' if name[:1].lower() in 'aeiou' else 'a'} {name}"


def require(value: object, kind: type | tuple[type, ...], what: str, *, where: str) -> None:
    """Raise InputError unless ``value`` is an instance of ``kind`` (a bool is no int)."""
    wanted = kind if isinstance(kind, tuple) else (kind,)
    if isinstance(value, bool) and bool not in wanted:
        raise InputError(expected(what, _shown(value), where=where))
    if not isinstance(value, kind):
        raise InputError(expected(what, _shown(value), where=where))


def as_path(value: object, *, where: str = "path") -> Path:
    """``value`` as a Path, when it is a str or path-like object naming a file: an empty
    string names none (``Path("")`` is the working directory)."""
    if not isinstance(value, (str, os.PathLike)):
        raise InputError(expected("a file path (str or Path)", _shown(value), where=where))
    if not os.fspath(value):
        raise InputError(expected("a file path", "an empty path", where=where))
    return Path(value)


def is_file(path: Path) -> bool:
    """Whether ``path`` is an existing file: False, not ``OSError``, for a name the system
    refuses (longer than its limit)."""
    try:
        return path.is_file()
    except (OSError, ValueError):
        return False


def no_file(path: str | os.PathLike[str]) -> str:
    """What stands at ``path`` where a file was expected and is not, for the ``got`` of an
    error: ``a directory at <path>`` for a folder and ``a FIFO at <path>`` (a socket, a
    device) for what is no regular file (they exist: "missing" would mislead), else
    ``no file at <path>``; ``an empty path`` for ``""``."""
    if not os.fspath(path):
        return "an empty path"
    try:
        folder = Path(path).is_dir()
    except (OSError, ValueError):  # a name the system refuses
        folder = False
    kind = "a directory" if folder else (special_kind(path) or "no file")
    return f"{kind} at {os.fspath(path)}"


def positive_int(value: object, *, where: str) -> int:
    """``value`` as an int when it is an integer >= 1: a Python or numpy int, not a bool."""
    # numpy ints are no int subclass, but a k or a limit computed with numpy is one.
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or int(value) < 1:
        raise InputError(expected("an integer >= 1", _shown(value), where=where))
    return int(value)

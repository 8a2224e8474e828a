"""Conditions an entry states over measured metrics or workload shapes.

A :class:`Comparison` is one ``name op value`` test (``dram_pct > 60``) where the right side
is a number or another name (``arith_intensity < ridge``). A :class:`Condition` is a
conjunction of comparisons with a note saying why it matters; an entry lists several
conditions and is triggered when any one of them holds (disjunction of conjunctions).
Their text form is what the markdown holds, so humans and code read the same line.
"""

from __future__ import annotations

import math
import numbers
import re
from collections.abc import Iterable, Mapping
from typing import Any

import attrs

from kernelopt._enum import TextEnum
from kernelopt._errors import InputError, expected
from kernelopt._numbers_text import digits_apart, readable
from kernelopt.catalog._fields import require_str, to_enum
from kernelopt.catalog.vocabulary import FILL_MARK

__all__ = ["Comparison", "Condition", "Op", "format_number", "parse_condition"]

_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
_NUMBER = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?"
_COMPARISON_RE = re.compile(
    rf"^\s*(?P<name>{_NAME})\s*(?P<op><=|>=|==|!=|<|>)\s*(?:(?P<value>{_NUMBER})|(?P<other>{_NAME}))\s*$"
)
_NAME_RE = re.compile(rf"^{_NAME}$")
_JOIN = "and"
# Only from the start of a run of blanks: split() tries every position of a long one.
_AND_RE = re.compile(rf"(?<!\s)\s+{_JOIN}\s+")


class Op(TextEnum):
    """A comparison operator, valued by its symbol."""

    LT = "<"
    LE = "<="
    GT = ">"
    GE = ">="
    EQ = "=="
    NE = "!="

    def apply(self, left: float, right: float) -> bool:
        """Compare ``left`` with ``right``.

        Parameters
        ----------
        left, right : float
            The two sides, ``left <op> right``.

        Returns
        -------
        bool
            Whether the comparison holds.
        """
        if self is Op.LT:
            return left < right
        if self is Op.LE:
            return left <= right
        if self is Op.GT:
            return left > right
        if self is Op.GE:
            return left >= right
        if self is Op.EQ:
            return left == right
        return left != right


def format_number(value: float) -> str:
    """Write ``value`` the shortest way that reads back to the same float (``60``, ``0.5``)."""
    if value.is_integer() and abs(value) < 1e16:
        return str(int(value))
    return repr(value)


def _measured(value: float, digits: int) -> str:
    """A fact's value as a match reason shows it (a share of 0.6279067562048819 is
    ``0.6279``; a whole number as one)."""
    if value.is_integer() and abs(value) < 1e16:
        return str(int(value))
    return readable(value, digits)


def _check_name(_instance: object, attribute: attrs.Attribute[Any], value: str) -> None:
    if not isinstance(value, str) or not _NAME_RE.match(value):
        raise InputError(
            expected("an identifier such as dram_pct", repr(value), where=attribute.name)
        )
    if value == _JOIN:
        # The text form joins comparisons with it: "x > and and y < 1" reads back as "x >".
        raise InputError(
            expected(f"an identifier other than '{_JOIN}'", repr(value), where=attribute.name)
        )


def _check_other(
    _instance: object, attribute: attrs.Attribute[str | None], value: str | None
) -> None:
    if value is not None:
        _check_name(_instance, attribute, value)


def _check_value(
    _instance: object, attribute: attrs.Attribute[float | None], value: float | None
) -> None:
    # Any real number (a numpy scalar too); it is held as a float once checked.
    if value is not None and (
        isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value)
    ):
        raise InputError(expected("a finite number", repr(value), where=attribute.name))


def _to_op(value: object) -> Op:
    return to_enum(Op, value, "op")


@attrs.frozen(kw_only=True)
class Comparison:
    """One test ``name op value`` or ``name op other``.

    Parameters
    ----------
    name : str
        The metric or shape fact on the left (``"dram_pct"``, ``"s_q"``).
    op : Op
        The operator.
    value : float, optional
        A number on the right; exactly one of ``value`` and ``other`` is set.
    other : str, optional
        A second metric or fact on the right (``"ridge"``).
    """

    name: str = attrs.field(validator=_check_name)
    op: Op = attrs.field(converter=_to_op)
    value: float | None = attrs.field(default=None, validator=_check_value)
    other: str | None = attrs.field(default=None, validator=_check_other)

    def __attrs_post_init__(self) -> None:
        if (self.value is None) == (self.other is None):
            raise InputError(
                expected(
                    "exactly one of value and other", f"value={self.value!r}, other={self.other!r}"
                )
            )
        if self.value is not None:
            # Hold numbers as floats so equality and JSON do not depend on int vs float.
            object.__setattr__(self, "value", float(self.value))

    @property
    def names(self) -> tuple[str, ...]:
        """The metric or fact names this comparison reads."""
        return (self.name,) if self.other is None else (self.name, self.other)

    def evaluate(self, facts: Mapping[str, float]) -> bool | None:
        """Whether the comparison holds for the given facts.

        Parameters
        ----------
        facts : Mapping[str, float]
            Values by name: measured metrics or workload shape facts.

        Returns
        -------
        bool or None
            Whether it holds; ``None`` if a name it reads is missing from ``facts`` or NaN.
        """
        left = facts.get(self.name)
        right = self.value if self.other is None else facts.get(self.other)
        if left is None or right is None or math.isnan(left) or math.isnan(right):
            return None
        return self.op.apply(float(left), float(right))

    def describe(self, facts: Mapping[str, float]) -> str:
        """The comparison with the values it was tested on.

        Parameters
        ----------
        facts : Mapping[str, float]
            Values by name; those of the names the comparison reads are shown.

        Returns
        -------
        str
            ``dram_pct > 60 (dram_pct=85)``; the comparison alone if ``facts`` holds
            none of its names.
        """
        right = self.value if self.other is None else facts.get(self.other)
        left = facts.get(self.name)
        digits = digits_apart(left, right)
        shown = ", ".join(
            f"{n}={_measured(float(facts[n]), digits)}" for n in self.names if n in facts
        )
        return f"{self} ({shown})" if shown else str(self)

    def __str__(self) -> str:
        right = self.other if self.other is not None else format_number(float(self.value or 0.0))
        return f"{self.name} {self.op.value} {right}"


def _comparisons(value: Iterable[Comparison]) -> tuple[Comparison, ...]:
    if isinstance(value, str) or not isinstance(value, Iterable):
        raise InputError(expected("a sequence of Comparison", repr(value), where="comparisons"))
    items = tuple(value)
    for item in items:
        if not isinstance(item, Comparison):
            raise InputError(
                expected("a sequence of Comparison", f"an item {item!r}", where="comparisons")
            )
    return items


def _check_comparisons(
    _instance: object,
    attribute: attrs.Attribute[tuple[Comparison, ...]],
    value: tuple[Comparison, ...],
) -> None:
    if not value:
        raise InputError(expected("at least one comparison", "none", where=attribute.name))


def _check_note(_instance: object, attribute: attrs.Attribute[str], value: str) -> None:
    if (
        not isinstance(value, str)
        or value != value.strip()
        or "\n" in value
        or "\r" in value
        or FILL_MARK in value
    ):
        raise InputError(
            expected(
                "a one-line note without surrounding spaces", repr(value), where=attribute.name
            )
        )


@attrs.frozen(kw_only=True)
class Condition:
    """A conjunction of comparisons, with a note saying why it signals the entry.

    Parameters
    ----------
    comparisons : tuple of Comparison
        All must hold for the condition to hold (at least one).
    note : str
        One line of explanation; may be empty.
    """

    comparisons: tuple[Comparison, ...] = attrs.field(
        converter=_comparisons, validator=_check_comparisons
    )
    note: str = attrs.field(default="", validator=_check_note)

    @property
    def names(self) -> tuple[str, ...]:
        """Every metric or fact name the condition reads, in order, without repeats."""
        return tuple(dict.fromkeys(n for c in self.comparisons for n in c.names))

    def evaluate(self, facts: Mapping[str, float]) -> bool | None:
        """Whether every comparison of the condition holds for the given facts.

        Parameters
        ----------
        facts : Mapping[str, float]
            Values by name: measured metrics or workload shape facts.

        Returns
        -------
        bool or None
            True if every comparison holds, False if one fails, ``None`` if none fails
            but one is undecidable (a name missing from ``facts`` or NaN).
        """
        results = [c.evaluate(facts) for c in self.comparisons]
        if any(r is False for r in results):
            return False
        if any(r is None for r in results):
            return None
        return True

    def describe(self, facts: Mapping[str, float]) -> str:
        """The condition with the values it was tested on.

        Parameters
        ----------
        facts : Mapping[str, float]
            Values by name; those of the names the comparisons read are shown.

        Returns
        -------
        str
            Each comparison as :meth:`Comparison.describe` writes it, joined by ``and``.
        """
        return " and ".join(c.describe(facts) for c in self.comparisons)

    def __str__(self) -> str:
        return " and ".join(str(c) for c in self.comparisons)


def parse_condition(text: str, *, note: str = "") -> Condition:
    """Parse ``"dram_pct > 60 and tc_pct < 20"`` into a :class:`Condition`.

    Parameters
    ----------
    text : str
        Comparisons joined by ``and``; each ``name op number`` or ``name op name`` with
        ``op`` one of ``< <= > >= == !=``.
    note : str, optional
        The one-line explanation kept with the condition.

    Raises
    ------
    InputError
        If a part is not a comparison, or ``text`` or ``note`` is not a string.
    """
    require_str(text, "text", "a condition (str) such as 'dram_pct > 60'")
    require_str(note, "note", "a one-line note (str)")
    comparisons = []
    for part in _AND_RE.split(text.strip()):
        found = _COMPARISON_RE.match(part)
        if found is None:
            raise InputError(
                expected(
                    "a comparison like 'dram_pct > 60' or 'arith_intensity < ridge'",
                    repr(part[:60]),
                )
            )
        value = found.group("value")
        comparisons.append(
            Comparison(
                name=found.group("name"),
                op=Op(found.group("op")),
                value=None if value is None else float(value),
                other=found.group("other"),
            )
        )
    return Condition(comparisons=tuple(comparisons), note=note)

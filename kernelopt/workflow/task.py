"""Orchestrator → Designer: the ``## Optimization Task:`` hand-off as a typed record.

::

    ## Optimization Task: mla_decode v2 -> v3
    ### Current Bottleneck: Memory-bound -- 54% of the roofline floor at 2286 GB/s
    ### Optimizations to Apply:
    1. [cuda-graphs](docs/knowledge/optimizations/cuda-graphs.md) -- replay -- rationale: 10% launch

    ### Constraints
    - Language: triton
    - Control level: tile-level (Triton block pointers)
    - Register budget: 128 registers per thread
    - Target occupancy: 50%
    - keep the public signature of mla_decode

:meth:`OptimizationTask.render` writes exactly this; :func:`parse_task` reads it back
(``parse_task(task.render()) == task``) and tolerates prose around and between the
sections. :meth:`OptimizationTask.validate` checks every linked entry against a catalog.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

import attrs

from kernelopt._errors import InputError, expected
from kernelopt.workflow._fields import check_heading_end as _heading_end
from kernelopt.workflow._fields import check_line as _line
from kernelopt.workflow._fields import real_to_float, require_instance, str_items, text_one_line
from kernelopt.workflow._fields import where as _where
from kernelopt.workflow._markdown import (
    Record,
    Section,
    bullet_items,
    check_unbracketed,
    fail,
    find_record,
    is_placeholder,
    list_items,
    one_line,
    refuse_placeholder,
    unbracket,
    unlisted_lines,
    warn_unread,
)
from kernelopt.workflow.changes import (
    Change,
    EntryLookup,
    change_items,
    check_links,
    parse_change,
    raise_unknown,
    unresolved_links,
)

if TYPE_CHECKING:  # pragma: no cover - the task module loads without kernelopt.bench
    from kernelopt.bench.report import ProfileReport

__all__ = ["Constraints", "OptimizationTask", "parse_task"]

_LABELS = {
    "language": "Language",
    "control_level": "Control level",
    "register_budget": "Register budget",
    "target_occupancy_pct": "Target occupancy",
}
# A budget is a maximum and a target occupancy a minimum, so a hand-written bound before
# the number ("<= 128", "at least 25%") says no more than the number alone.
_BUDGET_BOUND = re.compile(r"^(?:<=|≤|at most|max(?:imum)?:?|up to)\s*", re.IGNORECASE)
_OCCUPANCY_BOUND = re.compile(r"^(?:>=|≥|at least|min(?:imum)?:?)\s*", re.IGNORECASE)
# The contract's own wording of a typed constraint, read into the same field.
_LABEL_ALIASES = {"required control level": "control_level"}
_NONE = "none"
# The contract's last item, a free constraint (kept as written, label included) that a
# filled-in list starts with its label like the typed ones.
_FREE_LABEL = "language-specific constraints"
# Every label that starts a constraint of its own inside a bullet, as shown in messages.
_SPLIT_LABELS = (*_LABELS.values(), *_LABEL_ALIASES, _FREE_LABEL)
# The contract writes the constraints as one list ("register budget, target occupancy,
# required control level, and language-specific constraints"): filled in place, one bullet
# holds several labelled values, each starting after a comma or semicolon, or after the
# list's ", and" before its last item ("..., and language: triton").
# No white space before the separator: the parts are stripped, and a pattern that starts
# with `\s*` takes time quadratic in a long run of spaces it does not match in.
_NEXT_LABEL = re.compile(
    r"[,;]\s*(?:and\s+)?(?=(?:"
    + "|".join(re.escape(label) for label in sorted(_SPLIT_LABELS, key=len, reverse=True))
    + r")\s*:)",
    re.IGNORECASE,
)


# The contract template's placeholders, as it writes them: left unfilled, each would read
# as a value (a kernel called "kernel", a constraint reading "register budget, ...").
_TEMPLATE_CONSTRAINTS = (
    "register budget, target occupancy, required control level, and language-specific constraints"
)
_TEMPLATE_OPTIMIZATION = (
    "[specific optimization + rationale + link to the shared or language-specific knowledge file]"
)


def _labelled_parts(text: str) -> list[str]:
    """``text`` split before every label (:data:`_SPLIT_LABELS`) that follows a comma or
    semicolon, ``and`` between them or not."""
    return [part.strip() for part in _NEXT_LABEL.split(text)]


def _typed_key(label: str) -> str | None:
    """The Constraints field a bullet's label names, or None for a free constraint."""
    label = label.strip().lower()
    found = next((key for key, shown in _LABELS.items() if shown.lower() == label), None)
    return found or _LABEL_ALIASES.get(label)


def _word(instance: object, attribute: attrs.Attribute[str], value: str) -> None:
    if (
        not isinstance(value, str)
        or not value
        or re.search(r"\s", value)
        or "->" in value
        or "→" in value
    ):
        raise InputError(
            expected(
                "a version name without spaces, '->' or '→'",
                repr(value),
                where=_where(instance, attribute),
            )
        )


def _optional_line(instance: object, attribute: attrs.Attribute[Any], value: str | None) -> None:
    if value is not None:
        _line(instance, attribute, value)
        _one_constraint(instance, attribute, value)


def _one_constraint(instance: object, attribute: attrs.Attribute[Any], value: str) -> None:
    # Rendered, a typed label after a separator would read back as a constraint of its own.
    if len(_labelled_parts(value)) > 1:
        raise InputError(
            expected(
                "text without a typed label after a comma, a semicolon or ', and' "
                f"({', '.join(_SPLIT_LABELS)})",
                repr(value),
                where=_where(instance, attribute),
            )
        )


def _other_items(value: Iterable[str]) -> tuple[str, ...]:
    return str_items(value, where="Constraints.other")


def _changes(value: Iterable[Change]) -> tuple[Change, ...]:
    return change_items(value, where="optimizations")


def _constraints(instance: object, attribute: attrs.Attribute[Any], value: object) -> None:
    require_instance(value, Constraints, "a Constraints", where=_where(instance, attribute))


def _other(instance: Constraints, attribute: attrs.Attribute[Any], value: tuple[str, ...]) -> None:
    for item in value:
        _line(instance, attribute, item)
        _one_constraint(instance, attribute, item)
        label, sep, _ = item.partition(":")
        if is_placeholder(item, _TEMPLATE_CONSTRAINTS):
            # Written, it would read back as the template's item left unfilled: no constraint.
            raise InputError(
                expected(
                    "a constraint, not the template's item", repr(item), where="Constraints.other"
                )
            )
        if item.lower() == _NONE or (sep and _typed_key(label) is not None):
            raise InputError(
                expected(
                    "free constraints other than 'none' and not starting with a typed label "
                    f"({', '.join([*_LABELS.values(), *_LABEL_ALIASES])}: use the field)",
                    repr(item),
                    where="Constraints.other",
                )
            )


def _budget(instance: object, attribute: attrs.Attribute[Any], value: int | None) -> None:
    if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 1):
        raise InputError(
            expected("an integer >= 1 or None", value, where=_where(instance, attribute))
        )


def _occupancy(instance: object, attribute: attrs.Attribute[Any], value: float | None) -> None:
    if value is not None and not (isinstance(value, float) and 0.0 <= value <= 100.0):
        raise InputError(
            expected(
                "a percentage in [0, 100] or None", repr(value), where=_where(instance, attribute)
            )
        )


def _number(value: float) -> str:
    # Shortest text that reads back as the same float: 50 -> "50", 37.5 -> "37.5".
    return str(int(value)) if value.is_integer() else repr(value)


@attrs.frozen(kw_only=True)
class Constraints:
    """The limits a new version must respect.

    Parameters
    ----------
    language : str, optional
        Implementation language (``"triton"``, ``"cuda"``, ``"cute-dsl"``, ``"cutile"``).
    control_level : str, optional
        The control the design needs (``"warp-level (explicit MMA and shared memory)"``).
    register_budget : int, optional
        Registers per thread the kernel may use.
    target_occupancy_pct : float, optional
        Occupancy to keep, %.
    other : tuple of str
        Further constraints, one line each.
    """

    language: str | None = attrs.field(default=None, validator=_optional_line)
    control_level: str | None = attrs.field(default=None, validator=_optional_line)
    register_budget: int | None = attrs.field(default=None, validator=_budget)
    target_occupancy_pct: float | None = attrs.field(
        default=None, converter=real_to_float, validator=_occupancy
    )
    other: tuple[str, ...] = attrs.field(default=(), converter=_other_items, validator=_other)

    def lines(self) -> list[str]:
        """The bullet texts, typed fields first (``- none`` when there is nothing)."""
        out = []
        if self.language is not None:
            out.append(f"Language: {self.language}")
        if self.control_level is not None:
            out.append(f"Control level: {self.control_level}")
        if self.register_budget is not None:
            out.append(f"Register budget: {self.register_budget} registers per thread")
        if self.target_occupancy_pct is not None:
            out.append(f"Target occupancy: {_number(self.target_occupancy_pct)}%")
        out.extend(self.other)
        return out or [_NONE]


def _leading_int(text: str) -> int | None:
    """The whole number ``text`` starts with, or None: none there, or more digits than
    ``int()`` converts (4300 by default; it raises ValueError), which is no budget."""
    match = re.match(r"^(\d+)\b", text)
    try:
        return None if match is None else int(match.group(1))
    except ValueError:
        return None


def _constraint(record: Record, line: int, text: str, values: dict[str, Any]) -> None:
    label, sep, rest = text.partition(":")
    key = _typed_key(label) if sep else None
    rest = rest.strip()
    if key is None:
        if text.lower() != _NONE:
            values["other"].append(text)
        return
    if key == "register_budget":
        budget = _leading_int(_BUDGET_BOUND.sub("", rest))
        if budget is None:
            raise fail(
                record,
                "'Register budget: <N> registers per thread'",
                repr(text),
                line=line,
                section="Constraints",
            )
        values[key] = budget
    elif key == "target_occupancy_pct":
        try:
            values[key] = float(_OCCUPANCY_BOUND.sub("", rest).rstrip("%").strip())
        except ValueError:
            raise fail(
                record, "'Target occupancy: <N>%'", repr(text), line=line, section="Constraints"
            ) from None
    else:
        values[key] = rest


@attrs.frozen(kw_only=True)
class OptimizationTask:
    """What the orchestrator asks the designer to build.

    Parameters
    ----------
    kernel : str
        The kernel (``"mla_decode"``).
    current, new_version : str
        The version to start from and the one to create (no spaces).
    bottleneck : str
        The current bottleneck, from the profiler, one line.
    optimizations : tuple of Change
        What to apply, in order, each with its rationale and catalog link.
    constraints : Constraints
        Register budget, target occupancy, control level, language.
    constraints_stated : bool
        Whether the hand-off states its constraints (has a ``### Constraints`` section,
        ``- none`` included). False for a text read without the section, one cut off
        before it perhaps: its constraints are then unknown, not none, and :meth:`render`
        writes no section for them.
    """

    kernel: str = attrs.field(validator=[_line, check_unbracketed])
    current: str = attrs.field(validator=[_word, check_unbracketed])
    new_version: str = attrs.field(validator=[_word, _heading_end, check_unbracketed])
    bottleneck: str = attrs.field(
        converter=text_one_line, validator=[_line, _heading_end, check_unbracketed]
    )
    optimizations: tuple[Change, ...] = attrs.field(converter=_changes)
    constraints: Constraints = attrs.field(factory=Constraints, validator=_constraints)
    constraints_stated: bool = attrs.field(default=True)

    @constraints_stated.validator
    def _check_stated(self, attribute: attrs.Attribute[bool], value: bool) -> None:
        if not isinstance(value, bool):
            raise InputError(expected("True or False", repr(value), where=_where(self, attribute)))
        if not value and self.constraints != Constraints():
            # Constraints given are stated ones: the record would contradict itself.
            raise InputError(
                expected(
                    "no constraints where constraints_stated is False",
                    "; ".join(self.constraints.lines()),
                    where="OptimizationTask.constraints",
                )
            )

    @optimizations.validator
    def _check_optimizations(self, _attribute: Any, value: tuple[Change, ...]) -> None:
        if not value:
            raise InputError(
                expected("at least one optimization", "none", where="OptimizationTask")
            )

    @classmethod
    def from_profile(
        cls,
        report: ProfileReport,
        *,
        new_version: str,
        optimizations: Sequence[Change],
        constraints: Constraints | None = None,
    ) -> OptimizationTask:
        """A task continuing a profile hand-off (:class:`~kernelopt.bench.ProfileReport`).

        The kernel and the current version are the profile's; the bottleneck line is its
        verdict and root cause (``"memory-bound -- ..."``), joined into one line.

        Parameters
        ----------
        report : ProfileReport
            The profile hand-off (``parse_profile``, ``profile_from_rows``).
        new_version : str
            The version to create (no spaces).
        optimizations : sequence of Change
            What to apply, in order, each with its rationale and catalog link; at least
            one.
        constraints : Constraints, optional
            Register budget, target occupancy, control level, language; none if ``None``.

        Returns
        -------
        OptimizationTask
            The task.

        Raises
        ------
        InputError
            For a ``report`` that is not a ProfileReport, no optimizations, or a
            ``new_version`` that is not one word.
        """
        from kernelopt.bench.report import ProfileReport  # here: parse_task needs no bench

        require_instance(
            report,
            ProfileReport,
            "a ProfileReport (parse_profile, profile_from_rows)",
            where="report",
        )
        return cls(
            kernel=report.kernel,
            current=report.version,
            new_version=new_version,
            bottleneck=one_line(f"{report.bottleneck.value} -- {report.root_cause}"),
            optimizations=optimizations,
            constraints=constraints or Constraints(),
        )

    def render(self) -> str:
        """The hand-off in the contract's exact markdown (ends in a newline); without the
        ``### Constraints`` section when ``constraints_stated`` is False."""
        lines = [
            f"## Optimization Task: {self.kernel} {self.current} -> {self.new_version}",
            f"### Current Bottleneck: {self.bottleneck}",
            "### Optimizations to Apply:",
        ]
        lines += [f"{n}. {change.render()}" for n, change in enumerate(self.optimizations, 1)]
        if self.constraints_stated:
            # Without the section, the text says as little as the one read: `- none` would
            # claim that there are no constraints.
            lines += ["", "### Constraints"]
            lines += [f"- {text}" for text in self.constraints.lines()]
        return "\n".join(lines) + "\n"

    def problems(
        self,
        catalog: EntryLookup,
        *,
        root: str | os.PathLike[str] | Iterable[str | os.PathLike[str]] | None = None,
    ) -> list[str]:
        """Unknown or stale catalog links of the optimizations, links that lead to no
        file, and a language no design prompt takes, as messages.

        Parameters
        ----------
        catalog : EntryLookup
            The catalog to check against (a :class:`~kernelopt.catalog.Catalog`).
        root : path-like or iterable of path-like, optional
            The folders a link resolves from (the project's root; the folder of the file
            the task is written in): a link that is no file from any of them is a
            problem. ``None`` skips that check.

        Returns
        -------
        list of str
            One message per unknown id or stale link, then one per link that leads to no
            file (with ``root``; a built-in entry's ``docs/knowledge/...`` link does,
            unless the project's tree holds the file), then one for a
            ``constraints.language`` outside
            :data:`~kernelopt.workflow.DESIGN_LANGUAGES` (``Language: Expected a language
            in cuda, cute-dsl, cutile-dsl, triton (or cutile for cutile-dsl), got
            'fortran'``); empty when all resolve.
        """
        found = check_links(self.optimizations, catalog)
        if root is not None:
            roots = [root] if isinstance(root, str | os.PathLike) else list(root)
            found += unresolved_links(self.optimizations, catalog, roots)
        return [*found, *_language_problems(self.constraints.language)]

    def validate(self, catalog: EntryLookup) -> None:
        """Check that every linked entry id exists in the catalog (and its link is current);
        the language is not checked here (:meth:`problems` lists it).

        Parameters
        ----------
        catalog : EntryLookup
            The catalog to check against (a :class:`~kernelopt.catalog.Catalog`).

        Raises
        ------
        CatalogError
            Listing every unknown id (and stale link).
        """
        raise_unknown(check_links(self.optimizations, catalog), "optimizations")


def _language_problems(language: str | None) -> list[str]:
    """The problem of a task's language that no design prompt takes, as a message.

    The record keeps any language written (a hand-written task reads whatever it says, and
    ``--check`` lists what is wrong): such a task failed only when
    :meth:`~kernelopt.workflow.DesignerPrompt.from_task` was built from it.

    Parameters
    ----------
    language : str or None
        ``Constraints.language``; None states none, which is no problem.

    Returns
    -------
    list of str
        Empty, or one message naming the languages (sorted) and the other spellings read.
    """
    if language is None:
        return []
    try:
        design_language(language, where="Language")
    except InputError as error:
        return [str(error)]
    return []


def design_language(value: object, *, where: str) -> str:
    """``value`` as a language a design prompt names, refused in one wording everywhere.

    Parameters
    ----------
    value : object
        A language in any case: one of :data:`~kernelopt.workflow.DESIGN_LANGUAGES` or
        another spelling the catalog reads (``cutile`` for ``cutile-dsl``).
    where : str
        The argument or option named in the error (``language``, ``--language``).

    Returns
    -------
    str
        The catalog's name of the language (``cutile`` for ``cutile-dsl``).

    Raises
    ------
    InputError
        ``<where>: Expected a language in cuda, cute-dsl, cutile-dsl, triton (or cutile
        for cutile-dsl), got 'fortran'``: the design spellings, sorted, then the others.
    """
    # Here, not at the top: reading a task needs no catalog; a check has it loaded already.
    from kernelopt.catalog.vocabulary import LANGUAGE_ALIASES, LANGUAGES, canonical_language
    from kernelopt.workflow.prompts import DESIGN_LANGUAGES

    try:
        return canonical_language(value, where=where)
    except InputError:
        pass
    spelled = {canonical_language(name): name for name in DESIGN_LANGUAGES}
    others = sorted(
        name for name in (*LANGUAGES, *LANGUAGE_ALIASES) if name not in spelled.values()
    )
    aliases = ", ".join(f"{name} for {spelled[canonical_language(name)]}" for name in others)
    shown = repr(value) if isinstance(value, str) else type(value).__name__
    raise InputError(
        expected(
            f"a language in {', '.join(sorted(DESIGN_LANGUAGES))}"
            + (f" (or {aliases})" if aliases else ""),
            shown,
            where=where,
        )
    ) from None


def _refuse_prose_only(record: Record, section: Section) -> None:
    """Refuse a Constraints section of prose without one ``- `` item: read as no item, it
    would render ``- none`` and state that a task whose writer named limits has none."""
    prose = next(((line, text) for line, text in section.body if text.strip()), None)
    if prose is not None:
        raise fail(
            record,
            "constraints as '- ' items ('- none' for none)",
            f"prose only: {prose[1].strip()!r}",
            line=prose[0],
            section="Constraints",
        )


def parse_task(text: str, *, path: str | os.PathLike[str] | None = None) -> OptimizationTask:
    """Read an ``## Optimization Task:`` hand-off.

    Parameters
    ----------
    text : str
        Markdown holding the hand-off (prose around it is ignored).
    path : path-like, optional
        Where ``text`` came from, named in errors.

    Returns
    -------
    OptimizationTask
        The task; ``constraints_stated`` is False when the text has no ``### Constraints``
        section (cut off before it, perhaps), or one holding only the template's item
        (``- register budget, target occupancy, ...``) left unfilled, so that its missing
        constraints do not read as ``- none``.

    Raises
    ------
    FormatError
        Naming the missing or unreadable section and its line; also for a placeholder of
        the template left unfilled where a value is needed (``[kernel]``, ``[current]``,
        ``[new_version]``, ``[from profiler]``, the optimization item), which would
        otherwise read as a value (a kernel called ``kernel``), and for a code fence
        inside an item (its line breaks would be lost in the item's one line).

    Warns
    -----
    HandoffWarning
        Naming the file and line, for prose under ``### Optimizations to Apply:`` or
        ``### Constraints`` that no item holds (not read: the record has no place for it).
    """
    record = find_record(text, "Optimization Task:", kind="optimization task", path=path)
    # No `\s*` before the arrow (the head is stripped): it would make a long run of spaces
    # in a heading without an arrow take quadratic time.
    match = re.match(r"^(?P<head>.*)(?:->|→)\s*(?P<new>\S+)$", record.heading)
    names = [] if match is None else match.group("head").split()
    if match is None or len(names) < 2:
        raise fail(
            record,
            "'## Optimization Task: <kernel> <current> -> <new_version>'",
            repr(f"## Optimization Task: {record.heading}"),
            section="Optimization Task",
        )
    head, new_version = match.group("head").strip(), match.group("new")
    kernel, current = head[: -len(names[-1])].strip(), names[-1]
    for name, placeholder, what in (
        (kernel, "[kernel]", "the kernel's name"),
        (current, "[current]", "the current version"),
        (new_version, "[new_version]", "the new version"),
    ):
        refuse_placeholder(
            record, name, placeholder, f"{what} in the heading", section="Optimization Task"
        )
    bottleneck_section = record.require("Current Bottleneck:")
    bottleneck = bottleneck_section.rest("Current Bottleneck:")
    refuse_placeholder(
        record,
        bottleneck,
        "[from profiler]",
        "the profile's bottleneck after '### Current Bottleneck:'",
        line=bottleneck_section.line,
        section="Current Bottleneck",
    )
    section = record.require("Optimizations to Apply")
    notes: list[str] = []
    unlisted_lines(record, section, notes, name="Optimizations to Apply")
    optimizations = []
    for line, item in list_items(section):
        refuse_placeholder(
            record,
            item,
            _TEMPLATE_OPTIMIZATION,
            "an optimization to apply",
            line=line,
            section="Optimizations to Apply",
        )
        try:
            optimizations.append(parse_change(item))
        except InputError as error:
            raise fail(
                record,
                "an optimization item",
                f"{item!r} ({error})",
                line=line,
                section="Optimizations to Apply",
            ) from None
    if not optimizations:
        raise fail(
            record,
            "numbered optimizations ('1. ...')",
            "none",
            line=section.line,
            section="Optimizations to Apply",
        )
    values: dict[str, Any] = {"other": []}
    constraints = record.find("Constraints")
    stated = constraints is not None
    if constraints is not None:
        items = bullet_items(constraints)
        if not items:
            _refuse_prose_only(record, constraints)
        unlisted_lines(record, constraints, notes, name="Constraints")
        # The template's own item left in place states no constraint; a section holding
        # only that one states none, and reads as not stated (never as "- none").
        filled = [
            (line, item) for line, item in items if not is_placeholder(item, _TEMPLATE_CONSTRAINTS)
        ]
        stated = bool(filled) or not items
        for line, item in filled:
            for part in _labelled_parts(item):
                _constraint(record, line, part, values)
    try:
        task = OptimizationTask(
            # The heading's placeholders filled in place keep their brackets: "[v3]".
            kernel=unbracket(kernel),
            current=unbracket(current),
            new_version=unbracket(new_version),
            bottleneck=unbracket(one_line(bottleneck)),
            optimizations=optimizations,
            constraints=Constraints(**values),
            constraints_stated=stated,
        )
    except InputError as error:
        raise fail(record, "a valid optimization task", str(error)) from None
    warn_unread(notes)
    return task

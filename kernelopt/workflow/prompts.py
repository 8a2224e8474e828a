"""The task prompts the orchestrator spawns its two agents with: profiler and kernel designer.

Each agent is started by name with a short prompt of a fixed form; the profiler's::

    Profile mla_decode v2 at b=32, s=1, t=4096, h=16.
    Return compact summary per the output contract.
    Update the devlog performance section in docs/kernels/mla_decode.md.

and the kernel designer's, built from an :class:`~kernelopt.workflow.OptimizationTask`::

    Create mla_decode v3 from v2.
    Language: triton.
    Load /design-triton-kernel and the matching reference skill if one exists.
    Apply optimizations:
    1. [cuda-graphs](docs/knowledge/optimizations/cuda-graphs.md) -- replay -- rationale: 10%
    Return implementation summary per the output contract.

:meth:`ProfilerPrompt.render` and :meth:`DesignerPrompt.render` write exactly this, and
:func:`parse_profiler_prompt` and :func:`parse_designer_prompt` read it back
(``parse_designer_prompt(p.render()) == p``), ignoring prose before, after and between
the lines. The point is a TrialPoint where b, s and t are given, else a kernel's own
``name=int`` axes (``Profile int4_gemv v2 at b=1, k=4096, n=11008.``), kept as the
profile hand-off keeps them (:func:`kernelopt.bench.profile_point`). The trial point's
``name`` is not written, so a prompt keeps none. Languages
are spelled as kernel-design instructions spell them (``cutile-dsl`` for cuTile, whose
catalog scope is ``cutile``), which also names the skill: ``/design-<language>-kernel``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping

import attrs

from kernelopt._errors import FormatError, InputError, expected
from kernelopt.bench.report import profile_point
from kernelopt.bench.trials import TrialPoint
from kernelopt.catalog.vocabulary import LANGUAGE_ALIASES, LANGUAGES
from kernelopt.workflow._fields import check_line as _line
from kernelopt.workflow._fields import path_label, require_instance, require_text
from kernelopt.workflow._fields import where as _where
from kernelopt.workflow._markdown import BOM, is_placeholder, unbracket
from kernelopt.workflow.changes import Change, change_items, parse_change
from kernelopt.workflow.profile import heading_point
from kernelopt.workflow.task import OptimizationTask, design_language

__all__ = [
    "DESIGN_LANGUAGES",
    "DesignerPrompt",
    "ProfilerPrompt",
    "parse_designer_prompt",
    "parse_profiler_prompt",
]

# A language as design instructions name it: the catalog's canonical name, except where the
# instructions use another spelling (cuTile's Python DSL is "cutile-dsl" there).
_INSTRUCTION_SPELLING = {canonical: alias for alias, canonical in LANGUAGE_ALIASES.items()}
DESIGN_LANGUAGES: tuple[str, ...] = tuple(_INSTRUCTION_SPELLING.get(n, n) for n in LANGUAGES)
"""The languages a designer prompt names (other spellings, such as ``cutile``, convert)."""

_RETURN_PROFILE = "Return compact summary per the output contract."
_DEVLOG = "Update the devlog performance section in"
_RETURN_DESIGN = "Return implementation summary per the output contract."
_REFERENCE = "and the matching reference skill if one exists."
_AXIS = re.compile(r"^[A-Za-z_]\w*$")
# A head ends in a non-space (`.+\s+at` would take time quadratic in a run of spaces).
_PROFILE_LINE = re.compile(r"^Profile\s+(?P<head>.*\S)\s+at\s+(?P<point>\S.*?)\.?$")
_CREATE_LINE = re.compile(r"^Create\s+(?P<head>.*\S)\s+from\s+(?P<current>\S+)$")
_LANGUAGE_LINE = re.compile(r"^Language:\s*(?P<language>\S.*)$")
_LOAD_LINE = re.compile(r"^Load\s+(?P<skill>/\S+)")
_APPLY_LINE = re.compile(r"^Apply optimizations:\s*(?P<inline>.*)$")
# The template's devlog, "docs/kernels/<kernel>.md", left unfilled: no devlog a profiler
# should write (it would make a file called "<kernel>.md").
_PLACEHOLDER = re.compile(r"<kernel>", re.IGNORECASE)
_ITEM = re.compile(r"^\s*(?:\d+[.)]|[-*+])\s+(?P<text>.*)$")
# The templates' placeholders for the names and the list: left unfilled, each would read
# as a value (a kernel called "<kernel>", an optimization "specific list with rationale").
_TEMPLATE_NAMES = ("<kernel>", "<version>", "<new_version>", "<current_version>", "<current>")
_TEMPLATE_LIST = "[specific list with rationale]"


def _word(instance: object, attribute: attrs.Attribute[str], value: str) -> None:
    if not isinstance(value, str) or not value or re.search(r"\s", value):
        raise InputError(
            expected("a name without spaces", repr(value), where=_where(instance, attribute))
        )


def _is_template_name(text: str) -> bool:
    return any(is_placeholder(text, shown) for shown in _TEMPLATE_NAMES)


def _filled_name(instance: object, attribute: attrs.Attribute[str], value: str) -> None:
    # Written, a name that is a template's placeholder would read back as unfilled
    # (the parsers refuse "<kernel>"), so it is no name here either.
    if isinstance(value, str) and _is_template_name(value):
        raise InputError(
            expected(
                "a name, not a template's placeholder",
                repr(value),
                where=_where(instance, attribute),
            )
        )


def _point(value: TrialPoint | Mapping[str, int] | str) -> TrialPoint | str:
    # A kernel's own axes (no b, s, t) are kept as the profile hand-off keeps them: their
    # name=int words, which profile_point has checked read back.
    point = profile_point(value, where="point")
    if isinstance(point, str):
        return point
    # The prompt writes the axes only: a point's name would not come back, so none is kept.
    if point.name:
        point = attrs.evolve(point, name="")
    bad = [key for key in point.extra if not _AXIS.match(key)]
    if bad:
        raise InputError(
            expected("axis names of letters, digits and '_'", repr(bad[0]), where="point.extra")
        )
    return point


def _filled_devlog(instance: object, attribute: attrs.Attribute[str], value: str) -> None:
    # Written, the template's placeholder would not read back (parse_profiler_prompt
    # refuses it), so it is no devlog here either.
    if _PLACEHOLDER.search(value):
        raise InputError(
            expected(
                "a devlog path, not the template's 'docs/kernels/<kernel>.md'",
                repr(value),
                where=_where(instance, attribute),
            )
        )


def _terms(point: TrialPoint | str) -> str:
    # A point of a kernel's own axes is its words ("k=4096 n=11008"), written as b, s, t are.
    if isinstance(point, str):
        return ", ".join(point.split())
    return ", ".join(f"{key}={value}" for key, value in point.as_dict().items())


def _language(value: str) -> str:
    # Refused in the words a task's check uses: one list of languages everywhere.
    canonical = design_language(value, where="language")
    return _INSTRUCTION_SPELLING.get(canonical, canonical)


def _changes(value: Iterable[Change]) -> tuple[Change, ...]:
    return change_items(value, where="optimizations")


def _sentence(text: str) -> str:
    """``text`` without the one period that ends the prompt's sentence."""
    return text[:-1] if text.endswith(".") else text


@attrs.frozen(kw_only=True)
class ProfilerPrompt:
    """The profiler agent's task: profile one version at one trial point.

    Parameters
    ----------
    kernel : str
        The kernel, one line.
    version : str
        The version to profile (no spaces).
    point : TrialPoint, mapping or str
        The trial point (``{"b": 32, "s": 1, "t": 4096}``, a TrialPoint whose name is not
        kept), or a kernel's own integer axes (``{"b": 1, "k": 4096, "n": 11008}``,
        ``"tokens=64, hidden=7168"``), kept as their ``name=int`` words sorted by name
        (see :func:`kernelopt.bench.profile_point`).
    devlog : str
        The devlog whose performance section the profiler updates; default
        ``docs/kernels/<kernel>.md`` with the kernel's name (the placeholder itself,
        unfilled, is refused).

    Examples
    --------
    >>> from kernelopt.workflow import ProfilerPrompt
    >>> print(ProfilerPrompt(kernel="mla_decode", version="v2",
    ...                      point={"b": 32, "s": 1, "t": 4096}).render(), end="")
    Profile mla_decode v2 at b=32, s=1, t=4096.
    Return compact summary per the output contract.
    Update the devlog performance section in docs/kernels/mla_decode.md.
    """

    kernel: str = attrs.field(validator=[_line, _filled_name])
    version: str = attrs.field(validator=[_word, _filled_name])
    point: TrialPoint | str = attrs.field(converter=_point)
    devlog: str = attrs.field(validator=[_line, _filled_devlog])

    @devlog.default
    def _devlog_of_kernel(self) -> str:
        return f"docs/kernels/{self.kernel}.md"

    def render(self) -> str:
        """The prompt in the template's exact text (ends in a newline)."""
        return (
            f"Profile {self.kernel} {self.version} at {_terms(self.point)}.\n"
            f"{_RETURN_PROFILE}\n"
            f"{_DEVLOG} {self.devlog}.\n"
        )


@attrs.frozen(kw_only=True)
class DesignerPrompt:
    """The kernel-designer agent's task: create a new version applying a list of changes.

    Parameters
    ----------
    kernel : str
        The kernel, one line.
    current, new_version : str
        The version to start from and the one to create (no spaces).
    language : str
        One of :data:`DESIGN_LANGUAGES` (``cutile`` is written ``cutile-dsl``).
    optimizations : tuple of Change
        What to apply, each with its rationale and catalog link; at least one.
    """

    kernel: str = attrs.field(validator=[_line, _filled_name])
    current: str = attrs.field(validator=[_word, _filled_name])
    new_version: str = attrs.field(validator=[_word, _filled_name])
    language: str = attrs.field(converter=_language)
    optimizations: tuple[Change, ...] = attrs.field(converter=_changes)

    @optimizations.validator
    def _check_optimizations(self, _attribute: object, value: tuple[Change, ...]) -> None:
        if not value:
            raise InputError(expected("at least one optimization", "none", where="DesignerPrompt"))

    @classmethod
    def from_task(cls, task: OptimizationTask, *, language: str | None = None) -> DesignerPrompt:
        """The prompt that hands ``task`` to the designer.

        Parameters
        ----------
        task : OptimizationTask
            Kernel, versions and optimizations (with their rationale and links).
        language : str, optional
            Default the task's ``constraints.language``; when both are given they must
            name the same language.

        Raises
        ------
        InputError
            For anything but a task, no language, an unknown one, or two that differ.
        """
        require_instance(task, OptimizationTask, "an OptimizationTask", where="task")
        stated = task.constraints.language
        if language is None and stated is None:
            raise InputError(
                expected(
                    "a language (language=, or the task's Constraints.language)",
                    "none",
                    where="language",
                )
            )
        chosen = _language(language if language is not None else str(stated))
        if stated is not None and _language(stated) != chosen:
            raise InputError(
                expected(
                    f"the task's language {stated!r} (its Constraints.language)",
                    repr(language),
                    where="language",
                )
            )
        return cls(
            kernel=task.kernel,
            current=task.current,
            new_version=task.new_version,
            language=chosen,
            optimizations=task.optimizations,
        )

    @property
    def skill(self) -> str:
        """The language's design skill, ``/design-<language>-kernel``."""
        return f"/design-{self.language}-kernel"

    def render(self) -> str:
        """The prompt in the template's exact text (ends in a newline)."""
        lines = [
            f"Create {self.kernel} {self.new_version} from {self.current}.",
            f"Language: {self.language}.",
            f"Load {self.skill} {_REFERENCE}",
            "Apply optimizations:",
        ]
        lines += [f"{n}. {change.render()}" for n, change in enumerate(self.optimizations, 1)]
        lines.append(_RETURN_DESIGN)
        return "\n".join(lines) + "\n"


class _Lines:
    """The prompt's lines, read in order: each fixed line is looked for after the last."""

    def __init__(self, text: str, path: str | os.PathLike[str] | None, section: str) -> None:
        require_text(text)
        self.path = path_label(path)
        self.section = section
        text = text.removeprefix(BOM)
        self.lines = [
            line.strip() for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
        ]
        self.at = 0  # index of the next line to read

    def find(self, pattern: re.Pattern[str], shown: str) -> tuple[int, re.Match[str]]:
        """The first line from here matching ``pattern``, as (1-based number, match)."""
        for index in range(self.at, len(self.lines)):
            found = pattern.match(self.lines[index])
            if found is not None:
                self.at = index + 1
                return index + 1, found
        raise self.fail(f"a line {shown!r}", "none", self.at or None)

    def fixed(self, sentence: str) -> int:
        """The line number of ``sentence`` (its final period optional)."""
        pattern = re.compile(rf"^{re.escape(_sentence(sentence))}\.?$", re.IGNORECASE)
        return self.find(pattern, sentence)[0]

    def fail(self, what: str, got: str, line: int | None) -> FormatError:
        return FormatError(expected(what, got), path=self.path, line=line, section=self.section)


def _refuse_unfilled(lines: _Lines, names: dict[str, str], number: int) -> None:
    """Refuse a name of ``names`` (its role in words, to its text) that is one of the
    template's placeholders (:data:`_TEMPLATE_NAMES`) left unfilled."""
    for role, text in names.items():
        if _is_template_name(text):
            raise lines.fail(
                f"the {role}'s name", f"the template's placeholder {text!r}, not filled in", number
            )


def parse_profiler_prompt(
    text: str, *, path: str | os.PathLike[str] | None = None
) -> ProfilerPrompt:
    """Read a profiler task prompt back into a :class:`ProfilerPrompt`.

    Parameters
    ----------
    text : str
        Text holding the prompt's three lines, in order (prose around them is ignored).
    path : path-like, optional
        Where ``text`` came from, named in errors.

    Raises
    ------
    InputError
        When ``text`` is not a str.
    FormatError
        Naming the missing or unreadable line; also for the kernel, version or devlog left
        as the template's placeholder (``<kernel>``, ``<version>``).
    """
    lines = _Lines(text, path, "Profiler prompt")
    number, found = lines.find(_PROFILE_LINE, "Profile <kernel> <version> at b=X, s=X, t=X.")
    # b=X, s=X, t=X or a kernel's own name=int axes, as a profile hand-off's heading.
    head_line = number
    names = found.group("head").split()
    if len(names) < 2:
        raise lines.fail(
            "'Profile <kernel> <version> at b=X, s=X, t=X.'", repr(found.group(0)), number
        )
    try:
        point = heading_point(found.group("point"))
    except FormatError as error:
        # The point's message already reads "Expected ..., got ...": locate it, do not wrap it.
        raise FormatError(
            error.message, path=lines.path, line=number, section=lines.section
        ) from None
    lines.fixed(_RETURN_PROFILE)
    number, devlog = lines.find(
        re.compile(rf"^{re.escape(_DEVLOG)}\s+(?P<path>\S.*)$", re.IGNORECASE),
        f"{_DEVLOG} docs/kernels/<kernel>.md.",
    )
    kernel = found.group("head")[: -len(names[-1])].strip()
    _refuse_unfilled(lines, {"kernel": kernel, "version": names[-1]}, head_line)
    path_text = _sentence(devlog.group("path"))
    if _PLACEHOLDER.search(path_text):
        # Said here, where the kernel the path should name is known.
        raise lines.fail(
            f"the devlog's path (docs/kernels/{kernel}.md, say)",
            f"the template's placeholder {path_text!r}",
            number,
        )
    try:
        return ProfilerPrompt(
            kernel=kernel,
            version=names[-1],
            point=point,
            devlog=path_text,
        )
    except InputError as error:
        raise lines.fail("a valid profiler prompt", str(error), number) from None


def _items(lines: _Lines, inline: str, apply_line: int) -> list[tuple[int, str]]:
    # The template writes the list on the Apply line ("[specific list with rationale].");
    # the renderer writes one numbered item a line, up to the Return line.
    listed = _sentence(inline.strip())
    # The template's list left unfilled lists nothing.
    listed = "" if is_placeholder(listed, _TEMPLATE_LIST) else unbracket(listed)
    found = [(apply_line, item.strip()) for item in listed.split(";") if item.strip()]
    end = lines.fixed(_RETURN_DESIGN)
    for index in range(apply_line, end - 1):
        match = _ITEM.match(lines.lines[index])
        if match is not None:
            found.append((index + 1, match.group("text").strip()))
    return found


def parse_designer_prompt(
    text: str, *, path: str | os.PathLike[str] | None = None
) -> DesignerPrompt:
    """Read a kernel-designer task prompt back into a :class:`DesignerPrompt`.

    Parameters
    ----------
    text : str
        Text holding the prompt's lines, in order (prose around them is ignored; the
        optimization items lie between ``Apply optimizations:`` and the Return line).
    path : path-like, optional
        Where ``text`` came from, named in errors.

    Raises
    ------
    InputError
        When ``text`` is not a str.
    FormatError
        Naming the missing or unreadable line; a Load line naming another language's
        skill is one, and so is a name or the list of optimizations left as the
        template's placeholder (``<kernel>``, ``[specific list with rationale]``).
    """
    lines = _Lines(text, path, "Designer prompt")
    number, found = lines.find(_CREATE_LINE, "Create <kernel> <new_version> from <current>.")
    names = found.group("head").split()
    if len(names) < 2:
        raise lines.fail(
            "'Create <kernel> <new_version> from <current>.'", repr(found.group(0)), number
        )
    kernel = found.group("head")[: -len(names[-1])].strip()
    current = _sentence(found.group("current"))
    _refuse_unfilled(
        lines,
        {"kernel": kernel, "new version": names[-1], "current version": current},
        number,
    )
    number, stated = lines.find(_LANGUAGE_LINE, "Language: <language>.")
    try:
        language = _language(_sentence(stated.group("language").strip()))
    except InputError as error:
        raise lines.fail("a known language", str(error), number) from None
    number, load = lines.find(_LOAD_LINE, f"Load /design-<language>-kernel {_REFERENCE}")
    skill = f"/design-{language}-kernel"
    if load.group("skill") != skill:
        raise lines.fail(f"the skill of the language ({skill})", load.group("skill"), number)
    apply_line, apply = lines.find(_APPLY_LINE, "Apply optimizations:")
    optimizations = []
    for line, item in _items(lines, apply.group("inline"), apply_line):
        try:
            optimizations.append(parse_change(item))
        except InputError as error:
            raise lines.fail("an optimization item", f"{item!r} ({error})", line) from None
    if not optimizations:
        unfilled = is_placeholder(_sentence(apply.group("inline").strip()), _TEMPLATE_LIST)
        got = (
            f"the template's placeholder {_TEMPLATE_LIST!r}, not filled in" if unfilled else "none"
        )
        raise lines.fail("numbered optimizations ('1. ...')", got, apply_line)
    try:
        return DesignerPrompt(
            kernel=kernel,
            new_version=names[-1],
            current=current,
            language=language,
            optimizations=optimizations,
        )
    except InputError as error:
        raise lines.fail("a valid designer prompt", str(error), apply_line) from None

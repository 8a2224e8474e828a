"""Designer → Orchestrator: the ``## New Version:`` hand-off as a typed record.

::

    ## New Version: mla_decode v3
    ### Changes Applied:
    - [cuda-graphs](docs/knowledge/optimizations/cuda-graphs.md) -- replay one graph per step
    ### Files:
    - Created: kernels/mla_decode_v3.py
    - Modified: kernels/__init__.py
    ### Correctness: PASS -- rel err 1.8e-3 against the float64 reference at both points

    ### Trial Configurations Checked
    1. decode [b=32, s=1, t=4096] -- decode-like: one query token, memory-bound
    2. speculative [b=32, s=16, t=4096] -- speculative decoding: 16 draft tokens, compute-bound

    ### Devlog Entry Written: docs/kernels/mla_decode.md

:meth:`NewVersion.render` writes exactly this and :func:`parse_version` reads it back
(``parse_version(v.render()) == v``). A point may also be written ``[32, 1, 4096]`` (b, s,
t) by hand; a trial's name (``decode``) is optional. A kernel of its own axes writes them
as ``name=int`` terms, with its trial's name as well (``1. small [hidden=7168,
tokens=64] -- one decode step's tokens``), kept as the profile hand-off keeps such a point.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import attrs

from kernelopt._errors import FormatError, InputError, expected
from kernelopt.bench.report import profile_point
from kernelopt.bench.trials import TrialPoint
from kernelopt.experiments.records import Correctness
from kernelopt.workflow._fields import check_heading_end as _heading_end
from kernelopt.workflow._fields import check_line as _line
from kernelopt.workflow._fields import str_items
from kernelopt.workflow._fields import where as _where
from kernelopt.workflow._markdown import (
    Record,
    bullet_items,
    check_unbracketed,
    fail,
    find_record,
    is_placeholder,
    list_items,
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
)
from kernelopt.workflow.profile import heading_point

__all__ = ["NewVersion", "TrialCheck", "parse_version"]

_NO_DEVLOG = "none"
# The contract template's placeholders: left unfilled, each would read as a value (a file
# called "paths", a devlog at "path", a version called "version").
_TEMPLATE_FILES = "Created/Modified [paths]"
_TEMPLATE_WHY = "[why this point matters]"
_TEMPLATE_DEVLOG = "[path]"
# The name is stripped: a `\s*` after a lazy name takes quadratic time in a run of spaces.
_TRIAL = re.compile(r"^(?P<name>[^\[]*)\[(?P<point>[^\]]*)\]\s*(?:--|—|–|:)?\s*(?P<why>.*)$")


def _word(instance: object, attribute: attrs.Attribute[str], value: str) -> None:
    if not isinstance(value, str) or not value or re.search(r"\s", value):
        raise InputError(
            expected("a name without spaces", repr(value), where=_where(instance, attribute))
        )


def _path(instance: object, attribute: attrs.Attribute[Any], value: str) -> None:
    _line(instance, attribute, value)
    # "### Files:" items split on ',' and ';' ("Created: a.py, b.py; Modified: c.py"), and
    # the template's brackets around a path or a list of them ("[a.py, b.py]") are dropped.
    if (
        "," in value
        or ";" in value
        or "`" in value
        or value.lower() == _NO_DEVLOG
        or value.startswith("[")
        or value.endswith("]")
    ):
        raise InputError(
            expected(
                "a path without commas, semicolons or backticks, not in the template's "
                "brackets ('[path]'), other than 'none'",
                repr(value),
                where=_where(instance, attribute),
            )
        )


def _paths(instance: object, attribute: attrs.Attribute[Any], value: tuple[str, ...]) -> None:
    for item in value:
        _path(instance, attribute, item)


def _created(value: Iterable[str]) -> tuple[str, ...]:
    return str_items(value, where="NewVersion.created")


def _modified(value: Iterable[str]) -> tuple[str, ...]:
    return str_items(value, where="NewVersion.modified")


def _changes(value: Iterable[Change]) -> tuple[Change, ...]:
    return change_items(value, where="changes")


def _trials(value: Iterable[TrialCheck]) -> tuple[TrialCheck, ...]:
    # Checked here: an item of another kind would fail only when rendered.
    if isinstance(value, (str, TrialCheck)) or not isinstance(value, Iterable):
        raise InputError(expected("a sequence of TrialCheck", type(value).__name__, where="trials"))
    found = tuple(value)
    wrong = [item for item in found if not isinstance(item, TrialCheck)]
    if wrong:
        raise InputError(expected("TrialCheck items", type(wrong[0]).__name__, where="trials"))
    return found


def _point(value: TrialPoint | Mapping[str, int] | str) -> TrialPoint | str:
    # A kernel's own axes (no b, s, t) are kept as the profile hand-off keeps them.
    return profile_point(value, where="TrialCheck.point")


def _check_name(name: str, where: str) -> None:
    if name != name.strip() or "\n" in name or "\r" in name or "[" in name or "]" in name:
        raise InputError(
            expected("a point name without brackets or surrounding spaces", repr(name), where=where)
        )


def _trial_point(
    instance: TrialCheck, attribute: attrs.Attribute[Any], value: TrialPoint | str
) -> None:
    if isinstance(value, TrialPoint):
        _check_name(value.name, "TrialCheck.point.name")


def _trial_name(instance: TrialCheck, attribute: attrs.Attribute[Any], value: str) -> None:
    if not isinstance(value, str):
        raise InputError(expected("a str", type(value).__name__, where="TrialCheck.name"))
    _check_name(value, "TrialCheck.name")


def _point_text(point: TrialPoint | str, name: str) -> str:
    if isinstance(point, str):  # a kernel's own axes, "hidden=7168 tokens=64"
        terms = ", ".join(point.split())
    else:
        terms = ", ".join(f"{key}={value}" for key, value in point.as_dict().items())
    return f"{name} [{terms}]" if name else f"[{terms}]"


@attrs.frozen(kw_only=True)
class TrialCheck:
    """One trial configuration the designer checked, and why it matters.

    Parameters
    ----------
    point : TrialPoint, mapping or str
        The configuration: a TrialPoint (its ``name``, such as ``"decode"``, is written
        before it) or a mapping with b, s and t, else a kernel's own integer axes
        (``{"hidden": 7168, "tokens": 64}``, ``"hidden=7168, tokens=64"``), kept as their
        ``name=int`` words sorted by name (see :func:`kernelopt.bench.profile_point`).
    why : str
        Why this point matters, one line.
    name : str
        The trial's name, written before the point (``"small"``); default the
        TrialPoint's ``name``. A point of a kernel's own axes has no name of its own, so
        its trial's name is kept here.

    Raises
    ------
    InputError
        For a point that is none of those, or a ``name`` other than the TrialPoint's own.
    """

    point: TrialPoint | str = attrs.field(converter=_point, validator=_trial_point)
    why: str = attrs.field(validator=[_line, check_unbracketed])
    name: str = attrs.field(default="", validator=_trial_name)

    def __attrs_post_init__(self) -> None:
        # One name for a TrialPoint: its own, so that a check made either way is one record.
        if not isinstance(self.point, TrialPoint):
            return
        if self.name and self.point.name and self.name != self.point.name:
            raise InputError(
                expected(
                    f"the point's own name {self.point.name!r} (or none)",
                    repr(self.name),
                    where="TrialCheck.name",
                )
            )
        name = self.name or self.point.name
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "point", attrs.evolve(self.point, name=name))

    def render(self) -> str:
        """``decode [b=32, s=1, t=4096] -- why`` (``small [hidden=7168, tokens=64] -- why``)."""
        return f"{_point_text(self.point, self.name)} -- {self.why}"


def _devlog(instance: NewVersion, attribute: attrs.Attribute[Any], value: str | None) -> None:
    if value is not None:
        _path(instance, attribute, value)
        _heading_end(instance, attribute, value)


@attrs.frozen(kw_only=True)
class NewVersion:
    """What the designer built and checked.

    Parameters
    ----------
    kernel : str
        The kernel.
    version : str
        The new version (no spaces).
    changes : tuple of Change
        What was applied, with catalog links where an entry was applied.
    created, modified : tuple of str
        Paths of the files created and modified.
    correctness : Correctness
        PASS, FAIL (or UNKNOWN when not checked).
    correctness_detail : str
        How it was checked, one line; may be empty.
    trials : tuple of TrialCheck
        The trial configurations checked, each with why it matters.
    devlog : str, optional
        Path of the devlog entry written; None when none was.
    """

    kernel: str = attrs.field(validator=[_line, check_unbracketed])
    version: str = attrs.field(validator=[_word, _heading_end, check_unbracketed])
    changes: tuple[Change, ...] = attrs.field(converter=_changes)
    created: tuple[str, ...] = attrs.field(default=(), converter=_created, validator=_paths)
    modified: tuple[str, ...] = attrs.field(default=(), converter=_modified, validator=_paths)
    correctness: Correctness = attrs.field(default=Correctness.UNKNOWN, converter=Correctness)
    correctness_detail: str = attrs.field(default="", validator=_heading_end)
    trials: tuple[TrialCheck, ...] = attrs.field(default=(), converter=_trials)
    devlog: str | None = attrs.field(default=None, validator=_devlog)

    @changes.validator
    def _check_changes(self, _attribute: Any, value: tuple[Change, ...]) -> None:
        if not value:
            raise InputError(expected("at least one change applied", "none", where="NewVersion"))

    @correctness_detail.validator
    def _check_detail(self, attribute: Any, value: str) -> None:
        if value:
            _line(self, attribute, value)

    @property
    def entry_ids(self) -> tuple[str, ...]:
        """Ids of the catalog entries the version applied (what LEARN updates)."""
        return tuple(c.entry_id for c in self.changes if c.entry_id is not None)

    def render(self) -> str:
        """The hand-off in the contract's exact markdown (ends in a newline)."""
        verdict = self.correctness.value
        if self.correctness_detail:
            verdict = f"{verdict} -- {self.correctness_detail}"
        lines = [f"## New Version: {self.kernel} {self.version}", "### Changes Applied:"]
        lines += [f"- {change.render()}" for change in self.changes]
        lines.append("### Files:")
        lines += [f"- Created: {path}" for path in self.created]
        lines += [f"- Modified: {path}" for path in self.modified]
        if not self.created and not self.modified:
            lines.append("- none")
        lines += [f"### Correctness: {verdict}", "", "### Trial Configurations Checked"]
        lines += [f"{n}. {trial.render()}" for n, trial in enumerate(self.trials, 1)]
        if not self.trials:
            lines.append("(none)")
        lines += ["", f"### Devlog Entry Written: {self.devlog or _NO_DEVLOG}"]
        return "\n".join(lines) + "\n"

    def problems(
        self, catalog: EntryLookup, *, root: str | os.PathLike[str] | None = None
    ) -> list[str]:
        """What a reviewer would reject, as messages (empty when none).

        Unknown or stale catalog links; correctness not PASS; no trial configuration;
        and, with ``root``, files and the devlog that do not exist below it (a devlog path
        naming a folder is said to be one).

        Parameters
        ----------
        catalog : EntryLookup
            The catalog the changes' links are checked against (a
            :class:`~kernelopt.catalog.Catalog`): each linked id must be in it and its
            link must end in the entry's knowledge file path.
        root : path-like, optional
            The folder the created and modified paths and the devlog path are relative
            to; ``None`` skips the file checks (and the check that a devlog was named).

        Returns
        -------
        list of str
            One message per problem, in the order above.
        """
        found = check_links(self.changes, catalog)
        if self.correctness is not Correctness.PASS:
            found.append(f"correctness is {self.correctness.value}, not PASS")
        if not self.trials:
            found.append("no trial configuration checked")
        if root is not None:
            base = Path(root)
            for kind, paths in (("created", self.created), ("modified", self.modified)):
                found += [
                    f"{kind} file {p} does not exist" for p in paths if not (base / p).exists()
                ]
            if self.devlog is None:
                found.append("no devlog entry written")
            elif not (base / self.devlog).is_file():
                # A folder there is not missing: saying so would send the user looking for it.
                why = "is a directory" if (base / self.devlog).is_dir() else "does not exist"
                found.append(f"devlog {self.devlog} {why}")
        return found

    def validate(self, catalog: EntryLookup) -> None:
        """Check that every linked entry id exists in the catalog (and its link is current).

        Parameters
        ----------
        catalog : EntryLookup
            The catalog to check against (a :class:`~kernelopt.catalog.Catalog`).

        Raises
        ------
        CatalogError
            Listing every unknown id (and stale link).
        """
        raise_unknown(check_links(self.changes, catalog), "changes")


def _items(record: Record, label: str, placeholder: str) -> list[tuple[int, str]]:
    """The items of section ``label``: on its heading line (``; ``-separated) and as list
    items, less the template's ``placeholder`` left unfilled, which lists none."""
    section = record.require(label)
    found = [item for item in bullet_items(section) if not is_placeholder(item[1], placeholder)]
    raw = section.rest(label)
    inline = "" if is_placeholder(raw, placeholder) else unbracket(raw)
    if inline:  # "### Changes Applied: a; b" written on the heading line
        found = [(section.line, item.strip()) for item in inline.split(";") if item.strip()] + found
    return found


_FILE_LABEL = re.compile(
    r"^(?:created\s*/\s*)?(?P<label>created|modified|new|changed)\b\s*:?\s*(?P<rest>.*)$",
    re.IGNORECASE,
)


def _files(record: Record) -> tuple[list[str], list[str]]:
    created: list[str] = []
    modified: list[str] = []
    # "Created: a, b; Modified: c", "Created a.py, Modified b.py", or the contract's own
    # placeholder "Created/Modified a" (a file that is new or changed: modified). A path
    # without a label belongs to the last label before it, on this line or a bullet above.
    target: list[str] | None = None
    listed = False  # inside a bracketed list of paths: "Created/Modified [a.py, b.py]"
    for line, item in _items(record, "Files:", _TEMPLATE_FILES):
        if item.lower() == _NO_DEVLOG:
            continue
        for part in re.split(r"[,;]", item):
            match = _FILE_LABEL.match(part.strip())
            if match is not None:
                label = match.group("label").lower()
                target = created if label in ("created", "new") else modified
                part = match.group("rest")
            path, listed = _bracketed_path(part.strip().strip("`").strip(), listed)
            if not path:
                continue
            if target is None:
                raise fail(
                    record,
                    "'Created: <path>' or 'Modified: <path>'",
                    repr(item),
                    line=line,
                    section="Files",
                )
            target.append(path)
    return created, modified


def _bracketed_path(path: str, listed: bool) -> tuple[str, bool]:
    """``path`` without the template's brackets (``[a.py]``, or ``[a.py`` and ``b.py]``
    around a list), and whether a bracketed list is still open after it."""
    if path.startswith("["):
        whole = unbracket(path)
        if whole != path:
            return whole, listed
        if "]" not in path:
            path, listed = path[1:].strip(), True
    if listed and path.endswith("]") and "[" not in path:
        return path[:-1].strip(), False
    return path, listed


# "PASS", "**FAIL** (why)", "[PASS] -- why"; the template's unfilled "PASS/FAIL" is neither.
_CORRECTNESS = re.compile(
    r"^[*\[]*\s*(PASS|FAIL|UNKNOWN)\b(?!\s*/\s*(?:PASS|FAIL)\b)[*\]]*\s*(?:--|—|–|:|-)?\s*(.*)$",
    re.IGNORECASE,
)


def _correctness(record: Record) -> tuple[Correctness, str]:
    section = record.require("Correctness:", shown="Correctness: PASS/FAIL")
    text = section.rest("Correctness:")
    match = _CORRECTNESS.match(unbracket(text))
    if match is None:
        raise fail(
            record,
            "'PASS' or 'FAIL' after '### Correctness:'",
            repr(text),
            line=section.line,
            section="Correctness",
        )
    return Correctness(match.group(1).upper()), match.group(2).strip()


def _trial(record: Record, line: int, text: str) -> TrialCheck:
    match = _TRIAL.match(text)
    if match is None:
        raise fail(
            record,
            "'[b=.., s=.., t=..] -- why'",
            repr(text),
            line=line,
            section="Trial Configurations Checked",
        )
    terms = match.group("point")
    if "=" not in terms:  # the contract's positional form [b, s, t]
        values = [v.strip() for v in terms.split(",")]
        if len(values) != 3:
            raise fail(
                record,
                "a point [b, s, t]",
                repr(terms),
                line=line,
                section="Trial Configurations Checked",
            )
        terms = ", ".join(f"{k}={v}" for k, v in zip(("b", "s", "t"), values, strict=True))
    try:
        point = heading_point(terms)
    except FormatError as error:
        # The point's message already reads "Expected ..., got ...": locate it, do not wrap it.
        raise FormatError(
            error.message, path=record.path, line=line, section="Trial Configurations Checked"
        ) from None
    # "[why this point matters]" filled in place keeps the template's brackets; left as
    # it is, it says nothing of the point.
    why = match.group("why").strip()
    why = "" if is_placeholder(why, _TEMPLATE_WHY) else unbracket(why)
    if not why:
        raise fail(
            record,
            "why the point matters after it ('[b, s, t] -- why')",
            repr(text),
            line=line,
            section="Trial Configurations Checked",
        )
    return TrialCheck(point=point, why=why, name=match.group("name").strip())


def parse_version(text: str, *, path: str | os.PathLike[str] | None = None) -> NewVersion:
    """Read a ``## New Version:`` hand-off.

    Parameters
    ----------
    text : str
        Markdown holding the hand-off (prose around it is ignored).
    path : path-like, optional
        Where ``text`` came from, named in errors.

    Raises
    ------
    FormatError
        Naming the missing or unreadable section and its line; also for the template's
        ``[kernel]``, ``[version]``, ``[list]`` of changes or ``[why this point matters]``
        left unfilled, which would otherwise read as values (a version called
        ``version``). Its ``Created/Modified [paths]`` and devlog ``[path]`` left unfilled
        read as no files and no devlog. A code fence inside an item is one too (its line
        breaks would be lost in the item's one line).

    Warns
    -----
    HandoffWarning
        Naming the file and line, for prose under ``### Changes Applied:``, ``### Files:``
        or ``### Trial Configurations Checked`` that no item holds (not read).
    """
    record = find_record(text, "New Version:", kind="new version", path=path)
    names = record.heading.split()
    if len(names) < 2:
        raise fail(
            record,
            "'## New Version: <kernel> <version>'",
            repr(f"## New Version: {record.heading}"),
            section="New Version",
        )
    kernel, version = record.heading[: -len(names[-1])].strip(), names[-1]
    refuse_placeholder(
        record, kernel, "[kernel]", "the kernel's name in the heading", section="New Version"
    )
    refuse_placeholder(
        record, version, "[version]", "the version in the heading", section="New Version"
    )
    changes = []
    for line, item in _items(record, "Changes Applied:", "[list]"):
        try:
            changes.append(parse_change(item))
        except InputError as error:
            raise fail(
                record, "a change item", f"{item!r} ({error})", line=line, section="Changes Applied"
            ) from None
    if not changes:
        section = record.require("Changes Applied:")
        refuse_placeholder(
            record,
            section.rest("Changes Applied:"),
            "[list]",
            "changes ('- ...')",
            line=section.line,
            section="Changes Applied",
        )
        raise fail(
            record, "changes ('- ...')", "none", line=section.line, section="Changes Applied"
        )
    notes: list[str] = []
    for label in ("Changes Applied:", "Files:", "Trial Configurations Checked"):
        unlisted_lines(record, record.require(label), notes, name=label.rstrip(":"))
    created, modified = _files(record)
    correctness, detail = _correctness(record)
    trials = [
        _trial(record, line, item)
        for line, item in list_items(record.require("Trial Configurations Checked"))
    ]
    devlog = record.require("Devlog Entry Written:").rest("Devlog Entry Written:")
    devlog = "" if is_placeholder(devlog, _TEMPLATE_DEVLOG) else unbracket(devlog).strip("`")
    try:
        version_record = NewVersion(
            kernel=unbracket(kernel),
            version=unbracket(version),
            changes=changes,
            created=created,
            modified=modified,
            correctness=correctness,
            correctness_detail=detail,
            trials=trials,
            devlog=None if devlog.lower() in (_NO_DEVLOG, "") else devlog,
        )
    except InputError as error:
        raise fail(record, "a valid new-version hand-off", str(error)) from None
    warn_unread(notes)
    return version_record

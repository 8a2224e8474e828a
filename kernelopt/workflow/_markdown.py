"""Reading the hand-offs' markdown: one record heading, its ``###`` sections, lists and tables.

A hand-off is found wherever its ``## <Title>:`` heading is, so prose or a chat preamble
before it do not matter; one inside a block quote (``> ## <Title>:``) is not read, and
the error that finds none names the quoted heading's line. The record runs to the next
level-1 or level-2 heading, or, for a hand-off inside a code fence (pasted into notes or
a devlog), to the line that closes that fence: the fence line and the prose after it are
no part of the hand-off. Inside the record, each ``### <Section>`` runs to the next
``###``; a code sample fenced inside a section is that section's text, heading-like lines
(a Python ``# comment``) included. Section parsers pick the lines they understand (table
rows, numbered or bulleted items) and skip other prose, but a line that looks like an item
and cannot be read is an error naming its line, never silently dropped. Table rows are
split into cells as every kernelopt reader splits them
(:func:`kernelopt._table_cells.split_row`): a ``\\|`` is a pipe inside its cell.
"""

from __future__ import annotations

import os
import re
import warnings
from collections.abc import Sequence

import attrs

from kernelopt._errors import FormatError, InputError, expected
from kernelopt._table_cells import split_row
from kernelopt._words import and_list, count_text
from kernelopt.workflow._fields import path_label, require_text

__all__ = [
    "BOM",
    "HandoffWarning",
    "Record",
    "Section",
    "bullet_items",
    "check_unbracketed",
    "fail",
    "find_record",
    "find_records",
    "heading_of",
    "is_placeholder",
    "list_items",
    "one_line",
    "refuse_placeholder",
    "split_row",
    "table_rows",
    "unlisted_lines",
    "warn_unread",
]

_HEADING_START = re.compile(r" {0,3}(#{1,6})\s+")
_NUMBERED = re.compile(r"^\s*(\d+)[.)]\s+(.*)$")
_BULLET = re.compile(r"^\s*[-*+]\s+(.*)$")
_SEPARATOR_CELL = re.compile(r"^:?-{2,}:?$")
# The markers of one or more nested block quotes before a line's text: "> ", ">> ", "> > ".
_QUOTE_MARKERS = re.compile(r"^(?: {0,3}> ?)+")
# A code fence line as CommonMark reads one: three or more backticks or tildes, indented
# at most three spaces, then an info string (``markdown``) or nothing.
_FENCE = re.compile(r"^ {0,3}(?P<marker>`{3,}|~{3,})(?P<info>.*)$")
# Editors on Windows start a UTF-8 file with a byte-order mark; it is no text of the file,
# and left in place it hides a heading on the first line.
BOM = "\ufeff"


def heading_of(line: str) -> tuple[int, str] | None:
    """The level and title of an ATX heading line (``### Title ###``), or None.

    The title is stripped, and a closing run of ``#`` after white space is no part of it.
    Found without a regular expression over the title: one whose lazy title is followed
    by optional white space takes time quadratic in a long run of spaces in the line, and
    a hand-off with one (a pasted line, a column padded by hand) would stall its reader.
    """
    start = _HEADING_START.match(line)
    if start is None:
        return None
    title = line[start.end() :].rstrip()
    bare = title.rstrip("#")
    if bare != title and bare[-1:].isspace():
        title = bare.rstrip()
    return len(start.group(1)), title


def one_line(text: str) -> str:
    """``text`` with every run of white space (newlines included) made one space."""
    return " ".join(text.split())


def unbracket(text: str) -> str:
    """``text`` without one ``[...]`` pair that encloses all of it.

    The contracts write an inline list as a placeholder, ``[list]``; filled in place it
    keeps its brackets (``[a; b]``). A bracket closed before the end (``[a] b; c [d]``,
    a markdown link ``[id](path)``) is part of the text and stays.
    """
    if not (text.startswith("[") and text.endswith("]")):
        return text
    depth = 0
    for index, char in enumerate(text):
        depth += {"[": 1, "]": -1}.get(char, 0)
        if depth == 0 and index < len(text) - 1:
            return text
    return text[1:-1].strip() if depth == 0 else text


def check_unbracketed(instance: object, attribute: attrs.Attribute[str], value: str) -> None:
    """Refuse text all in one ``[...]`` pair: the readers drop such brackets (the template's
    placeholder filled in place, ``[v3]``), so it would read back without them."""
    if isinstance(value, str) and unbracket(value) != value:
        raise InputError(
            expected(
                "text not all in one pair of brackets (the template's, dropped when read)",
                repr(value),
                where=f"{type(instance).__name__}.{attribute.name}",
            )
        )


@attrs.frozen(kw_only=True)
class Section:
    """One ``### Title`` section: its heading text and the lines under it.

    Parameters
    ----------
    title : str
        The heading text after ``###``.
    line : int
        1-based line number of the heading.
    body : tuple of (int, str)
        The lines under the heading, with their 1-based numbers, trailing blanks removed.
    """

    title: str
    line: int
    body: tuple[tuple[int, str], ...]

    def rest(self, label: str) -> str:
        """The heading text after ``label`` (``"Bottleneck:"``), stripped."""
        return self.title[len(label) :].strip()


@attrs.frozen(kw_only=True)
class Record:
    """One hand-off found in a text: its heading and its sections.

    Parameters
    ----------
    kind : str
        What the record is, for messages (``"profile"``).
    heading : str
        The text of the ``##`` heading after its label (``"mla_decode v3 | b=32, ..."``).
    line : int
        1-based line of the ``##`` heading.
    sections : tuple of Section
        The ``###`` sections, in order.
    path : str, optional
        The file the text came from, for messages.
    """

    kind: str
    heading: str
    line: int
    sections: tuple[Section, ...]
    path: str | None = None

    def find(self, label: str) -> Section | None:
        """The section whose title starts with ``label`` (case-insensitive).

        A second such section is a :class:`FormatError` naming both lines: reading the
        first alone would drop what the second says without a word (``### Constraints``
        and ``### Constraints (language-specific)``, a second ``### Correctness:``), and
        which one holds is the writer's call.
        """
        wanted = label.lower()
        found = [section for section in self.sections if section.title.lower().startswith(wanted)]
        if len(found) > 1:
            name = label.rstrip(":")
            raise FormatError(
                expected(
                    f"one '### {name}' section in the {self.kind} hand-off that starts "
                    f"at line {self.line}",
                    f"{len(found)} (lines {and_list([str(s.line) for s in found])})",
                ),
                path=self.path,
                line=found[1].line,
                section=name,
            )
        return found[0] if found else None

    def require(self, label: str, *, shown: str | None = None) -> Section:
        """Like :meth:`find`, but a missing section is a :class:`FormatError`."""
        found = self.find(label)
        if found is None:
            name = label.rstrip(":")
            raise FormatError(
                expected(
                    f"a '### {shown or label}' section in the {self.kind} hand-off that starts "
                    f"at line {self.line}",
                    "none",
                ),
                path=self.path,
                line=self.line,
                section=name,
            )
        return found


def fail(
    record: Record, what: str, got: str, *, line: int | None = None, section: str | None = None
) -> FormatError:
    """A :class:`FormatError` located in ``record`` (raise it)."""
    return FormatError(
        expected(what, got),
        path=record.path,
        line=record.line if line is None else line,
        section=section,
    )


def is_placeholder(text: str, placeholder: str) -> bool:
    """Whether ``text`` is the contract template's ``placeholder`` left as the template
    writes it (``[kernel]``; case and runs of white space aside), not a value filled in.

    A placeholder filled in place keeps its brackets (``[mla_decode]``) and reads as the
    value; left unfilled it would read as a value too (a kernel called ``kernel``), so the
    readers take it for no value at all.

    Parameters
    ----------
    text : str
        What the hand-off holds where the template has ``placeholder``.
    placeholder : str
        The template's text there, brackets included (``"[kernel]"``, ``"<version>"``).

    Returns
    -------
    bool
        True when ``text`` is the placeholder itself.
    """
    return one_line(text).lower() == one_line(placeholder).lower()


def refuse_placeholder(
    record: Record,
    text: str,
    placeholder: str,
    what: str,
    *,
    line: int | None = None,
    section: str | None = None,
) -> None:
    """Raise a :class:`FormatError` when ``text`` is the template's ``placeholder`` left
    unfilled (:func:`is_placeholder`) where the hand-off needs a value.

    Parameters
    ----------
    record : Record
        The hand-off being read, named in the message.
    text, placeholder : str
        What the hand-off holds, and the template's text there.
    what : str
        The value the hand-off needs there, in the message's words ("the kernel's name").
    line : int, optional
        The 1-based line of ``text``, for the message.
    section : str, optional
        The section holding it, for the message.

    Raises
    ------
    FormatError
        ``Expected <what>, got the template's placeholder '[kernel]', not filled in``.
    """
    if is_placeholder(text, placeholder):
        raise fail(
            record,
            what,
            f"the template's placeholder {placeholder!r}, not filled in",
            line=line,
            section=section,
        )


def _lines(text: str) -> list[str]:
    # Hand-offs travel through chats and editors: accept CRLF and stray trailing spaces.
    text = text.removeprefix(BOM)
    return [line.rstrip() for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n")]


def _fence_line(line: str) -> tuple[str, int, bool] | None:
    """The marker character, its length and whether an info string follows, for a code
    fence line (three backticks then ``markdown``, ``~~~``); None for any other line.

    A backtick marker followed by text holding a backtick is inline code, not a fence
    (CommonMark).
    """
    match = _FENCE.match(line)
    if match is None:
        return None
    marker, info = match.group("marker"), match.group("info").strip()
    if marker[0] == "`" and "`" in info:
        return None
    return marker[0], len(marker), bool(info)


def _fence_depths(lines: Sequence[str]) -> list[int]:
    """How many code fences are open after each line of ``lines``.

    A fence closes on a line of its own marker character, at least as long, with no info
    string (CommonMark). Inside a fence, a fence line with an info string opens a nested
    one, which the next bare line of its marker closes: a hand-off pasted in a
    ``markdown`` fence keeps a ``python`` sample of its own fenced with the same
    backticks, where CommonMark would end the hand-off at the sample's closing line and
    drop what follows it. A fence line that no later line closes opens nothing: a stray
    or cut-off one would otherwise hide every heading after it.

    Parameters
    ----------
    lines : sequence of str
        The text's lines.

    Returns
    -------
    list of int
        One depth per line: 0 outside any fence; a line opening a fence counts it, the
        line closing it does not.
    """
    open_fences: list[tuple[str, int, int]] = []  # marker character, length, line index
    depths = []
    for index, line in enumerate(lines):
        fence = _fence_line(line)
        if fence is not None:
            char, length, has_info = fence
            top = open_fences[-1] if open_fences else None
            if top is not None and char == top[0] and length >= top[1] and not has_info:
                open_fences.pop()
            elif top is None or has_info:
                open_fences.append((char, length, index))
        depths.append(len(open_fences))
    # The fences still open at the end never closed: no line is inside them. Taken off
    # as one running count, not fence by fence (time quadratic in many stray fences).
    unclosed = {opened for _, _, opened in open_fences}
    before = 0
    for index in range(len(depths)):
        before += index in unclosed
        depths[index] -= before
    return depths


def find_record(
    text: str,
    label: str,
    *,
    kind: str,
    path: str | os.PathLike[str] | None = None,
) -> Record:
    """Find the first ``## <label>`` heading in ``text`` and split its record into sections.

    Parameters
    ----------
    text : str
        Any markdown text holding the hand-off.
    label : str
        The heading label, colon included (``"Profile:"``).
    kind : str
        The record's name in messages.
    path : path-like, optional
        Where ``text`` came from, for messages.

    Raises
    ------
    InputError
        When ``text`` is not a str.
    FormatError
        When no ``## <label>`` heading is present.
    """
    return find_records(text, label, kind=kind, path=path)[0]


def find_records(
    text: str,
    label: str,
    *,
    kind: str,
    path: str | os.PathLike[str] | None = None,
) -> list[Record]:
    """Every ``## <label>`` record in ``text``, in order (parameters as :func:`find_record`).

    A file may hold several hand-offs of one kind (``kernelopt report profile --rows``
    prints one per trial point); each record runs to the next level-1 or level-2 heading,
    or to the line closing the code fence its heading is in.

    Raises
    ------
    InputError
        When ``text`` is not a str.
    FormatError
        When no ``## <label>`` heading is present; one only inside a block quote is named
        at its line (``got one only inside a block quote (line 3): take the quote's '> '
        off``).
    """
    require_text(text)
    where = path_label(path)
    lines = _lines(text)
    depths = _fence_depths(lines)
    wanted = label.lower()
    records = []
    for index, line in enumerate(lines):
        found = heading_of(line)
        if found and found[0] == 2 and found[1].lower().startswith(wanted):
            rest = found[1][len(label) :].strip()
            records.append(_record(lines, depths, index, rest, kind=kind, path=where))
    if not records:
        quoted = _quoted_heading(lines, wanted)
        near = None if quoted is not None else _near_heading(lines, label)
        if quoted is not None:
            got = f"one only inside a block quote (line {quoted}): take the quote's '> ' off"
        else:
            got = "none" if near is None else f"none: {near[1]}"
        raise FormatError(
            expected(f"a '## {label} ...' heading starting the {kind} hand-off", got),
            path=where,
            line=quoted if near is None else near[0],
            section=label.rstrip(":"),
        )
    return records


# The hand-offs' headings, and what reads each: a file given to the wrong reader is named
# as the hand-off it holds.
_HAND_OFF_READERS = {
    "profile:": "a profile hand-off, read by parse_profile (kernelopt report profile)",
    "optimization task:": "an optimization task, read by parse_task (kernelopt report task)",
    "new version:": "a new version hand-off, read by parse_version (kernelopt report version)",
}


def _near_heading(lines: Sequence[str], label: str) -> tuple[int, str] | None:
    """The first line that was meant as the ``## <label>`` heading, or that starts another
    hand-off, with what to do about it; None when there is none.

    Named, the error says why a heading in plain view was not read, where "got none"
    would not: ``# Profile:`` (another level), ``## Profile k v1`` (no colon), or
    ``## New Version:`` given to the task's reader.
    """
    wanted = label.lower()
    bare = wanted.rstrip(":")
    for index, line in enumerate(lines):
        found = heading_of(line)
        if found is None:
            continue
        level, title = found[0], found[1].lower()
        shown = f"line {index + 1}, {line.strip()!r},"
        if title.startswith(wanted):
            return index + 1, f"{shown} is a level-{level} heading: write it '## {label} ...'"
        rest = title[len(bare) :]
        if level == 2 and title.startswith(bare) and (not rest or rest[0].isspace()):
            return index + 1, f"{shown} has no ':' after '{label.rstrip(':')}'"
        other = next((r for h, r in _HAND_OFF_READERS.items() if title.startswith(h)), None)
        if level == 2 and other is not None:
            return index + 1, f"{shown} starts {other}"
    return None


def _quoted_heading(lines: Sequence[str], wanted: str) -> int | None:
    """The 1-based line of the first ``> ## <label>`` heading (in one or more block quotes),
    or None.

    A hand-off is not read out of a block quote: the quote's markers would have to come
    off every line, a code fence's included, the same way. Named, the error says why a
    heading in plain view was not found, where "got none" would not.
    """
    for index, line in enumerate(lines):
        quote = _QUOTE_MARKERS.match(line)
        found = None if quote is None else heading_of(line[quote.end() :])
        if found and found[0] == 2 and found[1].lower().startswith(wanted):
            return index + 1
    return None


def _record(
    lines: list[str],
    depths: Sequence[int],
    start: int,
    heading: str,
    *,
    kind: str,
    path: str | None,
) -> Record:
    """The record whose ``##`` heading is ``lines[start]``, split into its sections.

    ``depths`` are the fence depths of :func:`_fence_depths`. The record ends before the
    line that closes the fence its heading is in, if any; a line inside a fence opened
    within the record (a code sample) is text of its section, never a heading.
    """
    own_depth = depths[start]
    sections: list[Section] = []
    title: str | None = None
    title_line = 0
    body: list[tuple[int, str]] = []

    def close() -> None:
        if title is not None:
            while body and not body[-1][1].strip():
                body.pop()
            sections.append(Section(title=title, line=title_line, body=tuple(body)))

    for index in range(start + 1, len(lines)):
        if depths[index] < own_depth:
            break  # the fence around the hand-off closes: what follows is the outer text
        line = lines[index]
        # A fence line itself has depth own_depth + 1 when it opens and own_depth when
        # it closes; neither is a heading, so both stay text of their section.
        in_sample = depths[index] > own_depth or depths[index - 1] > own_depth
        found = None if in_sample else heading_of(line)
        if found and found[0] <= 2:
            break
        if found and found[0] == 3:
            close()
            title, title_line, body = found[1], index + 1, []
            continue
        if title is not None:
            body.append((index + 1, line))
    close()
    return Record(kind=kind, heading=heading, line=start + 1, sections=tuple(sections), path=path)


def _normal_header(cells: Sequence[str]) -> list[str]:
    return [re.sub(r"\s+", "", cell).lower() for cell in cells]


def table_rows(
    record: Record, section: Section, columns: Sequence[str]
) -> list[tuple[int, list[str]]]:
    """The data rows of the table in ``section`` whose header is ``columns``.

    Lines not starting with ``|`` are prose and skipped; the first table row must be the
    header (compared without case and spaces), the second its ``---`` separator.

    Raises
    ------
    FormatError
        For a missing or different header, or a row with the wrong number of cells.
    """
    rows = [(number, line) for number, line in section.body if line.lstrip().startswith("|")]
    shown = "| " + " | ".join(columns) + " |"
    if not rows:
        raise fail(record, f"a table {shown}", "none", line=section.line, section=section.title)
    header_line, header = rows[0]
    if _normal_header(split_row(header)) != _normal_header(columns):
        raise fail(
            record,
            f"the table header {shown}",
            repr(header),
            line=header_line,
            section=section.title,
        )
    out = []
    for number, line in rows[1:]:
        cells = split_row(line)
        if all(_SEPARATOR_CELL.match(cell) for cell in cells):
            continue
        if len(cells) != len(columns):
            raise fail(
                record,
                f"{len(columns)} cells ({', '.join(columns)})",
                f"{len(cells)} in {line.strip()!r}",
                line=number,
                section=section.title,
            )
        out.append((number, cells))
    return out


def _list_lines(
    section: Section, *, table_ends_item: bool = False
) -> list[tuple[int, bool, int, str]]:
    """Every list item of ``section`` as (line, numbered, indent, text).

    The lines that continue an item (up to a blank line or the next item, numbered or
    not, as markdown reads them) are joined to its text with one space: ``- keep the
    signature`` then ``  of mla_decode`` is one item, where read line by line the second
    line would be lost. Lines before the first item are prose, skipped. With
    ``table_ends_item``, a table row (a line starting with ``|``) ends the item instead of
    continuing it, for a reader that names such rows as not read.
    """
    # Each item's lines are gathered and joined once: joining as they come would copy the
    # growing text for every line, time quadratic in an item of many lines.
    found: list[tuple[int, bool, int, list[str]]] = []
    open_item = False
    for number, line in section.body:
        match = _NUMBERED.match(line)
        numbered = match is not None
        match = match or _BULLET.match(line)
        if match:
            indent = len(line) - len(line.lstrip())
            found.append((number, numbered, indent, [match.group(match.lastindex or 1).strip()]))
            open_item = True
        elif not line.strip() or (table_ends_item and line.lstrip().startswith("|")):
            open_item = False
        elif open_item:
            found[-1][3].append(line.strip())
    return [
        (number, numbered, indent, " ".join(parts)) for number, numbered, indent, parts in found
    ]


class HandoffWarning(UserWarning):
    """Part of a hand-off was left out when read: prose under a list section that no item
    holds (a paragraph under ``### Optimizations to Apply:``), as a task or new version is
    read; the profile reader's :class:`~kernelopt.workflow.ProfileWarning` is one too.

    Exported as ``kernelopt.workflow.HandoffWarning``, so that a filter names it:
    ``warnings.filterwarnings("error", category=HandoffWarning)`` refuses such a hand-off.
    """


def unlisted_lines(record: Record, section: Section, notes: list[str], *, name: str) -> None:
    """Name in ``notes`` each paragraph of a list section that no item holds (the record
    has no place for it, so it is not read), and refuse a code fence inside an item.

    A code block in an item would be joined into the item's one line (its line breaks
    lost, ``x = 1`` after a ``# comment``), so it is a FormatError naming the fence's
    line. Prose after the items of the record's last section is the text after the
    hand-off (a chat's closing words), not named. ``name`` is the section's name in
    errors and notes (``Optimizations to Apply``).
    """
    open_item = False
    last_item = 0  # the line of the last item so far; 0 before the first
    unread: list[tuple[int, str]] = []
    lead: tuple[int, str] | None = None  # prose ending in ':' that may open the next list
    for number, line in section.body:
        text = line.strip()
        if not text:
            open_item = False
            continue
        if lead is not None:
            # A lead line ("The designer keeps to:") opens the list right under it and
            # holds nothing of its own; before anything else it is prose left unread.
            if not ((text[0].isdigit() and _NUMBERED.match(line)) or _BULLET.match(line)):
                unread.append(lead)
            lead = None
        # The first character says which pattern can match: one test a line, as the
        # lines of an item of many lines are read in linear time.
        head = text[0]
        if (
            head in "`~"
            and (open_item or (last_item and line[:1].isspace()))
            and _fence_line(line) is not None
        ):
            raise fail(
                record,
                "items of one paragraph (a code block in an item is not kept: name a file "
                "that holds the code instead)",
                f"a code fence at line {number}: {text!r}",
                line=number,
                section=name,
            )
        if (head.isdigit() and _NUMBERED.match(line)) or (head in "-*+" and _BULLET.match(line)):
            open_item, last_item = True, number
        elif not open_item and text != "(none)":
            if text.endswith(":"):
                lead = (number, text)
            else:
                unread.append((number, text))
    # A lead line last in its section introduces the next heading ("These constraints
    # come from the profile:"), and holds nothing either.
    if section is record.sections[-1] and last_item:
        unread = [(number, text) for number, text in unread if number < last_item]
    if unread:
        first, text = unread[0]
        more = ""
        if len(unread) > 1:
            more = f" and {count_text(len(unread) - 1, 'more line')} to line {unread[-1][0]}"
        message = fail(
            record,
            "list items ('1. ...' or '- ...') under this heading",
            f"prose {text!r}{more}",
            line=first,
            section=name,
        )
        notes.append(f"{message}; not read (write it in an item, or under a heading of its own)")


def list_items(section: Section, *, table_ends_item: bool = False) -> list[tuple[int, str]]:
    """The items of the list a contract numbers (``1. text``), or, written as bullets
    instead, the outermost ``- text`` items; bullets under a numbered item are its details.
    The lines that continue an item are part of it (:func:`_list_lines`, which also says
    what ``table_ends_item`` does).
    """
    items = _list_lines(section, table_ends_item=table_ends_item)
    numbered = [(number, text) for number, is_numbered, _, text in items if is_numbered]
    if numbered:
        return numbered
    outer = min((indent for _, _, indent, _ in items), default=0)
    return [(number, text) for number, _, indent, text in items if indent == outer]


def bullet_items(
    section: Section, *, numbered_too: bool = True, table_ends_item: bool = False
) -> list[tuple[int, str]]:
    """``- text`` items of ``section`` (and ``1. text`` ones) as (line, text); the lines
    that continue an item are part of it (:func:`_list_lines`, which also says what
    ``table_ends_item`` does)."""
    return [
        (number, text)
        for number, numbered, _, text in _list_lines(section, table_ends_item=table_ends_item)
        if numbered_too or not numbered
    ]


def warn_unread(notes: list[str]) -> None:
    """Each note as a :class:`HandoffWarning`, at the line that called the reader."""
    for note in notes:
        warnings.warn(note, HandoffWarning, stacklevel=3)

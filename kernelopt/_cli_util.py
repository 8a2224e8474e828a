"""Small helpers shared by the subcommands of the ``kernelopt`` command-line tool."""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import unicodedata
from collections.abc import Callable, Sequence
from typing import Any, NoReturn, TextIO

from kernelopt._checks import ascii_digits
from kernelopt._errors import expected
from kernelopt._words import and_list

# Exit codes shared by every subcommand.
EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_USAGE = 2
# What a shell reports for a program stopped by SIGINT (128 + 2).
EXIT_INTERRUPTED = 130

# Where a parse keeps the single-valued options it has seen (argparse copies a
# subcommand's namespace into its parent's, so the record follows the options).
_GIVEN = "_options_given"
# The subcommand whose parser found arguments it does not know, and the arguments other
# than options it takes ("one DIR"), for the error its parents raise.
_STRAY_IN = "_stray_arguments_in"
_STRAY_POSITIONALS = "_stray_arguments_positionals"
# What argparse reads as a negative number, not an option, on a parser without options
# that look like one (none of kernelopt's do): ``-5`` given after DIR is an extra argument.
_NEGATIVE_NUMBER = re.compile(r"^-\d+$|^-\d*\.\d+$")


class _StoreOnce(argparse._StoreAction):
    """``store`` that refuses its option a second time instead of keeping the last value."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: str | Sequence[Any] | None,
        option_string: str | None = None,
    ) -> None:
        if option_string is not None:
            given: set[str] = namespace.__dict__.setdefault(_GIVEN, set())
            if self.dest in given:
                first = getattr(namespace, self.dest)
                raise argparse.ArgumentError(
                    self,
                    expected(f"{option_string} once", f"it twice ({first!r}, then {values!r})"),
                )
            given.add(self.dest)
        setattr(namespace, self.dest, values)


class _HelpFormatter(argparse.HelpFormatter):
    """Reflow prose paragraphs, but keep indented lines (examples) as written."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        blocks: list[str] = []
        for paragraph in text.split("\n\n"):
            prose: list[str] = []
            lines: list[str] = []
            for line in paragraph.splitlines():
                if line.startswith("  "):
                    if prose:
                        lines.append(super()._fill_text(" ".join(prose), width, indent))
                        prose = []
                    lines.append(indent + line)
                else:
                    prose.append(line)
            if prose:
                lines.append(super()._fill_text(" ".join(prose), width, indent))
            blocks.append("\n".join(lines))
        return "\n\n".join(blocks)


class Parser(argparse.ArgumentParser):
    """The argument parser of every ``kernelopt`` command and subcommand.

    A single-valued option given twice is a usage error, and examples in descriptions and
    epilogs keep their lines. Subcommand parsers inherit both (argparse builds them with
    the parent's class).
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _HelpFormatter)
        super().__init__(*args, **kwargs)
        self.register("action", None, _StoreOnce)
        self.register("action", "store", _StoreOnce)

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        parsed, extras = super().parse_known_args(args, namespace)
        # The innermost subcommand sees stray arguments first: name it, not the tool, in
        # the error its parents raise, with the arguments it takes.
        if extras and not hasattr(parsed, _STRAY_IN):
            setattr(parsed, _STRAY_IN, self.prog)
            setattr(parsed, _STRAY_POSITIONALS, self._positionals_taken())
        return parsed, extras

    def parse_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> argparse.Namespace:
        parsed, extras = self.parse_known_args(args, namespace)
        if extras:
            where = getattr(parsed, _STRAY_IN, self.prog)
            positionals = getattr(parsed, _STRAY_POSITIONALS, "")
            message = _stray_message(where, positionals, extras)
            self.exit(EXIT_USAGE, f"{where}: error: {one_line(message)}\n")
        return parsed

    def _positionals_taken(self) -> str:
        """The arguments other than options this parser takes, in words (``"one DIR"``).

        Subcommands are left out: a parser with subcommands hands every argument after
        the command's name on, so none is ever left over there.
        """
        words = []
        for action in self._actions:
            if action.option_strings or isinstance(action, argparse._SubParsersAction):
                continue
            name = action.metavar if isinstance(action.metavar, str) else action.dest
            if action.nargs is None:
                words.append(f"one {name}")
            elif action.nargs == argparse.OPTIONAL:
                words.append(f"at most one {name}")
            elif isinstance(action.nargs, int):
                words.append(f"{action.nargs} {name}")
            else:  # "*", "+", "...": they take every argument left
                words.append(f"{name}...")
        return and_list(words)

    def _check_value(self, action: argparse.Action, value: Any) -> None:
        if action.choices is not None and value not in action.choices:
            names = ", ".join(map(str, action.choices))
            raise argparse.ArgumentError(action, expected(f"one of {names}", repr(value)))

    def error(self, message: str) -> NoReturn:
        """Exit 2 with one ``prog: error: ...`` line, in ``Expected X, got Y`` words."""
        self.exit(EXIT_USAGE, f"{self.prog}: error: {one_line(_in_expected_words(message))}\n")


def _stray_message(where: str, positionals: str, extras: Sequence[str]) -> str:
    """The error for arguments a command does not take, in ``Expected X, got Y`` words.

    An unknown option (``--bogus``, maybe with a value after it) is said as one; an
    argument that is no option, given where the command's own (``DIR``) are already taken,
    is said as an extra argument, not as an option the help does not list.

    Parameters
    ----------
    where : str
        The command that found them (``"kernelopt diagnose"``).
    positionals : str
        The arguments other than options it takes, in words (``"one DIR"``; ``""`` for
        none).
    extras : sequence of str
        The arguments left over, in the order given.

    Returns
    -------
    str
        The message, naming every argument left over.
    """
    got = " ".join(extras)
    first = extras[0]
    if first.startswith("-") and first != "-" and not _NEGATIVE_NUMBER.match(first):
        return expected(f"only options that `{where} --help` lists", got)
    options = f"the options `{where} --help` lists"
    what = f"{positionals} and {options}" if positionals else f"only {options}"
    extra = "an extra argument" if len(extras) == 1 else "extra arguments"
    return expected(what, f"{extra} {got}")


# argparse's own messages, and the same said as every other kernelopt error.
_ARGPARSE_MESSAGES: tuple[tuple[re.Pattern[str], Callable[[re.Match[str]], str]], ...] = (
    (
        re.compile(r"the following arguments are required: (?P<names>.+)"),
        # "none of them" of one argument would read as if several were missing.
        lambda m: expected(
            f"the required {m['names']}", "none of them" if ", " in m["names"] else "none"
        ),
    ),
    (
        re.compile(r"argument (?P<arg>\S+): expected one argument"),
        lambda m: f"argument {m['arg']}: " + expected("a value after it", "none"),
    ),
    (
        re.compile(r"argument (?P<arg>\S+): expected at least one argument"),
        lambda m: f"argument {m['arg']}: " + expected("one value or more after it", "none"),
    ),
)


def _in_expected_words(message: str) -> str:
    for pattern, reword in _ARGPARSE_MESSAGES:
        found = pattern.fullmatch(message)
        if found:
            return reword(found)
    return message


# Characters that end a line where stderr is read (a terminal, a log split by lines) or
# that a terminal acts on instead of showing (ESC starts a control sequence), and the
# invisible format characters (Cf): a bidirectional override or isolate (U+202E, U+2066)
# reorders what the terminal shows after it, so a name could read as another name, and a
# zero-width space (U+200B), a word joiner or a BOM hides in a name that reads the same
# without it.
_ACTING = frozenset({"Cc", "Cf", "Zl", "Zp"})
# The format characters ordinary text needs: ZWNJ and ZWJ shape Persian and Indic words and
# join emoji (a family, a heart on fire). Kept only between two characters shown as they
# are, outside ASCII; elsewhere they join nothing and are escaped, as a ZWJ hidden in an
# ASCII name would read the same as the name without it.
_JOINERS = frozenset({"\u200c", "\u200d"})
# What is looked at one character at a time: all but printable ASCII. An emoji tag
# sequence (the flag of England: U+1F3F4, tag letters, the cancel tag) is kept whole: its
# tag characters are Cf, escaped anywhere else.
_LOOKED_AT = re.compile("\U0001f3f4[\U000e0020-\U000e007e]+\U000e007f|[^\x20-\x7e]")


def one_line(message: str) -> str:
    """``message`` on one line: each control character, line or paragraph separator escaped.

    A path or a value in an error comes from the user or from a file: a file name with a
    newline in it would split the error in two, and an escape sequence read from a binary
    file would recolour or clear the terminal. Tabs are kept: they break no line. A byte
    0x80-0x9f of a name that is not UTF-8 is escaped too: written back raw, it is a C1
    control. So is an invisible format character (a bidirectional override such as U+202E
    would show the name in another order, a zero-width space hides in it), but a joiner
    between two letters or emoji outside ASCII, which ordinary text uses, is kept.

    Parameters
    ----------
    message : str
        The error's text.

    Returns
    -------
    str
        The text, each such character written as Python writes it in a string literal
        (``\\n``, ``\\x1b``, ``\\u2028``, ``\\u202e``).
    """
    return _escaped(message, kept="\t", escape=_python_escape)


def printable(text: str) -> str:
    """``text`` of several lines, safe to print: as :func:`one_line`, but ``\\n`` is kept.

    What a command prints from a file (a hand-off in canonical form) is laid out in lines,
    but a field of it may hold an escape sequence or a NUL that a terminal would act on,
    or a bidirectional override that would reorder what it shows. Each such character is
    written as its escape (``\\x1b``, ``\\u202e``), as in errors; tabs and the newlines of
    the layout are kept. A backslash is kept as it is, so text printed once prints the
    same again: saved and read back, it is a fixed point.

    Parameters
    ----------
    text : str
        The text to print, lines ended by ``\\n``.

    Returns
    -------
    str
        The text, each other control character, line or paragraph separator and each
        invisible format character escaped.
    """
    return _escaped(text, kept="\t\n", escape=_python_escape)


def _escaped(text: str, *, kept: str, escape: Callable[[str], str]) -> str:
    """``text`` with each character :func:`_acts` names written as ``escape`` writes it."""

    def shown(found: re.Match[str]) -> str:
        piece = found.group()
        if len(piece) == 1 and _acts(text, found.start(), kept):
            return escape(piece)
        return piece

    return _LOOKED_AT.sub(shown, text)


def _python_escape(char: str) -> str:
    return repr(char)[1:-1]


def _acts(text: str, at: int, kept: str) -> bool:
    """Whether ``text[at]``, printed as itself, breaks the line, acts on a terminal or hides.

    Parameters
    ----------
    text : str
        The whole text: whether a joiner joins depends on its neighbours.
    at : int
        The index of the character asked about.
    kept : str
        The characters the layout keeps (a tab, a newline).
    """
    char = text[at]
    if char in kept:
        return False
    if char in _JOINERS:
        return not (_shown_outside_ascii(text, at - 1) and _shown_outside_ascii(text, at + 1))
    # A byte 0x80-0x9f that is not UTF-8 (in a name on the command line; a JSON `\udc9b`),
    # kept by Python as a lone surrogate, goes out as that byte through a stream with the
    # surrogateescape handler (the C locale's): a C1 control, 0x9b starting a sequence as
    # ESC [ does. The other bytes of such a name are no controls, and print as they are.
    return unicodedata.category(char) in _ACTING or "\udc80" <= char <= "\udc9f"


def _shown_outside_ascii(text: str, at: int) -> bool:
    """Whether ``text[at]`` exists, lies outside ASCII and is a letter, mark or symbol."""
    if not 0 <= at < len(text) or text[at] <= "\x7f":
        return False
    # C: controls, format, surrogates, private use, unassigned; Z: spaces and separators.
    return unicodedata.category(text[at])[0] not in "CZ"


def missing_command(parser: argparse.ArgumentParser) -> int:
    """Print ``parser``'s help and the error of a command line that names no subcommand.

    Parameters
    ----------
    parser : argparse.ArgumentParser
        A parser whose subcommands were all left out.

    Returns
    -------
    int
        ``EXIT_USAGE``, the exit code of a usage error.
    """
    parser.print_help(sys.stderr)
    names = [
        name
        for action in parser._actions
        if isinstance(action, argparse._SubParsersAction)
        for name in action.choices
    ]
    got = expected(f"a command among {', '.join(names)}", "none")
    print(f"{parser.prog}: error: {got}", file=sys.stderr)
    return EXIT_USAGE


def options_given(args: argparse.Namespace) -> set[str]:
    """The ``dest`` of each single-valued option given on the command line.

    A default and the same value typed out read alike in the namespace; a command that
    refuses an option where it would be dropped must tell them apart.

    Parameters
    ----------
    args : argparse.Namespace
        What a :class:`Parser` parsed.

    Returns
    -------
    set of str
        The destinations of the options given (``"max_shapes"`` for ``--max-shapes``).
    """
    return set(getattr(args, _GIVEN, ()))


def exit_codes(ok: str = "ok", findings: str | None = None, usage: str = "") -> str:
    """The ``Exit codes:`` sentence of a command's help, in the words every command uses.

    Parameters
    ----------
    ok : str
        What exit 0 means for this command.
    findings : str, optional
        What exit 1 means; ``None`` for a command that never exits 1.
    usage : str
        Examples of input errors for this command, shown after exit 2's meaning.

    Returns
    -------
    str
        One sentence, e.g. ``Exit codes: 0 ok; 1 lint errors; 2 usage or input error.``
    """
    one = "" if findings is None else f"; 1 {findings}"
    two = f" ({usage})" if usage else ""
    return f"Exit codes: 0 {ok}{one}; 2 usage or input error{two}."


def add_json_flag(parser: argparse.ArgumentParser, *, warnings: str | None = None) -> None:
    """Add the ``--json`` flag every reporting subcommand takes.

    Parameters
    ----------
    parser : argparse.ArgumentParser
        The subcommand's parser.
    warnings : str, optional
        Where the command's warnings go under ``--json``, as the help says it after the
        flag's meaning (``"warnings go to stderr"``); ``None`` says nothing of them. Each
        command says it for itself: some write warnings on stderr, others put them in the
        JSON, and one sentence for all would be wrong for some.
    """
    where = f" ({warnings})" if warnings else ""
    parser.add_argument(
        "--json",
        action="store_true",
        help=f"print machine-readable JSON on stdout instead of text{where}",
    )


def print_json(data: Any) -> None:
    """Print ``data`` as indented JSON with a trailing newline.

    Text is written as it reads where standard output can encode it. Where it cannot (a
    file name that is not UTF-8, kept by Python as lone surrogates; an ASCII-only
    terminal), every character outside ASCII is written as a JSON escape instead, so the
    document stays valid and each name reads back as it was. Each character
    :func:`one_line` escapes (a control character, an invisible format character) is
    always written as its JSON escape (``\\u001b``, ``\\u009b``, ``\\u202e``), never as
    itself: printed on a terminal, one read from a file would act on it or reorder what it
    shows.
    """
    text = json.dumps(data, indent=2, sort_keys=False, default=str, ensure_ascii=False)
    try:
        text.encode(getattr(sys.stdout, "encoding", None) or "utf-8")
    except (UnicodeEncodeError, LookupError):
        text = json.dumps(data, indent=2, sort_keys=False, default=str, ensure_ascii=True)
    # json.dumps escapes only the controls below U+0020: DEL, the C1 controls (U+009B
    # starts a control sequence as ESC [ does), U+2028/U+2029 and the format characters go
    # out as they are. Outside ASCII they can stand only inside a string, where their
    # escape is the same text; the layout's newlines are kept.
    sys.stdout.write(_escaped(text, kept="\n", escape=_json_escape) + "\n")


def _json_escape(char: str) -> str:
    """``char`` as a JSON escape: beyond U+FFFF, as its UTF-16 surrogate pair."""
    code = ord(char)
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    code -= 0x10000
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


def _int_at_least(text: str, minimum: int) -> int:
    # int() also reads other scripts' digits ("５" is 5): a count must be what was typed.
    if not ascii_digits(text.strip().removeprefix("-").removeprefix("+")):
        raise argparse.ArgumentTypeError(expected(f"an int >= {minimum}", repr(text)))
    value = int(text)
    if value < minimum:
        raise argparse.ArgumentTypeError(expected(f"an int >= {minimum}", value))
    return value


def int_at_least(minimum: int) -> Callable[[str], int]:
    """An argparse ``type``: an int of at least ``minimum``.

    Parameters
    ----------
    minimum : int
        The smallest value accepted.

    Returns
    -------
    Callable[[str], int]
        The converter; for other text it raises ``argparse.ArgumentTypeError``, which
        argparse reports as a usage error (exit 2).
    """

    def convert(text: str) -> int:
        return _int_at_least(text, minimum)

    convert.__name__ = f"int >= {minimum}"
    return convert


def count_at_least_one(text: str) -> int:
    """An argparse ``type``: a count of at least 1 (none would leave nothing to run).

    Parameters
    ----------
    text : str
        The argument as given on the command line.

    Returns
    -------
    int
        The count.

    Raises
    ------
    argparse.ArgumentTypeError
        For text that is not an int >= 1 (argparse turns it into a usage error, exit 2).
    """
    return _int_at_least(text, 1)


def output_path(text: str) -> str:
    """An argparse ``type``: the path of a file to write.

    An empty path names no file: left unchecked, it reads as the option not given and
    the command writes nothing without a word.

    Parameters
    ----------
    text : str
        The argument as given on the command line.

    Returns
    -------
    str
        The path, as given.

    Raises
    ------
    argparse.ArgumentTypeError
        For an empty path (a usage error, exit 2).
    """
    return _FILE_TO_WRITE(text)


def nonempty_path(what: str) -> Callable[[str], str]:
    """An argparse ``type``: the path of ``what``, a file or folder to read or to write in.

    An empty path names nothing: left unchecked it reads as the option not given (an
    ``if args.path:`` skips it, an ``or`` puts a default in its place) or as ``Path("")``,
    the working directory, which the user did not name. :func:`output_path` is this
    check for a file to write.

    Parameters
    ----------
    what : str
        What the path names, in the error's words (``"a log directory"``).

    Returns
    -------
    Callable[[str], str]
        The converter: it returns the path as given, and for an empty one raises
        ``argparse.ArgumentTypeError`` (``Expected <what>, got an empty path``), which
        argparse reports as a usage error (exit 2).
    """

    def convert(text: str) -> str:
        if not text:
            raise argparse.ArgumentTypeError(expected(what, "an empty path"))
        return text

    convert.__name__ = what
    return convert


_FILE_TO_WRITE = nonempty_path("a file path to write")


def nonempty_text(what: str) -> Callable[[str], str]:
    """An argparse ``type``: a value that holds more than blanks, such as a filter.

    An option given as ``''`` (a shell variable left unset) reads as the option not given
    where the command tests ``if args.point:``: rows of every point would be kept, or the
    only one taken, as if the user had asked for none.

    Parameters
    ----------
    what : str
        What the option names, in the error's words (``"a trial point"``).

    Returns
    -------
    Callable[[str], str]
        The converter: it returns the text as given, and for an empty or blank one raises
        ``argparse.ArgumentTypeError`` (``Expected <what>, got an empty value``), which
        argparse reports as a usage error (exit 2).
    """

    def convert(text: str) -> str:
        if not text.strip():
            raise argparse.ArgumentTypeError(expected(what, f"an empty value ({text!r})"))
        return text

    convert.__name__ = what
    return convert


class ClosedPipeGuard:
    """Stands in for ``sys.stdout`` (or ``sys.stderr``) while a command runs, so a reader
    that goes away (``kernelopt ... | head -1``, or ``2>&1 | head -1``) ends neither in a
    traceback nor in the interpreter's "Exception ignored" note at exit, and the command
    still returns its own exit code.

    Parameters
    ----------
    stream : TextIO
        The real standard output (or standard error).
    name : str
        What the stream is, in words: a write that fails for another reason (a full disk
        behind ``> out.txt``) names it, not "a file".
    """

    def __init__(self, stream: TextIO, name: str = "standard output") -> None:
        self.stream = stream
        self.name = name
        self.reader_gone = False

    def write(self, text: str) -> int:
        """Write ``text``, or drop it once the reader has gone.

        A character the stream cannot encode (a file name that is not UTF-8, shown as a
        lone surrogate; anything outside ASCII on an ASCII-only terminal) is written as
        its escape (``\\udcff``), as Python writes it on stderr, not a traceback.
        """
        if not self.reader_gone:
            try:
                return self.stream.write(text)
            except BrokenPipeError:
                self._reader_went()
            except OSError as error:
                raise self._named(error) from error
            except UnicodeEncodeError:
                # The text stream encodes the whole text before writing any of it.
                encoding = getattr(self.stream, "encoding", None) or "utf-8"
                shown = text.encode(encoding, "backslashreplace").decode(encoding)
                return self.write(shown)
        return len(text)

    def flush(self) -> None:
        """Flush the real stream, noting a reader that has gone."""
        if not self.reader_gone:
            try:
                self.stream.flush()
            except BrokenPipeError:
                self._reader_went()
            except OSError as error:
                raise self._named(error) from error

    def _named(self, error: OSError) -> OSError:
        """``error`` with this stream as its file name (the OS gives none for a write)."""
        if error.filename is not None:
            return error
        return OSError(error.errno, error.strerror or str(error), self.name)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)

    def _reader_went(self) -> None:
        self.reader_gone = True
        # What is still buffered would fail again when the interpreter flushes at exit:
        # point the descriptor at the null device so that last flush succeeds.
        try:
            fd = self.stream.fileno()
        except (AttributeError, OSError, ValueError):  # a captured or in-memory stream
            return
        null = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(null, fd)
        finally:
            os.close(null)

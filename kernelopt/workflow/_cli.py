"""`kernelopt learn` and `kernelopt report`: the LEARN step and the workflow hand-offs.

Commands::

    kernelopt learn --before A.jsonl --after B.jsonl --entry ID [--knowledge DIR]
                    [--point NAME] [--mode M] [--dry-run] [--json] ...
    kernelopt report profile --rows FILE.jsonl --kernel K --version V [--impl I]
                    [--baseline FILE.jsonl] [--baseline-impl I] [--point P] [--mode M]
                    [--devlog PATH] [--family F] [--language L] [--experiment N]
                    [--knowledge DIR] [--json]
    kernelopt report profile FILE.md [--experiment N] [--check [--knowledge DIR]] [--json]
    kernelopt report task FILE.md [--check [--knowledge DIR]] [--json]
    kernelopt report version FILE.md [--check [--root DIR] [--knowledge DIR]] [--json]

Exit codes: 0 ok; 1 a check found problems, or LEARN could not judge the result
(UNCLEAR); 2 usage or input errors. A warning raised while a command runs (a
``ProfileWarning`` naming what a hand-off's reader left out) is printed on stderr as one
line, ``kernelopt report: warning: ...``, as errors are; ``report profile FILE.md
--check`` lists what the reader left out as problems instead (exit 1). This module
imports nothing heavy.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TextIO

from kernelopt._cli_util import (
    EXIT_FINDINGS,
    EXIT_OK,
    add_json_flag,
    exit_codes,
    int_at_least,
    missing_command,
    nonempty_path,
    nonempty_text,
    one_line,
    print_json,
    printable,
)
from kernelopt._errors import FormatError, InputError, expected
from kernelopt._fileio import read_text
from kernelopt._words import and_list, count_text

_LEARN = "record what a before/after comparison taught into the knowledge base"
_REPORT = "print or check a workflow hand-off (profile, optimization task, new version)"
_REPORT_DESCRIPTION = (
    "Print or check a workflow hand-off: a profile, an optimization task or a new version."
)
# What exit 2 means, per form: each names only options that form takes.
_PROFILE_USAGE = (
    "a missing file, --rows without --kernel and --version, --baseline-impl without --baseline"
)
_TASK_USAGE = "a missing file, --knowledge without --check"
_VERSION_USAGE = "a missing file, --knowledge or --root without --check, a --root not a folder"
# What exit 1 means for `report`, and for `report profile`, whose check also fails a
# hand-off its reader could not fully read.
_FINDINGS = "--check found problems, or the hand-off does not parse"
_PROFILE_FINDINGS = (
    "--check found problems (an unknown entry id, or a part of the hand-off the reader "
    "leaves out, or a trial point's hand-off written twice), or the hand-off does not parse"
)
# The path options' types: an empty path names no file or folder, and is refused as such.
_ROWS_FILE = nonempty_path("a BenchRow JSONL file")
_HAND_OFF = nonempty_path("a markdown file")
_TREE = nonempty_path("a knowledge tree folder")
# docs/workflow.md holds a task and a version hand-off: each reader takes the first of its
# kind from the guide, as it would from a file of its own.
_EXAMPLES = "\n\nExamples, run in a kernelopt checkout:\n"
_TASK_EXAMPLES = (
    "  kernelopt report task docs/workflow.md --check\n"
    "  kernelopt report task docs/workflow.md --check --json"
)
_VERSION_EXAMPLES = (
    "  kernelopt report version docs/workflow.md\n"
    "  kernelopt report version docs/workflow.md --json"
)
# The filters' types: an empty filter would read as none given (every point's rows kept).
_POINT_TEXT = nonempty_text("a trial point (key=value terms or a trial name)")
_IMPL = nonempty_text("an implementation name")
# A blank kernel would read as none given (`learn`: left out of the evidence row).
_KERNEL = nonempty_text("a kernel name")


def _point(text: str) -> str:
    """The ``--point`` type: the text as given, once its terms read as the rows are matched.

    Read here, the parser names the option in the error (``argument --point: Expected each
    axis of a trial point once, got 'b=32 b=64' (b twice)``), as it names the others; the
    Python functions that take ``point=`` name that argument instead.
    """
    from kernelopt.workflow.observe import _point_terms

    try:
        _point_terms(_POINT_TEXT(text), where=None)
    except InputError as error:
        # An InputError is a ValueError, which argparse would report as its own "invalid
        # value" and lose the words.
        raise argparse.ArgumentTypeError(str(error)) from None
    return text


def register(subparsers: Any) -> None:
    """Register the `learn` and `report` subcommands."""
    learn = subparsers.add_parser(
        "learn",
        help=_LEARN,
        description=(
            "Judge a before/after pair of benchmark rows of one trial point and update the "
            "knowledge tree by the protocol: FAST adds a local-experiment evidence row to the "
            "applied entry, SLOW records an anti-pattern, SAME/UNCLEAR record nothing. For an "
            "anti-pattern --entry, --after is the fix (the version without it): FAST "
            "confirms the anti-pattern, SLOW goes against it."
        ),
        epilog=exit_codes(
            "judged (FAST, SLOW or SAME)",
            "UNCLEAR: the rows could not decide",
            "a missing or malformed rows file, an unknown --entry, host-clock rows, a row "
            "of a version that failed correctness, a --knowledge that is not a knowledge tree",
        )
        + "\n\nExamples, run in a kernelopt checkout (whose docs/knowledge is its docs, not "
        "a tree to write):\n"
        "  kernelopt learn --before docs/kernels/mla_decode/experiments/exp_12/seesaw_before.jsonl"
        " --after docs/kernels/mla_decode/experiments/exp_12/seesaw_after.jsonl"
        " --point b=32,s=1,h=16 --mode graph --entry split-kv-flash-decoding"
        " --knowledge my-knowledge --dry-run",
    )
    learn.add_argument(
        "--before",
        required=True,
        metavar="A.jsonl",
        type=_ROWS_FILE,
        help="rows without the change (for an anti-pattern --entry: with the anti-pattern)",
    )
    learn.add_argument(
        "--after",
        required=True,
        metavar="B.jsonl",
        type=_ROWS_FILE,
        help="rows with the change (for an anti-pattern --entry: its fix, without it)",
    )
    learn.add_argument(
        "--entry", required=True, metavar="ID", help="catalog id of what was applied"
    )
    learn.add_argument(
        "--knowledge",
        default="docs/knowledge",
        metavar="DIR",
        type=_TREE,
        help="knowledge tree to update (default docs/knowledge)",
    )
    learn.add_argument(
        "--point",
        metavar="NAME",
        type=_point,
        help="trial point: key=value terms (s=1,h=16) or a trial name (decode, speculative); "
        "needed when the files hold several",
    )
    learn.add_argument(
        "--before-impl",
        metavar="IMPL",
        type=_IMPL,
        help="implementation in --before (needed when the point has several)",
    )
    learn.add_argument(
        "--after-impl",
        metavar="IMPL",
        type=_IMPL,
        help="implementation in --after (needed when the point has several)",
    )
    _add_mode(learn, "of both rows")
    learn.add_argument(
        "--knob",
        action="append",
        default=[],
        metavar="NAME",
        type=nonempty_text("a config key"),
        help="config key that may differ between the two rows (repeatable)",
    )
    learn.add_argument(
        "--family",
        metavar="F",
        help="kernel family of the context, as diagnose --family takes it (default: every "
        "family of the entry)",
    )
    learn.add_argument("--language", help="implementation language of the context (default: none)")
    learn.add_argument(
        "--kernel",
        type=_KERNEL,
        help="kernel name, for the evidence row (default: none, left out of it)",
    )
    learn.add_argument(
        "--anti-pattern",
        metavar="ID",
        type=nonempty_text("an anti-pattern id"),
        help="anti-pattern to extend or create on a regression",
    )
    learn.add_argument(
        "--min-effect",
        type=_fraction,
        default=0.01,
        metavar="X",
        help="smallest relative change that counts, in [0, 1) (default 0.01: 1 %%)",
    )
    learn.add_argument(
        "--dry-run",
        action="store_true",
        help="decide, but write nothing (refuses what the real run refuses)",
    )
    learn.add_argument(
        "--allow-builtin",
        action="store_true",
        help="allow --knowledge to be the built-in tree shipped with kernelopt",
    )
    learn.add_argument(
        "--allow-host-clock",
        action="store_true",
        help="record rows timed with the host clock (CPU), not CUDA events",
    )
    add_json_flag(learn, warnings="warnings go to stderr")
    learn.set_defaults(handler=_warnings_as_lines("learn", _learn))

    report = subparsers.add_parser(
        "report",
        help=_REPORT,
        description=_REPORT_DESCRIPTION,
        epilog=_report_exit_codes(_PROFILE_USAGE)
        + _EXAMPLES
        + "  kernelopt report profile examples/logs/mla-decode-plateau/experiments/profile.md\n"
        "  kernelopt report task docs/workflow.md --check\n"
        "  kernelopt report version docs/workflow.md",
    )
    report.set_defaults(handler=lambda _args: missing_command(report))
    kinds = report.add_subparsers(dest="report_kind", metavar="COMMAND")

    profile = kinds.add_parser(
        "profile",
        help="the profiler hand-off, built from bench rows or read from a file",
        description=(
            "With --rows: build the '## Profile:' hand-off of --version at each trial point "
            "of the rows (and update a devlog with --devlog). With FILE.md: parse it and "
            "print it in canonical form (a part the reader leaves out is a warning line on "
            "stderr, exit 0). With --check: check it instead; its unknown catalog ids, "
            "each part the reader leaves out (a Top 3 it cannot read, items beyond the "
            "third, a second table) and a trial point's hand-off written twice are "
            "problems, exit 1."
        ),
        epilog=_report_exit_codes(_PROFILE_USAGE, findings=_PROFILE_FINDINGS)
        + "\n\nExamples, run in a kernelopt checkout:\n"
        "  kernelopt report profile examples/logs/mla-decode-plateau/experiments/profile.md"
        " --check\n"
        "  kernelopt report profile --rows docs/kernels/mla_decode/experiments/exp_12/"
        "seesaw_after.jsonl --kernel mla_decode --version kernelopt_seesaw --mode cold",
    )
    profile.add_argument(
        "file", nargs="?", metavar="FILE.md", type=_HAND_OFF, help="a profile hand-off to read"
    )
    profile.add_argument(
        "--rows", metavar="FILE.jsonl", type=_ROWS_FILE, help="benchmark rows of the version"
    )
    profile.add_argument("--kernel", type=_KERNEL, help="kernel name (needed with --rows)")
    profile.add_argument(
        "--version",
        dest="kernel_version",
        metavar="V",
        help="version name (needed with --rows)",
    )
    profile.add_argument(
        "--impl",
        type=_IMPL,
        help="implementation in --rows (default the one named V, else the only one there: "
        "rows a benchmark wrote under its own name report as V)",
    )
    profile.add_argument(
        "--baseline",
        metavar="FILE.jsonl",
        type=_ROWS_FILE,
        help="rows of the previous version (default: no comparison)",
    )
    profile.add_argument(
        "--baseline-impl",
        metavar="IMPL",
        type=_IMPL,
        help="implementation in --baseline (needed when it holds several)",
    )
    profile.add_argument(
        "--point",
        type=_point,
        help="keep rows of this point (key=value terms or a name; default: all)",
    )
    _add_mode(profile, "of the rows (and of the devlog's)")
    profile.add_argument(
        "--devlog",
        metavar="PATH",
        type=nonempty_path("a devlog file"),
        help="also write the rows into this devlog (default: none)",
    )
    profile.add_argument(
        "--family",
        help="the kernel's family: suggest only its catalog entries (with --rows; default "
        "the family a word of --kernel names, else only entries for every family)",
    )
    profile.add_argument(
        "--experiment",
        metavar="N",
        type=int_at_least(0),
        help="the experiment the version was made in: each heading reads '## Profile: "
        "KERNEL V exp N | ...' (with --rows, or printing FILE.md)",
    )
    profile.add_argument(
        "--language",
        help="the kernel's language: suggest only shared entries and its own, as catalog "
        "match --language (with --rows)",
    )
    _add_check(
        profile,
        also="; with --rows, the tree to suggest entries from (default: the built-ins)",
        problems="problems (unknown entry ids, what the reader leaves out, listed instead "
        "of printed as warnings, and a trial point's hand-off written twice)",
    )
    add_json_flag(profile, warnings="warnings go to stderr")
    profile.set_defaults(handler=_warnings_as_lines("report", _profile))

    for name, helptext, description, usage, examples in (
        (
            "task",
            "read an '## Optimization Task:' hand-off (--check: its catalog links)",
            "Read an '## Optimization Task:' hand-off and print it in canonical form. With "
            "--check: check its catalog links instead.",
            _TASK_USAGE,
            _TASK_EXAMPLES,
        ),
        (
            "version",
            "read a '## New Version:' hand-off (--check: links, correctness, files)",
            "Read a '## New Version:' hand-off and print it in canonical form. With --check: "
            "check its catalog links, correctness, trial points and the files it names "
            "instead.",
            _VERSION_USAGE,
            _VERSION_EXAMPLES,
        ),
    ):
        parser = kinds.add_parser(
            name,
            help=helptext,
            description=description,
            epilog=_report_exit_codes(usage) + _EXAMPLES + examples,
        )
        parser.add_argument("file", metavar="FILE.md", type=_HAND_OFF, help="the hand-off")
        _add_check(parser)
        if name == "version":
            parser.add_argument(
                "--root",
                metavar="DIR",
                type=nonempty_path("a folder holding the named files"),
                help="where the named files and devlog must exist, with --check (default .)",
            )
        add_json_flag(parser, warnings="warnings go to stderr")
        handler = _task if name == "task" else _version
        parser.set_defaults(handler=_warnings_as_lines("report", handler))


Handler = Callable[[argparse.Namespace], int]


def _warnings_as_lines(command: str, handler: Handler) -> Handler:
    """``handler``, printing each warning it raises as one line on stderr.

    Python's own format spreads a warning over two lines: the file and line of kernelopt
    code that raised it, the category, then that line of code. Here it reads as the
    command's errors do, ``kernelopt report: warning: profile.md:12 [Top 3 Opportunities]:
    Expected ...``; stdout and the exit code are those of the command. The filters in force
    still apply (``-W ignore::UserWarning`` prints none; with ``-W error`` a hand-off's
    warning fails its reading, see :func:`_parse_or_report`), and the library keeps
    raising the warning: only its printing changes.

    Parameters
    ----------
    command : str
        The subcommand named in each line (``"report"``, ``"learn"``).
    handler : callable
        The subcommand's handler: parsed arguments in, exit code out.

    Returns
    -------
    callable
        A handler that runs ``handler`` with the warnings printed that way.
    """

    def show(
        message: Warning | str,
        category: type[Warning],
        filename: str,
        lineno: int,
        file: TextIO | None = None,
        line: str | None = None,
    ) -> None:
        text = str(message)
        # A UserWarning's message is all it says (ProfileWarning is one); another category
        # (RuntimeWarning, DeprecationWarning) says what kind of trouble it is: keep its name.
        if not issubclass(category, UserWarning):
            text = f"{category.__name__}: {text}"
        # The message quotes the hand-off: a control character in it is shown escaped.
        print(f"kernelopt {command}: warning: {one_line(text)}", file=sys.stderr)

    def run(args: argparse.Namespace) -> int:
        with warnings.catch_warnings():
            warnings.showwarning = show
            return handler(args)

    return run


def _fraction(text: str) -> float:
    """An argparse ``type``: a relative change in [0, 1).

    A change of 1 (100 %) or more makes a speedup impossible to call FAST (no time falls
    below zero) and calls any smaller one noise; NaN compares false with everything.

    Raises
    ------
    argparse.ArgumentTypeError
        For text that is not a number in [0, 1) (a usage error, exit 2).
    """
    what = "a fraction in [0, 1)"
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(expected(what, repr(text))) from None
    if not 0.0 <= value < 1.0:
        raise argparse.ArgumentTypeError(expected(what, value))
    return value


def _add_mode(parser: argparse.ArgumentParser, what: str) -> None:
    from kernelopt.bench.measurement import MODES

    parser.add_argument(
        "--mode",
        choices=MODES,
        help=f"timing mode {what}, for files timing each point several ways "
        "(default: the row of a point written last)",
    )


def _add_check(
    parser: argparse.ArgumentParser, *, also: str = "", problems: str = "problems"
) -> None:
    parser.add_argument(
        "--check", action="store_true", help=f"validate; exit 1 and list {problems} if any"
    )
    parser.add_argument(
        "--knowledge",
        metavar="DIR",
        type=_TREE,
        help="knowledge tree to check ids against, with --check (default docs/knowledge if "
        f"present, else the built-in catalog){also}",
    )


def _report_exit_codes(usage: str, *, findings: str = _FINDINGS) -> str:
    return exit_codes(findings=findings, usage=usage)


def _catalog(knowledge: str | None) -> Any:
    from kernelopt.catalog import Catalog

    if knowledge is not None:
        if not Path(knowledge).is_dir():
            got = f"{knowledge} (a file)" if Path(knowledge).exists() else f"{knowledge} (missing)"
            raise InputError(expected("a knowledge tree folder", got, where="--knowledge"))
        return Catalog.load(knowledge)
    default = Path("docs/knowledge")
    return Catalog.load(default) if default.is_dir() else Catalog.builtin()


def _read(path: str) -> str:
    return read_text(path, what="a markdown file")


def _learn(args: argparse.Namespace) -> int:
    from kernelopt.bench.compare import Verdict
    from kernelopt.workflow.learn import _OPTIONS, _learn_as
    from kernelopt.workflow.observe import observe_files
    from kernelopt.workflow.task import design_language

    _check_tree_place(args.knowledge)
    # Read before the rows, as the tree's place is: the errors name the options typed,
    # where learn() names its arguments (family=, language=).
    family = _family_option(args.knowledge, args.family)
    language = None if args.language is None else design_language(args.language, where="--language")
    from kernelopt._fileio import require_file

    # observe_files names them as its arguments (before:); checked first, as typed.
    for flag, path in (("--before", args.before), ("--after", args.after)):
        require_file(path, "a BenchRow JSONL file", where=flag)
    observation = observe_files(
        args.before,
        args.after,
        point=args.point,
        before_impl=args.before_impl,
        after_impl=args.after_impl,
        mode=args.mode,
        knobs=args.knob,
        min_effect=args.min_effect,
    )
    # Its refusals name the options typed (--knowledge, --entry), not learn()'s arguments.
    outcome = _learn_as(
        observation,
        entry_id=args.entry,
        knowledge=args.knowledge,
        family=family,
        language=language,
        kernel="" if args.kernel is None else args.kernel,
        anti_pattern=args.anti_pattern,
        dry_run=args.dry_run,
        allow_builtin=args.allow_builtin,
        allow_host_clock=args.allow_host_clock,
        names=_OPTIONS,
    )
    if args.json:
        print_json(outcome.to_dict())
    else:
        # The summary names the implementations and the point as the rows file spells
        # them: a control character in one is printed as its escape, as `report` does.
        print(printable(outcome.summary()))
    return EXIT_FINDINGS if outcome.verdict is Verdict.UNCLEAR else EXIT_OK


def _family_option(knowledge: str, family: str | None) -> str | None:
    """``--family`` in the spelling of the tree's catalog (``mla_decode`` is ``mla-decode``).

    The names are learn()'s own: the catalog's vocabulary and the families the tree's
    entries name, as ``diagnose --family`` takes them; the refusal names the option.

    Raises
    ------
    InputError
        ``--family: Expected a kernel family among any, attention, ..., got 'bogus'``.
    """
    if family is None:
        return None
    from kernelopt.catalog import KnowledgeTree

    return KnowledgeTree(Path(knowledge)).catalog().canonical_family(family, where="--family")


def _check_tree_place(knowledge: str) -> None:
    """Refuse a ``--knowledge`` that is, or lies under, a file.

    The tree is created on its first update, so a missing folder is fine; but a file there
    would let ``--dry-run`` report an update the real run cannot write, and the real run
    fail with an operating-system message about the entry file instead of the tree.
    """
    place = Path(knowledge)
    for here in (place, *place.parents):
        if here.exists():
            if not here.is_dir():
                raise InputError(
                    expected("a knowledge tree folder", f"{here} (a file)", where="--knowledge")
                )
            return


def _problems(title: str, problems: list[str], as_json: bool = False) -> int:
    if as_json:  # --check --json: the verdict as data, the exit code as in text mode
        print_json({"path": title, "ok": not problems, "problems": list(problems)})
        return EXIT_FINDINGS if problems else EXIT_OK
    # A problem quotes the hand-off (an entry id, a path it names) and the title is the
    # path as given: each on one line, a control character in it escaped, as in errors.
    if problems:
        print(f"{one_line(title)}: {count_text(len(problems), 'problem')}", file=sys.stderr)
        for problem in problems:
            print(f"  - {one_line(problem)}", file=sys.stderr)
        return EXIT_FINDINGS
    print(f"{one_line(title)}: OK")
    return EXIT_OK


def _print_hand_off(text: str) -> None:
    """Print a hand-off's canonical ``text`` (it ends in a newline).

    Its fields are the file's (or the rows') text: an escape sequence or a NUL in one
    would reach the terminal and act on it, so each control character but the layout's
    newlines and tabs is printed as its escape (``\\x1b``). The text printed reads back
    as itself, so a saved hand-off still prints unchanged.
    """
    print(printable(text), end="")


def _refuse_without_check(args: argparse.Namespace) -> None:
    """Refuse the options only ``--check`` reads: without it they would be dropped."""
    if args.check:
        return
    options = (("--knowledge", args.knowledge), ("--root", getattr(args, "root", None)))
    given = [flag for flag, value in options if value is not None]
    if given:
        them = "it" if len(given) == 1 else "them"
        raise InputError(expected(f"{', '.join(given)} only with --check", f"{them} without"))


def _parse_or_report(
    parse: Any, path: str, *, one: tuple[str, str] | None = None
) -> tuple[Any, int | None]:
    """``parse`` the file's text, or print why not; ``one``: (label, kind) of a hand-off
    the file must hold only once, since a second would be dropped without a word.

    A warning the filters make an error (``python -W error``: what the reader would leave
    out refused) fails the reading as a malformed hand-off does, in one line, not as a
    traceback; its message names the file and line as the reader's errors do."""
    try:
        text = _read(path)
        if one is not None:
            _refuse_several(text, path, *one)
        return parse(text, path=path), None
    except (FormatError, Warning) as error:
        # The message names the file's section titles as written: one line all the same.
        # A reader's warning names the file the reader was given, as its errors do.
        named = isinstance(error, Warning) or bool(error.path)
        shown = str(error) if named else f"{path}: {error}"
        print(one_line(shown), file=sys.stderr)
        return None, EXIT_FINDINGS


def _noting(parse: Any, check: bool) -> Any:
    """``parse``, returning its record and, for ``--check``, the :class:`HandoffWarning`
    messages of what it left out (prose no item holds), which a check lists as problems
    whatever Python's warning filters say; without ``--check`` they stay warnings."""
    from kernelopt.workflow._markdown import HandoffWarning

    def read(text: str, *, path: str) -> tuple[Any, list[str]]:
        if not check:
            return parse(text, path=path), []
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", HandoffWarning)
            record = parse(text, path=path)
        for item in caught:  # any other warning is the caller's, as it was raised
            if not issubclass(item.category, HandoffWarning):
                warnings.warn_explicit(item.message, item.category, item.filename, item.lineno)
        return record, [
            str(item.message) for item in caught if issubclass(item.category, HandoffWarning)
        ]

    return read


def _refuse_several(text: str, path: str, label: str, kind: str) -> None:
    from kernelopt.workflow._markdown import find_records

    lines = [record.line for record in find_records(text, label, kind=kind, path=path)]
    if len(lines) > 1:
        raise FormatError(
            expected(f"one {kind} hand-off", f"{len(lines)} ({_shown_lines(lines)})"), path=path
        )


def _shown_lines(lines: list[int]) -> str:
    from kernelopt.workflow._fields import SHOWN  # the cap every workflow message uses

    if len(lines) > SHOWN:
        return f"lines {', '.join(map(str, lines[:SHOWN]))} and {len(lines) - SHOWN} more"
    return f"lines {and_list([str(n) for n in lines])}"


# The options each form of `report profile` reads; the other form's would be dropped.
_ROWS_ONLY = (
    ("--kernel", "kernel"),
    ("--version", "kernel_version"),
    ("--impl", "impl"),
    ("--baseline", "baseline"),
    ("--baseline-impl", "baseline_impl"),
    ("--point", "point"),
    ("--mode", "mode"),
    ("--devlog", "devlog"),
    ("--family", "family"),
    ("--language", "language"),
)
_FILE_ONLY = (("--check", "check"),)


def _refuse_other_form(args: argparse.Namespace, form: str, options: tuple[Any, ...]) -> None:
    # "--experiment 0" is given too, though 0 is false (and equal to False).
    given = [
        flag
        for flag, dest in options
        if getattr(args, dest) is not None and getattr(args, dest) is not False
    ]
    if given:
        them = "it" if len(given) == 1 else "them"
        other = "--rows" if form == "FILE.md" else "FILE.md"
        raise InputError(expected(f"{', '.join(given)} only with {other}", f"{them} with {form}"))


def _profile(args: argparse.Namespace) -> int:
    if args.file and args.rows:
        raise InputError(expected("FILE.md or --rows, not both", "both"))
    if args.file:
        _refuse_other_form(args, "FILE.md", _ROWS_ONLY)
        return _profile_file(args)
    _refuse_other_form(args, "--rows", _FILE_ONLY)
    if not (args.rows and args.kernel and args.kernel_version):
        flags = (
            ("--rows", args.rows),
            ("--kernel", args.kernel),
            ("--version", args.kernel_version),
        )
        given = [flag for flag, value in flags if value]
        raise InputError(
            expected(
                "FILE.md, or --rows with --kernel and --version",
                " and ".join(given) if given else "none of them",
            )
        )
    if args.baseline_impl is not None and args.baseline is None:
        # It picks among the baseline's rows: without them it would be dropped unread.
        raise InputError(expected("--baseline-impl only with --baseline", "it without"))
    from kernelopt._fileio import require_file
    from kernelopt.bench.records import read_rows

    for flag, path in (("--rows", args.rows), ("--baseline", args.baseline)):
        if path:
            require_file(path, "a BenchRow JSONL file", where=flag)
    if args.devlog and Path(args.devlog).is_dir():
        # Refused before its lock is taken: a failed run leaves nothing beside the folder.
        raise InputError(expected("a devlog file", f"{args.devlog}, a folder", where="--devlog"))
    for flag, rows_file in (("--rows", args.rows), ("--baseline", args.baseline)):
        # The devlog's table would be appended to the rows file, which would then not read.
        if args.devlog and rows_file and Path(args.devlog).resolve() == Path(rows_file).resolve():
            raise InputError(
                expected(
                    "a devlog file other than the rows files",
                    f"{args.devlog}, the {flag} file",
                    where="--devlog",
                )
            )
    rows = read_rows(args.rows)
    baseline = read_rows(args.baseline) if args.baseline else []
    with _options_named(args):
        return _profile_rows(args, rows, baseline)


def _profile_rows(args: argparse.Namespace, rows: list[Any], baseline: list[Any]) -> int:
    """``report profile --rows``, once the rows files are read: print the hand-offs and
    update the devlog. What picks rows (``--impl``, ``--baseline-impl``, ``--point``,
    ``--family``) is checked here, so that the errors name the options typed."""
    from kernelopt.bench.roofline import load_ceilings
    from kernelopt.workflow._rows import by_point, one_impl
    from kernelopt.workflow.devlog import perf_rows_from_bench, update_devlog
    from kernelopt.workflow.from_rows import profile_from_rows
    from kernelopt.workflow.jsonio import to_dict
    from kernelopt.workflow.observe import _point_terms, _refuse_unmatched, config_matches

    catalog = _catalog(args.knowledge) if args.knowledge else None
    family = _profile_family(catalog, args.family)
    impl = args.impl
    if rows:  # none is refused by profile_from_rows, in its words
        impl = one_impl(rows, args.impl, args.kernel_version, args.rows, choose="--impl")
        terms = {} if args.point is None else _point_terms(args.point)
        timed = [row for row in rows if row.impl == impl]
        if not any(config_matches(row.config, terms) for row in timed):
            # The points these rows hold, as `learn` lists them, to choose one from.
            _refuse_unmatched(timed, point=args.point, impl=impl, mode=None, where=args.rows)
    baseline_impl = args.baseline_impl
    if baseline:
        baseline_impl = one_impl(
            baseline, args.baseline_impl, None, args.baseline, choose="--baseline-impl"
        )
    gpus = {row.gpu for row in rows if row.gpu}
    # Ceilings measured on this machine turn the rows' shares into TFLOP/s and GB/s.
    ceilings = load_ceilings(next(iter(gpus))) if len(gpus) == 1 else None
    reports = profile_from_rows(
        rows,
        kernel=args.kernel,
        version=args.kernel_version,
        impl=impl,
        baseline=baseline,
        baseline_impl=baseline_impl,
        point=args.point,
        mode=args.mode,
        ceilings=ceilings,
        catalog=catalog,
        family=family,
        language=_profile_language(args.language),
        experiment=args.experiment,
    )
    if args.devlog:
        terms = {} if args.point is None else _point_terms(args.point)
        matching = [
            r
            for r in rows
            if r.impl == impl
            and (args.mode is None or r.mode == args.mode)
            and config_matches(r.config, terms)
        ]
        # The row of each point the reports show: the last, where a point was timed two ways.
        chosen = list(by_point(matching).values())
        # Ceilings from another measurement than the rows' shares would give wrong rates.
        same = ceilings is not None and all(
            abs(ceilings.ridge / r.metrics["ridge"] - 1.0) <= 0.01
            for r in chosen
            if r.metrics.get("ridge")
        )
        made = perf_rows_from_bench(
            chosen, version=args.kernel_version, ceilings=ceilings if same else None
        )
        update = update_devlog(args.devlog, made)
        # Rows already there as written leave the file as it was: "6 replaced" would say
        # it was written (a read-only devlog then passes untouched).
        print(one_line(update.summary()), file=sys.stderr)
    if args.json:
        print_json([to_dict(report) for report in reports])
    else:
        _print_hand_off("\n".join(report.render() for report in reports))
    return EXIT_OK


def _profile_family(catalog: Any, family: str | None) -> str | None:
    """``--family`` in the spelling of the catalog the hand-offs suggest from (the
    ``--knowledge`` tree, else the built-ins), refused in words naming the option."""
    if family is None:
        return None
    if catalog is None:
        from kernelopt.catalog import Catalog

        catalog = Catalog.builtin()
    named: str = catalog.canonical_family(family, where="--family")
    return named


def _profile_language(language: str | None) -> str | None:
    """``--language`` in the catalog's spelling (``Triton`` is ``triton``), refused in
    words naming the option, as ``learn --language`` is."""
    if language is None:
        return None
    from kernelopt.workflow.task import design_language

    named: str = design_language(language, where="--language")
    return named


# The arguments of the library calls behind `report profile --rows`, by the option each
# came from: an error naming one (`version: Expected ...`) names the option instead.
_PROFILE_OPTIONS = (
    ("kernel", "--kernel"),
    ("version", "--version"),
    ("family", "--family"),
    ("language", "--language"),
    ("point", "--point"),
    ("path", "--devlog"),
)


@contextlib.contextmanager
def _options_named(args: argparse.Namespace) -> Iterator[None]:
    """Re-raise an InputError of the library calls behind ``report profile --rows`` with
    the option its value came from in front (``--version: Expected ...``, not ``version:
    Expected ...``), and the rows files as given in place of ``rows:`` and ``baseline:``.

    The library's functions name their arguments; the words after the name are kept.
    """
    prefixes = dict(_PROFILE_OPTIONS)
    prefixes.update({"rows": args.rows, "baseline": args.baseline or "--baseline"})
    try:
        yield
    except InputError as error:
        name, colon, rest = str(error).partition(": ")
        if not colon or name not in prefixes or not rest.startswith("Expected"):
            raise
        raise InputError(f"{prefixes[name]}: {rest}") from None


def _profile_file(args: argparse.Namespace) -> int:
    from kernelopt.workflow.jsonio import to_dict
    from kernelopt.workflow.profile import parse_profiles

    _refuse_without_check(args)
    if args.check:
        if args.experiment is not None:
            # A check prints no hand-off to write the number in.
            raise InputError(expected("--experiment only without --check", "both"))
        return _check_profile_file(args)
    # Every hand-off of the file: `report profile --rows` prints one per trial point.
    reports, failed = _parse_or_report(parse_profiles, args.file)
    if failed is not None:
        return failed
    if args.experiment is not None:
        import attrs  # here: the command line imports nothing heavy

        reports = [attrs.evolve(report, experiment=args.experiment) for report in reports]
    if args.json:
        # One hand-off prints its dict; several print a list, as `--rows --json` does.
        if len(reports) == 1:
            print_json(to_dict(reports[0]))
        else:
            print_json([to_dict(report) for report in reports])
    else:
        # Joined as `--rows` joins them, so that its output reads back unchanged.
        _print_hand_off("\n".join(report.render() for report in reports))
    return EXIT_OK


def _check_profile_file(args: argparse.Namespace) -> int:
    """``report profile FILE.md --check``: what the reader left out, a trial point's
    hand-off written twice, then unknown entry ids.

    What the reader leaves out (a Top 3 it could not read, items beyond the third, a
    second table) is a problem here, not a warning line: a check that passed a hand-off
    whose opportunities were dropped would say it is fine when its reader saw less than
    its writer wrote.
    """
    from kernelopt.workflow.profile import _check_profiles

    read, failed = _parse_or_report(_check_profiles, args.file)
    if failed is not None:
        return failed
    reports, read_problems = read
    catalog = _catalog(args.knowledge)
    unknown = [
        # Several hand-offs: say whose opportunity names the id.
        f"{_profile_name(report)}: unknown entry id '{item.entry_id}'"
        if len(reports) > 1
        else f"unknown entry id '{item.entry_id}'"
        for report in reports
        for item in report.opportunities
        if item.entry_id and item.entry_id not in catalog
    ]
    return _problems(args.file, [*read_problems, *unknown], args.json)


def _profile_name(report: Any) -> str:
    """The hand-off's heading after ``## Profile:`` (kernel, version and point)."""
    first: str = report.render().partition("\n")[0]
    return first.removeprefix("## Profile:").strip()


def _task(args: argparse.Namespace) -> int:
    from kernelopt.workflow.jsonio import to_dict
    from kernelopt.workflow.task import parse_task

    _refuse_without_check(args)
    read, failed = _parse_or_report(
        _noting(parse_task, args.check), args.file, one=("Optimization Task:", "optimization task")
    )
    if failed is not None:
        return failed
    task, unread = read
    unstated = (
        []
        if task.constraints_stated
        else [
            # A text cut off before the section would otherwise pass for one saying `- none`.
            "no '### Constraints' section (the hand-off may be cut off): its constraints "
            "are unknown, not none; write '- none' for a task without any"
        ]
    )
    if args.check:
        # A link resolves from the project's root (where the command runs) or, as markdown
        # resolves it, from the file's folder; one that is no file from either leads nowhere.
        roots = [Path("."), Path(args.file).parent]
        problems = unread + task.problems(_catalog(args.knowledge), root=roots) + unstated
        return _problems(args.file, problems, args.json)
    if args.json:
        print_json(to_dict(task))
    else:
        _print_hand_off(task.render())
        for note in unstated:
            print(f"{one_line(args.file)}: {note}", file=sys.stderr)
    return EXIT_OK


def _version(args: argparse.Namespace) -> int:
    from kernelopt.workflow.jsonio import to_dict
    from kernelopt.workflow.version import parse_version

    _refuse_without_check(args)
    read, failed = _parse_or_report(
        _noting(parse_version, args.check), args.file, one=("New Version:", "new version")
    )
    if failed is not None:
        return failed
    version, unread = read
    if args.check:
        root = Path(args.root or ".")
        if not root.is_dir():
            # Every named file would then be "missing": findings that are not there.
            got = f"{root}, a file" if root.exists() else f"{root} (missing)"
            raise InputError(expected("a folder holding the named files", got, where="--root"))
        problems = unread + version.problems(_catalog(args.knowledge), root=args.root or ".")
        return _problems(args.file, problems, args.json)
    if args.json:
        print_json(to_dict(version))
    else:
        _print_hand_off(version.render())
    return EXIT_OK

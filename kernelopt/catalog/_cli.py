"""`kernelopt catalog`: read, query, lint and update the optimization / anti-pattern catalog.

Every subcommand takes ``--knowledge DIR`` (a user's tree merged over the built-ins, user
entries winning by id) and ``--json``. Exit codes: 0 ok, 1 lint errors (``lint``), 2 usage
or input errors.
"""

from __future__ import annotations

import argparse
import difflib
import json
import math
import re
import shlex
import sys
import warnings
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kernelopt._cli_util import (
    EXIT_FINDINGS,
    EXIT_OK,
    Parser,
    add_json_flag,
    exit_codes,
    int_at_least,
    missing_command,
    nonempty_path,
    print_json,
)
from kernelopt._errors import FormatError, InputError, expected
from kernelopt._fileio import read_text_and_encoding, text_of_bytes
from kernelopt._words import count_text
from kernelopt.catalog.catalog import Catalog
from kernelopt.catalog.conditions import format_number
from kernelopt.catalog.jsonio import entry_to_dict
from kernelopt.catalog.lint import lint_tree
from kernelopt.catalog.markdown import render_entry
from kernelopt.catalog.model import Entry, Kind
from kernelopt.catalog.query import (
    Match,
    metrics_missing,
    metrics_read,
    shape_facts_missing,
    shape_facts_read,
    under_floor,
)
from kernelopt.catalog.scaffold import new_entry_file
from kernelopt.catalog.store import KnowledgeTree
from kernelopt.catalog.vocabulary import (
    DIALECTS,
    FAMILIES,
    LANGUAGE_ALIASES,
    LANGUAGES,
    METRICS,
    SHAPE_FACTS,
    family_alias_note,
    family_alias_shape,
    family_aliases_text,
    family_ancestors,
    normalize_family,
    shape_fact_for_axis,
)

if TYPE_CHECKING:  # the workload package is imported only when a profile is read
    from kernelopt.workload.profile import OpProfile

_DEFAULT_TREE = Path("docs") / "knowledge"
_USAGE = "a --knowledge path that is missing, not a folder or not readable"
# An empty tree path would read as none given: the default tree taken without a word.
_TREE = nonempty_path("a knowledge tree folder")
# The examples of each page: those that read run in a kernelopt checkout; those that write
# run in a folder of the user's own, on a tree there (my-knowledge/) that is theirs to keep,
# never on the checkout's docs/knowledge, which is its documentation.
_READ_EXAMPLES = "\n\nExamples, run in a kernelopt checkout:\n"
_INDEX_EXAMPLES = (
    "\n\nExamples, run in a folder holding your knowledge tree my-knowledge/ (`catalog new` "
    "starts one):\n"
    "  kernelopt catalog index my-knowledge\n"
    "  kernelopt catalog index --knowledge my-knowledge --json"
)
_NEW_EXAMPLES = (
    "\n\nExamples, run in a folder of your own (they write my-knowledge/ there):\n"
    '  kernelopt catalog new "Stream-K Split Decode" --kind optimization'
    " --language triton --dir my-knowledge\n"
    "  kernelopt catalog lint my-knowledge"
)


def _any_case(choices: Sequence[str]) -> Callable[[str], str]:
    """An argparse type reading a choice in any case (``Triton`` is ``triton``), as the
    library does; another value is passed on as typed, for the choices check to refuse."""
    by_key = {choice.lower(): choice for choice in choices}

    def choice(value: str) -> str:
        return by_key.get(value.lower(), value)

    return choice


# Other spellings are accepted too ("cutile-dsl" is cutile), and dialects (gluon).
_LANGUAGE_CHOICES = tuple(sorted((*LANGUAGES, *LANGUAGE_ALIASES, *DIALECTS)))
_KIND_CHOICES = tuple(k.value for k in Kind)
_LANGUAGE_HELP = (
    "shared entries and those of this language (a dialect such as gluon: its language's too)"
)
_LANGUAGE_OPTION: dict[str, Any] = {
    "choices": _LANGUAGE_CHOICES,
    "type": _any_case(_LANGUAGE_CHOICES),
}
_KIND_OPTION: dict[str, Any] = {"choices": _KIND_CHOICES, "type": _any_case(_KIND_CHOICES)}
# The families --family takes, for its help; a family an entry of --knowledge names is
# taken too, and any of them in any case.
_FAMILIES = f"({', '.join(FAMILIES)}; or {family_aliases_text()})"


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register the `catalog` subcommand and its own subcommands."""
    parser = subparsers.add_parser(
        "catalog",
        help="read, query, lint and update the optimization / anti-pattern catalog",
        description=(
            "Read, query, lint and update the catalog of optimizations and anti-patterns. "
            "--knowledge DIR merges a user's docs/knowledge tree over the built-in entries."
        ),
        epilog=exit_codes(findings="errors found by `catalog lint`", usage=_USAGE)
        + "\n\nExamples:\n"
        "  kernelopt catalog list --family mla-decode\n"
        "  kernelopt catalog show split-kv-flash-decoding\n"
        "  kernelopt catalog search split kv decode --limit 3\n"
        "  kernelopt catalog match --metric dram_pct=85 --shape s_q=1\n"
        "  kernelopt catalog fundamentals --family gemm --language triton\n"
        "  kernelopt catalog lint",
    )
    parser.set_defaults(handler=lambda _args: missing_command(parser))
    common = _common(
        "a knowledge tree merged over the built-in entries (default: the built-ins only)"
    )
    commands = parser.add_subparsers(dest="catalog_command", metavar="COMMAND")

    listing = commands.add_parser(
        "list",
        parents=[common],
        help="list entries",
        description=(
            "List the entries, one line each (id, kind, scope, families), sorted by id; "
            "--kind, --language and --family keep those that apply."
        ),
        epilog=exit_codes(usage=_USAGE)
        + _READ_EXAMPLES
        + "  kernelopt catalog list --family mla-decode\n"
        "  kernelopt catalog list --kind anti-pattern --json",
    )
    listing.add_argument("--kind", **_KIND_OPTION, help="only entries of this kind")
    listing.add_argument("--language", **_LANGUAGE_OPTION, help=_LANGUAGE_HELP)
    listing.add_argument(
        "--family", help=f"entries applying to this family or its ancestors {_FAMILIES}"
    )
    listing.set_defaults(handler=_list)

    show = commands.add_parser(
        "show",
        parents=[common],
        help="print one entry",
        description=(
            "Print one entry in the catalog's entry format (--json: as data, with the file "
            "it was read from)."
        ),
        epilog=exit_codes(usage="an unknown ID; " + _USAGE)
        + _READ_EXAMPLES
        + "  kernelopt catalog show split-kv-flash-decoding\n"
        "  kernelopt catalog show split-kv-flash-decoding --json",
    )
    show.add_argument("entry_id", metavar="ID", help="the entry's id (see `catalog list`)")
    show.set_defaults(handler=_show)

    search = commands.add_parser(
        "search",
        parents=[common],
        help="free-text search, ranked",
        description=(
            "Search entry ids, names, keywords and text for the words given, best first: "
            "entries named by id, name or keyword, then those sharing more of the words; "
            "among those, a word in the name or keywords before one in When to Apply or "
            "only in the text, and more mentions before fewer. "
            "--file reads the words from a file as well: an experiment's plan.md, searched "
            "with --kind anti-pattern before the experiment is built, lists the recorded "
            "pitfalls it walks into."
        ),
        epilog=exit_codes(usage="no words to look for, a --file that cannot be read; " + _USAGE)
        + _READ_EXAMPLES
        + "  kernelopt catalog search split kv decode --limit 3\n"
        "  kernelopt catalog search --file examples/logs/mla-decode-plateau/experiments/exp_3/"
        "plan.md --kind anti-pattern",
    )
    search.add_argument("text", nargs="*", metavar="TEXT", help="words to look for")
    search.add_argument(
        "--file",
        metavar="PATH",
        type=nonempty_path("a text file to search with"),
        help="also look for the words of this text file (a plan.md)",
    )
    search.add_argument("--kind", **_KIND_OPTION, help="only entries of this kind")
    search.add_argument(
        "--limit", type=int_at_least(1), default=10, help="entries shown at most (default 10)"
    )
    search.set_defaults(handler=_search)

    match = commands.add_parser(
        "match",
        parents=[common],
        help="entries whose triggers fire for metrics / shapes",
        description=(
            "List the entries whose metric triggers or shape conditions hold for the "
            "--metric and --shape values given, best first, with the conditions that held; "
            "a note on stderr names what conditions comparing a value given with one not "
            "given still need (tc_pct beside dram_pct). "
            "--profile reads the shape facts from a workload profile that `kernelopt "
            "inspect` wrote (its op's axes are not shape facts themselves: "
            "softmax's n is softmax_len; a normalization's hidden is reduce_len); without "
            "--family, a top-k or gather op narrows the answer to its family (topk, gather), "
            "whose shape facts select_k and select_n mean different things."
        ),
        epilog=exit_codes(
            usage="no --metric, --shape or --profile, an unknown name, NaN, an op the "
            "profile lacks; " + _USAGE
        )
        + _READ_EXAMPLES
        + "  kernelopt catalog match --metric dram_pct=85 --shape s_q=1 --limit 3\n"
        "  kernelopt catalog match --shape s_q=1 --family mla-decode --json\n"
        "  kernelopt catalog match --profile tests/workload/data/handwritten_profile.md",
    )
    match.add_argument(
        "--metric",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="e.g. dram_pct=85 (repeat)",
    )
    match.add_argument(
        "--shape", action="append", default=[], metavar="NAME=VALUE", help="e.g. s_q=1 (repeat)"
    )
    match.add_argument(
        "--profile",
        metavar="FILE",
        type=nonempty_path("a workload profile (workload_profile.md)"),
        help="read the shape facts from this workload profile, workload_profile.md "
        "(--shape values win; a profile.md hand-off's metrics go to --metric)",
    )
    match.add_argument(
        "--op", metavar="OP", help="the profile's op to read (default: the most called)"
    )
    match.add_argument(
        "--family", help=f"only entries applying to this family or its ancestors {_FAMILIES}"
    )
    match.add_argument("--language", **_LANGUAGE_OPTION, help=_LANGUAGE_HELP)
    match.add_argument("--kind", **_KIND_OPTION, help="only entries of this kind")
    match.add_argument(
        "--limit",
        type=int_at_least(1),
        default=None,
        help="entries shown at most, best first (default: every entry that matches)",
    )
    match.set_defaults(handler=_match)

    fundamentals = commands.add_parser(
        "fundamentals",
        parents=[common],
        help="the standard techniques of a family",
        description=(
            "List the entries that are a standard technique for --family or one of its "
            "ancestors (their fundamental_for), most specific family first, then by id; "
            "--language keeps shared entries and those of that language, --kind those of "
            "that kind. Each line: id, kind, scope and the family it is fundamental for. "
            "--shape leaves out an entry whose every shape condition fails at the facts "
            "given, as a family's name does (decode attention is s_q=1; gemv is gemm at "
            "m=1); a note on stderr names what was left out and why."
        ),
        epilog=exit_codes(usage="no --family, an unknown family; " + _USAGE)
        + _READ_EXAMPLES
        + "  kernelopt catalog fundamentals --family mla-decode\n"
        "  kernelopt catalog fundamentals --family matmul --language triton --json\n"
        "  kernelopt catalog fundamentals --family gemm --shape m=1",
    )
    fundamentals.add_argument("--family", required=True, help=f"the kernel family {_FAMILIES}")
    fundamentals.add_argument(
        "--shape",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a shape fact of the kernel, e.g. m=1 (repeat)",
    )
    fundamentals.add_argument("--language", **_LANGUAGE_OPTION, help=_LANGUAGE_HELP)
    fundamentals.add_argument("--kind", **_KIND_OPTION, help="only entries of this kind")
    fundamentals.set_defaults(handler=_fundamentals)

    lint = commands.add_parser(
        "lint",
        parents=[
            _common(
                "the tree to check, as DIR names it (default: the built-ins)",
                json_warnings="its problems are in it, not on stderr",
            )
        ],
        help="check a knowledge tree; exit 1 on errors",
        description=(
            "Check a knowledge tree (the built-in one by default) and list each problem as "
            "file:line, errors apart from warnings."
        ),
        epilog=exit_codes("no errors (warnings allowed)", "errors", _USAGE)
        + _READ_EXAMPLES
        + "  kernelopt catalog lint\n"
        "  kernelopt catalog lint docs/knowledge --json",
    )
    lint.add_argument(
        "dir",
        nargs="?",
        metavar="DIR",
        type=_TREE,
        help="the tree (default: --knowledge, else the built-ins)",
    )
    lint.set_defaults(handler=_lint)

    index = commands.add_parser(
        "index",
        parents=[
            _common(
                f"the tree whose index.md to rewrite, as DIR names it (default: {_DEFAULT_TREE})"
            )
        ],
        help="rewrite index.md of a knowledge tree",
        description="Rewrite the index.md of a knowledge tree from the entries it holds.",
        epilog=exit_codes(usage=_USAGE) + _INDEX_EXAMPLES,
    )
    index.add_argument(
        "dir",
        nargs="?",
        metavar="DIR",
        type=_TREE,
        help=f"the tree (default: --knowledge, else {_DEFAULT_TREE})",
    )
    index.set_defaults(handler=_index)

    new = commands.add_parser(
        "new",
        parents=[
            _common(f"the tree to write the entry in, as --dir names it (default: {_DEFAULT_TREE})")
        ],
        help="scaffold a new entry file from the template",
        description=(
            "Write a new entry file from the template into a knowledge tree, with "
            "<FILL: ...> where you must write; fill each in, then run `catalog lint`."
        ),
        epilog=exit_codes(
            usage="an id already in use, a folder that is not a knowledge tree; " + _USAGE
        )
        + _NEW_EXAMPLES,
    )
    new.add_argument("name", metavar="NAME", help='display name, e.g. "Warp Specialization"')
    new.add_argument("--kind", required=True, **_KIND_OPTION, help="the entry's kind")
    new.add_argument("--language", **_LANGUAGE_OPTION, help="make it language-specific")
    new.add_argument(
        "--dir",
        metavar="DIR",
        type=_TREE,
        help=f"the tree (default: --knowledge, else {_DEFAULT_TREE})",
    )
    new.set_defaults(handler=_new)


def _common(
    knowledge: str, json_warnings: str | None = "notes on the tree's problems go to stderr"
) -> Parser:
    """The options every catalog subcommand takes, ``--knowledge`` described by ``knowledge``.

    Each subcommand gets its own copy: ``lint``, ``index`` and ``new`` work on the tree
    named, which no merge over the built-ins is, and ``index`` and ``new`` default to
    another tree than the built-ins. argparse shares a parent's option objects with every
    child, so one help text could not say both.
    """
    common = Parser(add_help=False)
    common.add_argument("--knowledge", metavar="DIR", type=_TREE, help=knowledge)
    add_json_flag(common, warnings=json_warnings)
    return common


def _count(errors: int, warnings: int) -> str:
    return f"{count_text(errors, 'error')}, {count_text(warnings, 'warning')}"


def _warn_problems(tree: str | Path, catalog: Catalog) -> None:
    """One line on stderr when the tree read with problems: what was left out is said.

    The loader stops at a file's first error and leaves the file out, so it counts files,
    not errors: lint, which reads on, lists every problem of each. A file left out whose
    built-in entry answers in its place also gets a line of its own: the answer printed
    is then not the user's entry, though it reads as if it were."""
    # A problem of the whole tree (it holds no entries) is said as it is: the count of
    # the summary line would hide that the built-ins answered alone.
    whole = [p for p in catalog.problems if not p.is_error and Path(p.path) == Path(tree)]
    for problem in whole:
        print(f"kernelopt catalog: warning: {problem.message}", file=sys.stderr)
    others = [p for p in catalog.problems if p not in whole]
    if others:
        left_out = len({p.path for p in others if p.is_error})
        warnings = sum(not p.is_error for p in others)
        print(
            f"kernelopt catalog: {count_text(left_out, 'path')} left out for errors, "
            f"{count_text(warnings, 'warning')} in {tree}; "
            # Quoted as a shell reads it: a tree named with a space must paste as one path.
            f"run `kernelopt catalog lint {shlex.quote(str(tree))}` for every problem",
            file=sys.stderr,
        )
        for problem in catalog.fallbacks:
            print(f"kernelopt catalog: {problem}", file=sys.stderr)


def _catalog(args: argparse.Namespace) -> Catalog:
    if not args.knowledge:
        return Catalog.builtin()
    catalog = Catalog.load(args.knowledge, strict=False)
    _warn_problems(args.knowledge, catalog)
    return catalog


def _summary(catalog: Catalog, entry: Entry) -> dict[str, object]:
    source = catalog.source(entry.id)
    return {
        "id": entry.id,
        "name": entry.name,
        "kind": entry.kind.value,
        "scope": entry.scope,
        "families": list(entry.families),
        "fundamental_for": list(entry.fundamental_for),
        "keywords": list(entry.keywords),
        "when": entry.summary,
        "path": None if source is None else str(source),
    }


def _family(catalog: Catalog, family: str | None) -> str | None:
    """``--family`` in the catalog's spelling, refused under the option's name.

    The query names the Python argument (``family:``); on the command line the error
    names the option, as ``--metric:`` and ``--shape:`` errors do.
    """
    return None if family is None else _named_family(catalog, family)


def _named_family(catalog: Catalog, family: str) -> str:
    """``--family`` in the catalog's spelling, with a note on stderr where the name is an
    alias that users also give another kernel (moe: the router, or the expert GEMMs), so
    the answer says which one it is for."""
    name = catalog.canonical_family(family, where="--family")
    note = family_alias_note(family)
    if note is not None:
        print(f"kernelopt catalog: note: {note}", file=sys.stderr)
    return name


def _list(args: argparse.Namespace) -> int:
    catalog = _catalog(args)
    family = _family(catalog, args.family)
    entries = [
        m.entry for m in catalog.query(family=family, language=args.language, kind=args.kind)
    ]
    entries.sort(key=lambda e: e.id)
    if args.json:
        print_json([_summary(catalog, e) for e in entries])
        return EXIT_OK
    width = max((len(e.id) for e in entries), default=2)
    for e in entries:
        print(f"{e.id:<{width}}  {e.kind.value:<12}  {e.scope:<8}  {', '.join(e.families)}")
    return EXIT_OK


def _fundamentals(args: argparse.Namespace) -> int:
    shape = _pairs(args.shape, "--shape")
    catalog = _catalog(args)
    family = _named_family(catalog, args.family)
    _check_names(catalog, {}, shape)
    # The name as typed: an alias may fix a shape fact (gemv is m=1) that its family lacks.
    entries = [
        e
        for e in catalog.fundamentals(args.family, language=args.language, shape=shape)
        if args.kind is None or e.kind.value == args.kind
    ]
    ruled_out = _note_ruled_out(catalog, args, family, shape, entries)
    # The family of the chain each entry is fundamental for, most specific first: what
    # sets its place in the list, and what tells a gemm technique from one for every kernel.
    chain = family_ancestors(family)
    via = {e.id: next(f for f in chain if f in e.fundamental_for) for e in entries}
    if args.json:
        print_json([{**_summary(catalog, e), "fundamental_via": via[e.id]} for e in entries])
        return EXIT_OK
    if not entries:
        print(f"no standard techniques recorded for {family} or its ancestors")
    width = max((len(e.id) for e in entries), default=2)
    for e in entries:
        # Standard for every kernel whatever it computes: a way of working (measure before
        # optimizing), not a technique a kernel of this family is built with.
        method = f" ({_METHOD})" if via[e.id] == "any" else ""
        print(
            f"{e.id:<{width}}  {e.kind.value:<12}  {e.scope:<8}  "
            f"fundamental for {via[e.id]}{method}"
        )
    # Where the shape left a standard technique out, its note has said why the rest is all
    # that is listed.
    if not ruled_out and entries and family != "any" and all(via[e.id] == "any" for e in entries):
        print(
            f"kernelopt catalog: note: no technique is recorded as standard for {family} "
            f"or its ancestors; what is listed is fundamental for any, {_METHOD}",
            file=sys.stderr,
        )
    return EXIT_OK


def _note_ruled_out(
    catalog: Catalog,
    args: argparse.Namespace,
    family: str,
    shape: dict[str, float],
    entries: Sequence[Entry],
) -> bool:
    """One line on stderr for each standard technique of ``family`` that the shape facts
    (``--shape``, or those an alias such as gemv fixes) leave out, with the conditions
    that fail: a list without it must not read as if the catalog had forgotten it.
    Returns whether one was left out."""
    facts = {**family_alias_shape(args.family), **shape}
    if not facts:
        return False
    kept = {e.id for e in entries}
    noted = False
    for entry in catalog.fundamentals(family, language=args.language):
        if entry.id in kept or (args.kind is not None and entry.kind.value != args.kind):
            continue
        failed = "; ".join(c.describe(facts) for c in entry.shape_conditions)
        given = ", ".join(f"{n}={format_number(v)}" for n, v in facts.items())
        alias = family_alias_shape(args.family)
        why = f" ({args.family} is {family} at {given})" if alias and not shape else ""
        print(
            f"kernelopt catalog: note: {entry.id}, standard for {family}, is left out: its "
            f"shape conditions fail at {given}{why}: {failed}",
            file=sys.stderr,
        )
        noted = True
    return noted


# What an entry fundamental for `any` is, beside it in `fundamentals`.
_METHOD = "a method for every kernel, not a technique of its family"


def _show(args: argparse.Namespace) -> int:
    catalog = _catalog(args)
    entry = catalog.get(args.entry_id)
    if args.json:
        data = entry_to_dict(entry)
        source = catalog.source(entry.id)
        data["path"] = None if source is None else str(source)
        print_json(data)
    else:
        sys.stdout.write(render_entry(entry))
    return EXIT_OK


def _print_matches(matches: Sequence[Match], as_json: bool) -> None:
    if as_json:
        print_json([m.to_dict() for m in matches])
        return
    if not matches:
        print("no matching entries")
    for m in matches:
        print(f"{m.score:6.2f}  {m.entry.id}  ({m.entry.kind.value}, {m.entry.scope})")
        for reason in m.reasons:
            print(f"        - {reason}")


def _search(args: argparse.Namespace) -> int:
    words = " ".join(args.text)
    if args.file is not None:
        words += "\n" + _search_file_text(args.file)
    if not words.strip():
        raise InputError(expected("words to look for (TEXT or --file)", "none"))
    # search() is query(keyword=...); the query also keeps one kind before it counts.
    catalog = _catalog(args)
    matches = catalog.query(keyword=words, kind=args.kind, limit=args.limit)
    if args.file is None:
        # Words typed are all chosen: say which entries share some of them too few to be
        # shown, so that a long query's short answer does not read as all there is. A
        # plan's words are not all chosen, and its noise would make the line long.
        below = under_floor(catalog._items(), words, kind=args.kind)
        if below:
            print(
                f"kernelopt catalog: note: {count_text(len(below), 'more entry', 'more entries')} "
                f"{'shares' if len(below) == 1 else 'share'} some of the words, too small a "
                f"part of them to be shown ({_some_ids(below)}); search fewer words to see "
                "them",
                file=sys.stderr,
            )
    _print_matches(matches, args.json)
    return EXIT_OK


def _search_file_text(path: str) -> str:
    """The text of ``search --file``, refused where it holds a NUL byte.

    A UTF-16 file without a byte-order mark decodes as UTF-8 with a NUL beside every
    character: searched, it matched nothing, and the error echoed the NULs. The log
    readers skip such a file as binary; the search refuses it in their words.

    Raises
    ------
    InputError
        When there is no file at ``path``.
    FormatError
        When the bytes are not text: not UTF-8 (or the encoding of their byte-order
        mark), or holding a NUL.
    """
    text, encoding = read_text_and_encoding(path, what="a text file to search with (--file)")
    if "\x00" in text:
        # Imported here: the catalog loads no experiment readers unless a file needs the guess.
        from kernelopt.experiments.readers._files import _looks_utf16

        utf16 = encoding == "utf-8" and _looks_utf16(text.encode("utf-8"))
        guess = "; UTF-16 without a byte-order mark?" if utf16 else ""
        raise FormatError(
            expected("text without NUL bytes", f"a binary file (NUL bytes{guess})"), path=path
        )
    return text


# A number as typed on a command line: ASCII digits, an optional sign, point and exponent.
# float() also reads other scripts' digits ("８５" is 85) and "1_000" (Python's digit
# grouping), neither of which a user means as a measurement to compare.
_NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def _pairs(items: Sequence[str], flag: str) -> dict[str, float]:
    out: dict[str, float] = {}
    for item in items:
        text, sep, value = item.partition("=")
        name = text.strip()
        try:
            number: float | None = float(value)
        except ValueError:
            number = None
        if not sep or not name or number is None:
            raise InputError(expected(f"{flag} NAME=NUMBER", repr(item), where=flag))
        # NaN compares false with everything (the query would answer "nothing"), and no
        # measurement is infinite: the form is right, the value is not, so say which.
        if not math.isfinite(number):
            raise InputError(
                expected(f"{flag} NAME=NUMBER with a finite number", repr(item), where=flag)
            )
        if not _NUMBER.fullmatch(value.strip()):
            raise InputError(
                expected(f"{flag} NAME=NUMBER in ASCII digits, without '_'", repr(item), where=flag)
            )
        # Every shape fact is a size, count or share: a negative one is a typing slip that
        # would otherwise answer "no matching entries".
        if flag == "--shape" and number < 0:
            raise InputError(expected(f"{flag} NAME=NUMBER >= 0", repr(item), where=flag))
        if name in out:
            raise InputError(expected("each name once", f"{name!r} twice", where=flag))
        out[name] = number
    return out


def _check_names(catalog: Catalog, metrics: dict[str, float], shape: dict[str, float]) -> None:
    """Refuse a name that neither the vocabulary nor any entry's conditions use, and say
    on stderr which names no entry's conditions use.

    No condition could read a name of neither, so a misspelt ``--metric dram_pc=85``
    would print "no matching entries" as if nothing applied. A vocabulary name that no
    entry conditions on (``occupancy_pct``) is no mistake, but it can match nothing
    either: a line on stderr says so, so that the answer does not read as "none of the
    entries applies at this value". Both list the names closest to the one given first.
    Queries from code keep taking whole metric records, extra names included; they learn
    the names read from :func:`metrics_read` and :func:`shape_facts_read`.
    """
    checks = (
        (metrics, "--metric", "metric", metrics_read(catalog), METRICS),
        (shape, "--shape", "shape fact", shape_facts_read(catalog), SHAPE_FACTS),
    )
    # Every refusal before any note: a refused command says one thing, its error.
    for given, flag, what, read, vocabulary in checks:
        known = {*read, *vocabulary}
        for name, value in given.items():
            if name not in known:
                names = ", ".join(_closest_first(name, known))
                hint = _axis_hint(name, value, known) if flag == "--shape" else ""
                raise InputError(
                    expected(f"a {what} name in {names} (closest first)", repr(name), where=flag)
                    + hint
                )
    for given, _flag, what, read, _vocabulary in checks:
        for name in given:
            if name not in read:
                print(f"kernelopt catalog: {_unread_note(name, what, read)}", file=sys.stderr)


def _axis_hint(name: str, value: float, known: set[str]) -> str:
    """What to type instead of an axis name given as a shape fact, or ``""``.

    Shape facts say what an axis means, not what an op calls it: a normalization's
    ``hidden`` is the reduced axis, ``reduce_len``. The list of names alone does not say
    which of them is meant, so the likely one is named, with the option to type.
    """
    fact = shape_fact_for_axis(name)
    if fact is None or fact not in known:
        return ""
    return (
        f"; {name!r} names an axis, and the shape fact for it is most likely {fact} "
        f"({SHAPE_FACTS[fact]}): --shape {fact}={format_number(value)}"
    )


def _unread_note(name: str, what: str, read: Sequence[str]) -> str:
    """Say that no entry conditions on ``name``, and which names entries condition on."""
    note = f"no entry has a condition on {what} {name!r}, so it matches nothing"
    if not read:
        return f"{note}; no entry has a condition on any {what}"
    return f"{note}; entries condition on these {what}s, closest first: " + ", ".join(
        _closest_first(name, read)
    )


def _closest_first(name: str, known: Iterable[str]) -> list[str]:
    """``known``, the names most like ``name`` first (difflib's ratio), then by name."""
    return sorted(known, key=lambda k: (-difflib.SequenceMatcher(None, name, k).ratio(), k))


def _match(args: argparse.Namespace) -> int:
    metrics = _pairs(args.metric, "--metric")
    shape = typed = _pairs(args.shape, "--shape")
    if args.op is not None and args.profile is None:
        raise InputError(expected("--op only with --profile", "it without", where="--op"))
    op_profile = None
    if args.profile is not None:
        facts, op_profile = _profile_facts(args.profile, args.op)
        # What was typed wins over what the profile reads: the user's word on one fact.
        shape = {**facts, **shape}
    if not metrics and not shape:
        raise InputError(
            expected("at least one --metric NAME=VALUE, --shape NAME=VALUE or --profile", "none")
        )
    catalog = _catalog(args)
    family = _family(catalog, args.family)
    if family is None and op_profile is not None:
        family = _selection_family(op_profile, catalog.families())
    # The facts a profile reads are whatever it supports (b, distinct_shapes...): only the
    # names typed are told that no entry conditions on them.
    _check_names(catalog, metrics, typed)
    matches = catalog.query(
        metrics=metrics or None,
        shape=shape or None,
        family=family,
        language=args.language,
        kind=args.kind,
    )
    # The entries the filters keep that the answer lacks: a condition of theirs left
    # unjudged may be why. One in the answer already could only rank higher.
    answered = {m.entry.id for m in matches}
    left_out = [
        m.entry
        for m in catalog.query(family=family, language=args.language, kind=args.kind)
        if m.entry.id not in answered
    ]
    _note_unjudged(metrics_missing(left_out, metrics), "--metric", "metric")
    _note_unjudged(shape_facts_missing(left_out, shape), "--shape", "shape fact")
    # --limit cuts what is shown, after the notes: an entry ranked below the limit still
    # matched, so it is not one "left out with conditions unjudged".
    _print_matches(matches if args.limit is None else matches[: args.limit], args.json)
    return EXIT_OK


# How many entry ids a note names for one group of missing names before it counts the rest.
_SHOWN_IDS = 3


def _note_unjudged(missing: dict[str, tuple[str, ...]], flag: str, what: str) -> None:
    """One line on stderr naming what the conditions of entries left out of the answer
    also need to be judged, and whose they are.

    A condition comparing a name given with one not given is neither true nor false, so
    its entry is left out of the answer: "no matching entries" for a memory-bound kernel
    given ``dram_pct`` alone would otherwise read as "nothing applies", while the
    entries wait for ``tc_pct`` or ``arith_intensity`` and ``ridge``. Names needed by the
    same entries are listed together, those needed by most entries first.

    Parameters
    ----------
    missing : dict of str to tuple of str
        Each missing name with the ids of the entries waiting on it
        (:func:`~kernelopt.catalog.query.metrics_missing`).
    flag : str
        The option that takes such names (``--metric``).
    what : str
        What they are, in words (``metric``, ``shape fact``).
    """
    if not missing:
        return
    groups: dict[tuple[str, ...], list[str]] = {}
    for name, ids in missing.items():
        groups.setdefault(ids, []).append(name)
    entries = {i for ids in missing.values() for i in ids}
    parts = [
        f"{', '.join(names)} ({_some_ids(ids)})"
        for ids, names in sorted(groups.items(), key=lambda item: (-len(item[0]), item[1]))
    ]
    print(
        f"kernelopt catalog: {count_text(len(entries), 'entry', 'entries')} "
        f"{'is' if len(entries) == 1 else 'are'} left out with conditions unjudged, each "
        f"pairing a {what} given with one not given; to judge them, add {flag} NAME=VALUE "
        "for: " + "; ".join(parts),
        file=sys.stderr,
    )


def _some_ids(ids: Sequence[str]) -> str:
    """The first ids, and how many more."""
    shown = ", ".join(ids[:_SHOWN_IDS])
    rest = len(ids) - _SHOWN_IDS
    return f"{shown} and {rest} more" if rest > 0 else shown


def _profile_facts(path: str, op: str | None) -> tuple[dict[str, float], OpProfile | None]:
    """The catalog shape facts of ``op`` (the most called by default) in the workload
    profile at ``path``, as :func:`kernelopt.workload.shape_facts` reads them, and the op's
    profile (None for a profile without ops)."""
    from kernelopt.workload import read_profile_md, shape_facts

    profile = read_profile_md(Path(path))
    if not profile.ops:
        # Read tolerantly, a call trace, a hand-off or a binary file holds no op: say what
        # the file is and what to pass instead, not that the profile is empty.
        other = _other_file(Path(path))
        if other is not None:
            raise InputError(
                expected(
                    "a workload profile (workload_profile.md, written by `kernelopt inspect "
                    "--write`)",
                    other,
                    where="--profile",
                )
            )
    if op is not None and profile.op(op) is None:
        ops = ", ".join(o.op for o in profile.ops) or "no ops"
        raise InputError(expected(f"an op of the profile ({ops})", op, where="--op"))
    try:
        facts = shape_facts(profile, op)
    except InputError as error:
        raise InputError(f"--profile: {error}") from None
    return facts, profile.op(op)


# A hand-off's heading (the workflow's Profile, Optimization Task and New Version records).
_HANDOFF_HEADING = re.compile(
    r"^\s{0,3}#{1,6}\s*(Profile|Optimization Task|New Version)\s*:", re.MULTILINE
)


def _other_file(path: Path) -> str | None:
    """What ``path`` holds when it is a file ``match --profile`` is often given in place
    of a workload profile, with what to pass instead; None for anything else.

    A JSONL call trace is what ``kernelopt inspect`` reads to write the profile; a
    ``## Profile:`` hand-off (``experiments/profile.md``) holds measured metrics, which
    ``--metric`` takes, not the shapes of calls.
    """
    try:
        data = path.read_bytes()
    except OSError:
        return None
    if b"\0" in data and not data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return "a binary file (NUL bytes)"
    text = text_of_bytes(data).removeprefix("\ufeff")
    first = next((line for line in text.splitlines() if line.strip()), "")
    try:
        record = json.loads(first)
    except ValueError:
        record = None
    if isinstance(record, dict) and ("op" in record or "traceEvents" in record):
        return (
            f"a call trace ({path}); run `kernelopt inspect {shlex.quote(str(path))} --write "
            "experiments/workload_profile.md` first and pass the profile it writes"
        )
    heading = _HANDOFF_HEADING.search(text)
    if heading is None:
        return None
    kind = heading.group(1)
    line = text.count("\n", 0, heading.start()) + 1
    got = f"a '## {kind}:' hand-off ({path}:{line})"
    if kind != "Profile":
        return f"{got}; pass the workload profile (experiments/workload_profile.md)"
    return (
        f"{got}, which holds measured metrics, not call shapes; pass its metrics with "
        f"--metric NAME=VALUE{_handoff_metrics(text)}, or --profile the workload profile "
        "(experiments/workload_profile.md)"
    )


def _handoff_metrics(text: str) -> str:
    """The ``--metric`` options of a profile hand-off's longest stage (`` (its longest
    stage 'decode': --metric tc_pct=73.3 --metric dram_pct=48.9)``), or ``""`` when none
    can be read."""
    from kernelopt.workflow import parse_profile

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            report = parse_profile(text)
    except (FormatError, InputError, ValueError):
        return ""
    if not report.stages:
        return ""
    stage = max(report.stages, key=lambda s: s.duration)
    pairs = [
        (name, value)
        for name, value in (
            ("tc_pct", stage.tc_pct),
            ("dram_pct", stage.dram_pct),
            ("occupancy_pct", stage.occupancy_pct),
        )
        if value is not None
    ]
    if not pairs:
        return ""
    shown = " ".join(f"--metric {name}={format_number(value)}" for name, value in pairs)
    return f" (its longest stage, {stage.name!r}: {shown})"


def _selection_family(op: OpProfile, known: Sequence[str]) -> str | None:
    """The family of an op that picks ``k`` of ``n`` (``topk``, ``gather``), None for others.

    A top-k and a gather give the same shape facts (``select_k``, ``select_n``), which mean
    different things: ``select_k <= select_n`` holds for every top-k, and a top-k is no
    shared-index gather, since each row picks its own positions. The family tells their
    entries apart, as ``--family`` would. The op's own family is taken where the catalog
    knows it and it is not ``any``; the built-in signatures leave top-k and gather at
    ``any``, so there the op's and its signature's names decide
    (:func:`kernelopt.workload.signatures.is_gather`).

    Parameters
    ----------
    op : OpProfile
        The profile's op that ``match --profile`` reads.
    known : Sequence of str
        The families the catalog accepts (:meth:`Catalog.families`).

    Returns
    -------
    str or None
        ``gather``, ``topk`` or the op's own family for a selection op; None for an op
        without ``select`` axes, whose answer is not narrowed.
    """
    from kernelopt.workload.signatures import is_gather

    if op.select is None:
        return None
    own = normalize_family(op.family)
    if own != "any" and own in known:
        return own
    return "gather" if is_gather(op.signature, op.op) else "topk"


def _lint(args: argparse.Namespace) -> int:
    root = _one_tree(args.dir, args.knowledge)
    problems = lint_tree(root)
    errors = [p for p in problems if p.is_error]
    if args.json:
        print_json(
            {
                "tree": root or "built-in",
                "errors": len(errors),
                "warnings": len(problems) - len(errors),
                "problems": [p.to_dict() for p in problems],
            }
        )
    else:
        for problem in problems:
            print(problem)
        print(_count(len(errors), len(problems) - len(errors)), file=sys.stderr)
    return EXIT_FINDINGS if errors else EXIT_OK


def _one_tree(named: str | None, knowledge: str | None) -> str | None:
    """The tree a subcommand works on, named as DIR (or ``--dir``) or as ``--knowledge``."""
    if named and knowledge and Path(named).resolve() != Path(knowledge).resolve():
        # Taking either would drop the other without a word.
        raise InputError(expected("one knowledge tree", f"{named} and --knowledge {knowledge}"))
    return named or knowledge


def _tree_dir(named: str | None, knowledge: str | None) -> Path:
    return Path(_one_tree(named, knowledge) or _DEFAULT_TREE)


def _index(args: argparse.Namespace) -> int:
    root = _tree_dir(args.dir, args.knowledge)
    if not root.is_dir():
        why = "not a folder" if root.exists() else "no such folder"
        raise InputError(expected("a knowledge folder", f"{root} ({why})"))
    tree = KnowledgeTree(root)
    path = tree.write_index()
    # The index lists what could be read; entries that could not are missing from it.
    _warn_problems(root, tree.catalog(strict=False))
    if args.json:
        print_json({"path": str(path)})
    else:
        print(path)
    return EXIT_OK


def _new(args: argparse.Namespace) -> int:
    named = _one_tree(args.dir, args.knowledge)
    root = Path(named or _DEFAULT_TREE)
    if named is None and not root.exists():
        # As `index` does: a tree named by no one is not made up in whatever folder
        # this runs in; one named with --dir or --knowledge is created when missing.
        raise InputError(
            expected(
                "a knowledge folder",
                f"{root} (no such folder here: pass --dir DIR, or create {root} first)",
            )
        )
    if root.exists() and not root.is_dir():
        # The tree is created when missing; a file there would fail later, as an OS error.
        raise InputError(expected("a knowledge folder", f"{root} (not a folder)"))
    path = new_entry_file(root, args.name, kind=args.kind, language=args.language)
    # The tree quoted as a shell reads it, so that the command pastes as it is shown.
    lint = f"kernelopt catalog lint {shlex.quote(str(root))}"
    message = f"fill in every <FILL: ...> placeholder in {path}, then run `{lint}`"
    if args.json:
        print_json({"path": str(path), "next": message})
    else:
        print(path)
        print(message, file=sys.stderr)
    return EXIT_OK

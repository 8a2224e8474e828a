"""The command-line synopses of the docs say what the parsers take.

Each ``## Command line`` block of docs/bench.md and docs/workflow.md lists a command's
forms. Every option a form accepts is shown in it, none that the command lacks, and an
option written outside brackets is one the command cannot run without.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest

from kernelopt import cli

DOCS = Path(__file__).resolve().parents[2] / "docs"
PAGES = ("bench.md", "workflow.md")
OPTION = re.compile(r"--[a-z][a-z0-9-]*")

# Options a form refuses, as the page says beside its block: `report profile` reads a
# FILE.md or builds from --rows, and each form refuses the other's options.
_ROWS_ONLY = {
    "--rows", "--kernel", "--version", "--impl", "--baseline", "--baseline-impl", "--point",
    "--mode", "--devlog", "--family", "--language",
}  # fmt: skip
REFUSED = {
    ("kernelopt report profile", "--rows"): {"--check"},
    ("kernelopt report profile", "FILE.md"): _ROWS_ONLY,
}


def synopsis_forms(text: str) -> list[str]:
    """The forms of the first code block under ``## Command line``, one string each
    (a form's continuation lines are indented)."""
    section = re.search(r"^## Command line\n.*?^```[^\n]*\n(.*?)^```", text, re.S | re.M)
    assert section is not None, "Expected a '## Command line' section with a code block"
    forms: list[str] = []
    for line in section[1].splitlines():
        if line.startswith("kernelopt "):
            forms.append(line.strip())
        elif line.startswith(" ") and forms:
            forms[-1] += " " + line.strip()
    return forms


def parser_of(form: str) -> argparse.ArgumentParser:
    """The (sub)parser a form's leading words name."""
    parser: argparse.ArgumentParser = cli.build_parser()
    for word in form.split()[1:]:
        subcommands = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        if not subcommands or word not in subcommands[0].choices:
            break
        parser = subcommands[0].choices[word]
    return parser


def options_of(parser: argparse.ArgumentParser) -> dict[str, argparse.Action]:
    return {
        option: action
        for action in parser._actions
        if not isinstance(action, argparse._HelpAction)
        for option in action.option_strings
        if option.startswith("--")
    }


def bracketed(form: str) -> dict[str, bool]:
    """Each option of the form, and whether it is written inside brackets."""
    found: dict[str, bool] = {}
    for match in OPTION.finditer(form):
        depth = form.count("[", 0, match.start()) - form.count("]", 0, match.start())
        found.setdefault(match.group(0), depth > 0)
    return found


def _forms() -> list[tuple[str, str]]:
    return [
        (page, form)
        for page in PAGES
        for form in synopsis_forms((DOCS / page).read_text(encoding="utf-8"))
    ]


def _refused(prog: str, form: str) -> set[str]:
    for (where, marker), refused in REFUSED.items():
        if where == prog and marker in form.split():
            return refused
    return set()


def test_the_pages_have_synopses() -> None:
    progs = {parser_of(form).prog for _, form in _forms()}
    assert progs >= {"kernelopt bench ceilings", "kernelopt bench mla", "kernelopt learn"}


@pytest.mark.parametrize(("page", "form"), _forms())
def test_a_synopsis_shows_every_option_its_form_accepts(page: str, form: str) -> None:
    parser = parser_of(form)
    shown = set(bracketed(form))
    accepted = set(options_of(parser)) - _refused(parser.prog, form)
    assert shown - set(options_of(parser)) == set(), f"{page}: options {parser.prog} lacks"
    assert accepted - shown == set(), f"{page}: options {parser.prog} takes but not shown"


def _single_forms() -> list[tuple[str, str]]:
    """The forms of commands with one form: a command with several (REFUSED) makes each
    form's own options required, which its parser cannot say."""
    several = {prog for prog, _ in REFUSED}
    return [(page, form) for page, form in _forms() if parser_of(form).prog not in several]


@pytest.mark.parametrize(("page", "form"), _single_forms())
def test_only_required_options_are_written_outside_brackets(page: str, form: str) -> None:
    parser = parser_of(form)
    options = options_of(parser)
    wrong = {
        option: "required" if options[option].required else "optional"
        for option, inside in bracketed(form).items()
        if option in options and inside == options[option].required
    }
    assert wrong == {}, f"{page}: {form}"


def test_the_checks_see_a_missing_option_and_a_bracket_out_of_place() -> None:
    form = "kernelopt bench mla --trial-matrix [--heads 128,16] [--json]"
    assert bracketed(form) == {"--trial-matrix": False, "--heads": True, "--json": True}
    assert set(options_of(parser_of(form))) - set(bracketed(form)) == {"--extra-point", "--out"}
    text = "## Command line\n\n```\nkernelopt learn --before A\n    [--json]\nkernelopt x\n```\n"
    assert synopsis_forms(text) == ["kernelopt learn --before A [--json]", "kernelopt x"]

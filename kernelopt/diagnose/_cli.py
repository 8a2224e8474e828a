"""``kernelopt diagnose DIR``: diagnose a stalled optimization effort from its experiment log.

Exit codes: 0 when no pathology is found and the kernel stands at its best, 1 when there
are findings or a kept regression, 2 on usage or input
errors (a missing directory, a bad ``--until``, a directory in which no attempt was read).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from kernelopt._cli_util import (
    EXIT_FINDINGS,
    EXIT_OK,
    add_json_flag,
    exit_codes,
    int_at_least,
    nonempty_path,
    output_path,
    print_json,
)
from kernelopt._words import count_text

__all__ = ["register"]


def register(subparsers: Any) -> None:
    """Register the ``diagnose`` subcommand."""
    parser = subparsers.add_parser(
        "diagnose",
        help="diagnose a stalled optimization effort from its experiment log",
        description=(
            "Read an optimization log (CLAUDE.md, experiments/summary.md, exp_N/ folders, devlogs, "
            "step logs, JSONL/TSV histories), check the nine plateau pathologies and print a plan. "
            "The log is only read: none of its code is imported or run."
        ),
        epilog=exit_codes(
            "no pathology found, no kept regression",
            "pathologies found, or a kept regression",
            "a missing directory, a bad --until, no attempt read",
        )
        + "\n\nExamples, run in a kernelopt checkout:\n"
        "  kernelopt diagnose examples/logs/mla-decode-plateau --until 5\n"
        "  kernelopt diagnose examples/logs/healthy-run --json",
    )
    parser.add_argument(
        "directory",
        metavar="DIR",
        type=nonempty_path("a log directory"),
        help="the log directory (repository root, experiments/, docs/ or logs/)",
    )
    # The diagnosis carries its warnings (and what was not read) in the JSON itself.
    add_json_flag(parser, warnings='warnings are in it, in its "warnings" list, not on stderr')
    parser.add_argument(
        "--write-plan",
        metavar="PATH",
        type=output_path,
        help="also write the plan (markdown) to PATH, atomically; not on an error",
    )
    parser.add_argument(
        "--until",
        metavar="N",
        type=int_at_least(0),
        help="diagnose the log as it stood before experiment N (only experiments < N; "
        "default: all)",
    )
    parser.add_argument(
        "--family",
        metavar="F",
        help="kernel family (mla-decode, decode-attention, softmax, gemm, ...); default: "
        "inferred from the log",
    )
    parser.add_argument(
        "--knowledge",
        metavar="DIR",
        type=nonempty_path("a knowledge tree folder"),
        help="a knowledge tree (docs/knowledge/) merged over the built-in catalog",
    )
    parser.set_defaults(handler=_run)


def _run(args: argparse.Namespace) -> int:
    import attrs

    from kernelopt._errors import InputError, expected
    from kernelopt._fileio import atomic_write_text
    from kernelopt.diagnose.engine import diagnose, known_family, load_catalog

    _check_log_directory(args.directory)
    # The options are checked here so that errors name them (--family, --knowledge), not
    # the library's arguments; the catalog loaded once serves the diagnosis too.
    loaded, _ = load_catalog(args.knowledge, where="--knowledge")
    if args.family is not None:
        known_family(args.family, loaded, where="--family")
    diagnosis = diagnose(
        args.directory,
        until=args.until,
        family=args.family,
        catalog=args.knowledge if loaded is None else loaded,
    )
    if args.family is not None:
        # The library says "given"; here the reader knows which option gave it.
        diagnosis = attrs.evolve(
            diagnosis, summary=attrs.evolve(diagnosis.summary, family_source="--family")
        )
    summary = diagnosis.summary
    # Nothing was judged: a mistyped or empty directory, or one holding only rows that
    # attempt nothing (benchmark timings, a trace of calls), must not read as healthy, nor
    # replace a plan written from a real log.
    judged = summary.attempted > 0
    if args.write_plan and judged:
        from kernelopt.diagnose.plan import entry_links, render_plan

        # The written file's links resolve from where it is written.
        links = entry_links(diagnosis, args.write_plan, args.knowledge)
        atomic_write_text(args.write_plan, render_plan(diagnosis, links=links))
    if args.json:
        print_json(diagnosis.to_dict())
    else:
        import os

        from kernelopt.diagnose.plan import entry_links, render_plan

        # Printed, the plan's links lead from where the user stands (the working folder)
        # to the entry files, as a written plan's lead from its own folder.
        here = os.path.join(os.getcwd(), "plan.md")
        sys.stdout.write(render_plan(diagnosis, links=entry_links(diagnosis, here, args.knowledge)))
    if not judged:
        got = (
            # --until may be what left nothing: the log itself may hold experiments.
            f"no experiments before exp {args.until} (--until {args.until})"
            if summary.experiments == 0 and args.until is not None
            else "no experiments"
            if summary.experiments == 0
            else f"{count_text(summary.experiments, 'experiment')} read, "
            + ("not an attempt" if summary.experiments == 1 else "none of them an attempt")
        )
        raise InputError(
            expected(
                f"an experiment log in {args.directory} (experiments/summary.md, exp_N/ "
                "folders, a devlog or a step log) with at least one attempt",
                got,
            )
        )
    # A kept regression is no pathology, but a script that reads 0 as "carry on" would carry
    # on from the slower kernel.
    flagged = diagnosis.findings or diagnosis.summary.regression is not None
    return EXIT_FINDINGS if flagged else EXIT_OK


def _check_log_directory(directory: str) -> None:
    """Refuse a ``DIR`` that names no folder, in the words of the other commands' paths.

    The library names its own parameter (``path: ...``); on the command line the user
    typed no ``path``, so the message names what they gave and why it is refused.
    """
    from pathlib import Path

    from kernelopt._errors import InputError, expected

    root = Path(directory)
    if not root.exists():
        raise InputError(expected("an existing log directory", f"no folder at {directory}"))
    if not root.is_dir():
        raise InputError(expected("a directory holding an experiment log", f"the file {directory}"))

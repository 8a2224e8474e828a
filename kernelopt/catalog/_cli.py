"""`kernelopt catalog`: read, query, lint and update the optimization / anti-pattern catalog."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from kernelopt._cli_util import EXIT_USAGE, add_json_flag


def register(subparsers: Any) -> None:
    """Register the `catalog` subcommand."""
    parser = subparsers.add_parser(
        "catalog",
        help="read, query, lint and update the optimization / anti-pattern catalog",
        description="read, query, lint and update the optimization / anti-pattern catalog",
    )
    add_json_flag(parser)
    parser.set_defaults(handler=_run)


def _run(args: argparse.Namespace) -> int:
    print("kernelopt catalog: not available in this build yet", file=sys.stderr)
    return EXIT_USAGE

"""`kernelopt inspect`: profile the shapes a kernel really sees in a call trace."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from kernelopt._cli_util import EXIT_USAGE, add_json_flag


def register(subparsers: Any) -> None:
    """Register the `inspect` subcommand."""
    parser = subparsers.add_parser(
        "inspect",
        help="profile the shapes a kernel really sees in a call trace",
        description="profile the shapes a kernel really sees in a call trace",
    )
    add_json_flag(parser)
    parser.set_defaults(handler=_run)


def _run(args: argparse.Namespace) -> int:
    print("kernelopt inspect: not available in this build yet", file=sys.stderr)
    return EXIT_USAGE

"""`kernelopt diagnose`: diagnose a stalled optimization effort from its experiment log."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from kernelopt._cli_util import EXIT_USAGE, add_json_flag


def register(subparsers: Any) -> None:
    """Register the `diagnose` subcommand."""
    parser = subparsers.add_parser(
        "diagnose",
        help="diagnose a stalled optimization effort from its experiment log",
        description="diagnose a stalled optimization effort from its experiment log",
    )
    add_json_flag(parser)
    parser.set_defaults(handler=_run)


def _run(args: argparse.Namespace) -> int:
    print("kernelopt diagnose: not available in this build yet", file=sys.stderr)
    return EXIT_USAGE

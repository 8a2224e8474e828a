"""`kernelopt bench`: time kernels, measure device ceilings and place results on the roofline."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from kernelopt._cli_util import EXIT_USAGE, add_json_flag


def register(subparsers: Any) -> None:
    """Register the `bench` subcommand."""
    parser = subparsers.add_parser(
        "bench",
        help="time kernels, measure device ceilings and place results on the roofline",
        description="time kernels, measure device ceilings and place results on the roofline",
    )
    add_json_flag(parser)
    parser.set_defaults(handler=_run)


def _run(args: argparse.Namespace) -> int:
    print("kernelopt bench: not available in this build yet", file=sys.stderr)
    return EXIT_USAGE

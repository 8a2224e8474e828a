"""Small helpers shared by the subcommands of the ``kernelopt`` command-line tool."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

# Exit codes shared by every subcommand.
EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_USAGE = 2


def add_json_flag(parser: argparse.ArgumentParser) -> None:
    """Add the ``--json`` flag every reporting subcommand takes."""
    parser.add_argument(
        "--json", action="store_true", help="print machine-readable JSON instead of text"
    )


def print_json(data: Any) -> None:
    """Print ``data`` as indented JSON with a trailing newline."""
    json.dump(data, sys.stdout, indent=2, sort_keys=False, default=str, ensure_ascii=False)
    sys.stdout.write("\n")


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
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"Expected an int >= 1, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"Expected an int >= 1, got {value}")
    return value

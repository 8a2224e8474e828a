"""The ``kernelopt`` command-line tool.

Each subcommand lives beside the primitive it drives (``kernelopt/<module>/_cli.py``) and
registers itself here. Exit codes: 0 ok, 1 findings or lint errors, 2 usage or input errors.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from kernelopt import __version__
from kernelopt._cli_util import EXIT_USAGE
from kernelopt._errors import KernelOptError

# Modules whose `register(subparsers)` adds their subcommands (catalog; diagnose; inspect;
# bench; learn and report). They import nothing heavy, so `kernelopt --help` stays fast on
# machines without torch.
_REGISTRARS = (
    "kernelopt.catalog._cli",
    "kernelopt.diagnose._cli",
    "kernelopt.workload._cli",
    "kernelopt.bench._cli",
    "kernelopt.workflow._cli",
)


def build_parser() -> argparse.ArgumentParser:
    """Build the argument parser with every subcommand registered."""
    parser = argparse.ArgumentParser(
        prog="kernelopt",
        description=(
            "Primitives for optimizing GPU kernels: a knowledge catalog, plateau diagnosis "
            "of experiment logs, workload inspection and trustworthy benchmarks."
        ),
    )
    parser.add_argument("--version", action="version", version=f"kernelopt {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module in _REGISTRARS:
        importlib.import_module(module).register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the tool and return its exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    handler = getattr(args, "handler", None)
    if handler is None:
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    try:
        return int(handler(args))
    except KernelOptError as error:
        print(f"kernelopt {args.command}: error: {error}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:  # `kernelopt ... | head` closed the pipe: not an error
        return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())

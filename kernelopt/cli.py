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
from kernelopt._errors import KernelOptError, expected

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
    except (OSError, UnicodeDecodeError, RecursionError, OverflowError) as error:
        # What a file on disk can do to any reader or writer: said as the user's problem
        # to fix, not a traceback, when no reader named it more precisely.
        print(f"kernelopt {args.command}: error: {_file_problem(error)}", file=sys.stderr)
        return EXIT_USAGE


def _file_problem(error: BaseException) -> str:
    """An ``Expected X, got Y`` message for an error a file's content or place caused."""
    if isinstance(error, UnicodeDecodeError):
        return expected("UTF-8 text", f"a byte that is not ({error.reason} at {error.start})")
    if isinstance(error, RecursionError):
        return expected("JSON nested less deeply", "structures too deep to read")
    if isinstance(error, OverflowError):
        return expected("numbers within the float range", str(error))
    filename = getattr(error, "filename", None)
    reason = getattr(error, "strerror", None) or str(error)
    where = "a file" if filename is None else str(filename)
    return expected("a file kernelopt can read or write", f"{where}: {reason}")


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())

"""The ``kernelopt`` command-line tool.

Each subcommand lives beside the primitive it drives (``kernelopt/<module>/_cli.py``) and
registers itself here. Exit codes, the same in every subcommand: 0 ok, 1 findings (the
subcommand's help says which), 2 usage or input errors, 130 interrupted.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from kernelopt import __version__
from kernelopt._cli_util import (
    EXIT_INTERRUPTED,
    EXIT_USAGE,
    ClosedPipeGuard,
    Parser,
    missing_command,
    one_line,
)
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


_EPILOG = """\
Exit codes: 0 ok; 1 findings (diagnose: pathologies; inspect: shortcuts; catalog lint:
errors; report --check: problems, or a hand-off that does not parse; learn: UNCLEAR; bench
mla: a point that failed); 2 usage or input error, said on stderr as "Expected X, got Y";
130 interrupted (Ctrl-C), said in one line.
Every command gives them these meanings; `kernelopt COMMAND --help` says which apply.

Examples, run in a kernelopt checkout:
  kernelopt catalog search split kv decode
  kernelopt catalog match --shape s_q=1 --family mla-decode
  kernelopt diagnose examples/logs/mla-decode-plateau --until 5
"""


def build_parser() -> argparse.ArgumentParser:
    """Build the argument parser with every subcommand registered."""
    parser = Parser(
        prog="kernelopt",
        description=(
            "Primitives for optimizing GPU kernels: a knowledge catalog, plateau diagnosis "
            "of experiment logs, workload inspection and trustworthy benchmarks."
        ),
        epilog=_EPILOG,
    )
    parser.add_argument("--version", action="version", version=f"kernelopt {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module in _REGISTRARS:
        importlib.import_module(module).register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the tool and return its exit code.

    Parameters
    ----------
    argv : Sequence[str], optional
        The arguments after the program name; ``None`` reads ``sys.argv``.

    Returns
    -------
    int
        0 ok, 1 findings, 2 usage or input error, 130 interrupted (Ctrl-C). argparse's
        own usage errors (and
        ``--help``) raise ``SystemExit`` with 2 (0) instead.
    """
    guard = ClosedPipeGuard(sys.stdout)
    # stderr too: with `2>&1 | head -1` the notes and errors go down the same pipe, and a
    # note written after the reader left would turn a run that did its work into exit 1.
    errors = ClosedPipeGuard(sys.stderr, "standard error")
    sys.stdout = guard  # type: ignore[assignment]
    sys.stderr = errors  # type: ignore[assignment]
    flushed = False
    try:
        code = _run(argv)
        try:
            guard.flush()
        except OSError as error:
            # Output the command wrote but the stream could not take (a full disk behind
            # `> out.txt`): the run did not deliver it, so it does not end in 0.
            if code == 0:
                print(f"kernelopt: error: {one_line(_file_problem(error))}", file=sys.stderr)
                code = EXIT_USAGE
        flushed = True
        return code
    finally:
        if not flushed:
            # argparse's --help and usage errors leave by SystemExit.
            guard.flush()
        errors.flush()
        sys.stdout = guard.stream
        sys.stderr = errors.stream


def _run(argv: Sequence[str] | None) -> int:
    try:
        # Building the parser imports every subcommand's module, a few hundred ms on a cold
        # start: a Ctrl-C that lands there is as much the user's act as one in the work.
        parser = build_parser()
        args = parser.parse_args(argv)
    except KeyboardInterrupt:
        print("kernelopt: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    handler = getattr(args, "handler", None)
    if handler is None:
        return missing_command(parser)
    try:
        return int(handler(args))
    except KeyboardInterrupt:
        # Ctrl-C is the user's own act: one line says where it landed, not a traceback.
        print(f"kernelopt {args.command}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except KernelOptError as error:
        # The message names paths and values as given: one line all the same.
        print(f"kernelopt {args.command}: error: {one_line(str(error))}", file=sys.stderr)
        return EXIT_USAGE
    except (OSError, UnicodeDecodeError, RecursionError, OverflowError) as error:
        # What a file on disk can do to any reader or writer: said as the user's problem
        # to fix, not a traceback, when no reader named it more precisely.
        print(f"kernelopt {args.command}: error: {one_line(_file_problem(error))}", file=sys.stderr)
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

"""`kernelopt inspect`: profile the shapes a kernel really sees in a call trace.

Exit codes: 0 no shortcut found, 1 shortcuts found, 2 bad input (missing or empty trace).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from kernelopt._cli_util import (
    EXIT_FINDINGS,
    EXIT_OK,
    add_json_flag,
    exit_codes,
    int_at_least,
    options_given,
    output_path,
    print_json,
)

if TYPE_CHECKING:
    from kernelopt.workload.profile import WorkloadProfile

# What only a trace is read with: a workload_profile.md is read back as written, so these
# would be dropped without a word.
_TRACE_ONLY = (
    ("--format", "format"),
    ("--definition", "definition"),
    ("--time", "time"),
    ("--max-shapes", "max_shapes"),
)


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register the `inspect` subcommand."""
    parser = subparsers.add_parser(
        "inspect",
        help="profile the shapes a kernel really sees in a call trace",
        description=(
            "Profile the shapes a kernel really sees in a call trace (JSONL calls, PyTorch "
            "profiler trace, FlashInfer-Bench workloads) or re-read a workload_profile.md, "
            "and list shortcuts (size-1 axes, k >= n, a gather that is an index select, equal "
            "lengths, dominant shape, padding)."
        ),
        epilog=exit_codes(
            "no shortcut found",
            "shortcuts found",
            "a missing, empty or unreadable trace, one without calls, an unknown --op",
        )
        + "\n\nExamples, run in a kernelopt checkout:\n"
        "  kernelopt inspect tests/workload/data/mla_decode_calls.jsonl --top 3\n"
        "  kernelopt inspect tests/workload/data/handwritten_profile.md --json",
    )
    parser.add_argument("trace", help="trace file, or a workload_profile.md to re-read")
    parser.add_argument(
        "--op", help="profile only this op (e.g. mla_decode, aten::softmax; default: every op)"
    )
    add_json_flag(parser)
    parser.add_argument(
        "--write",
        metavar="PATH",
        type=output_path,
        help="write the profile to PATH (markdown; JSON if PATH ends in .json)",
    )
    parser.add_argument(
        "--top",
        type=int_at_least(1),
        default=5,
        metavar="K",
        help="shapes listed per op and k of the top-k skew (default 5)",
    )
    parser.add_argument(
        "--format",
        choices=("jsonl", "torch-profiler", "flashinfer-bench"),
        help="trace format (default: detected)",
    )
    parser.add_argument(
        "--definition",
        metavar="PATH",
        help="FlashInfer-Bench definition JSON for a workload file (default: none)",
    )
    parser.add_argument(
        "--time",
        choices=("auto", "host", "device"),
        default="auto",
        help="profiler traces: host op time or GPU kernel time (default auto: the GPU's "
        "when the trace has it)",
    )
    parser.add_argument(
        "--max-shapes",
        type=int_at_least(1),
        default=32,
        metavar="N",
        help="shapes kept per op in the profile, by calls and again by time (default 32)",
    )
    parser.set_defaults(handler=_run)


def _run(args: argparse.Namespace) -> int:
    # Imported here so that `kernelopt --help` does not load the readers.
    from kernelopt._errors import InputError, expected
    from kernelopt.workload._validators import is_file, no_file
    from kernelopt.workload.markdown import read_profile_md, write_profile_md
    from kernelopt.workload.profile import profile_calls
    from kernelopt.workload.report import render_report
    from kernelopt.workload.serialize import profile_to_dict, shortcut_to_dict
    from kernelopt.workload.shortcuts import find_shortcuts
    from kernelopt.workload.traces import _read_trace

    if not args.trace:  # Path("") is the working directory, which no message should name
        raise InputError(expected("a trace file or a workload_profile.md", "an empty path"))
    path = Path(args.trace)
    _refuse_writing_over(path, args.write)
    if args.definition is not None and not is_file(Path(args.definition)):
        raise InputError(
            expected("a definition JSON file", no_file(args.definition), where="--definition")
        )
    if path.suffix.lower() == ".md":
        given = [flag for flag, dest in _TRACE_ONLY if dest in options_given(args)]
        if given:
            them = "it" if len(given) == 1 else "them"
            raise InputError(
                expected(
                    f"{', '.join(given)} only with a trace",
                    f"{them} with the workload profile {path}",
                )
            )
        profile = read_profile_md(path)
        if not profile.ops:
            # A markdown file with no shape table (a README) is not a workload profile.
            lines = [n for n in profile.notes if n.startswith("line ")]
            detail = f"; {lines[0]}" if lines else ""
            raise InputError(
                expected(f"a workload profile or shape table in {path}", f"no calls{detail}")
            )
        if args.op is not None:
            op = profile.op(args.op)
            profile = type(profile)(
                source=profile.source,
                format=profile.format,
                ops=(op,),
                records=profile.records,
                skipped=profile.skipped,
                notes=profile.notes,
            )
    else:
        trace = _read_trace(
            path,
            format=args.format,
            definition=args.definition,
            time=args.time,
            names=("--definition", "--time"),
        )
        _refuse_unread(args, trace.format, path)
        if not trace.groups:
            detail = f"{trace.skipped} of {trace.records} records skipped"
            if trace.notes:
                detail += f"; {trace.notes[0]}"
            raise InputError(expected(f"at least one call in {path}", f"none ({detail})"))
        profile = profile_calls(trace, op=args.op, max_shapes=args.max_shapes)
        profile = _cli_notes(profile)
    shortcuts = find_shortcuts(profile)
    if args.write:
        write_profile_md(profile, args.write, shortcuts)
    if args.json:
        print_json(
            {
                "profile": profile_to_dict(profile),
                "shortcuts": [shortcut_to_dict(s) for s in shortcuts],
                "written": args.write,
            }
        )
    else:
        print(render_report(profile, shortcuts, top=args.top), end="")
        if args.write:
            print(f"wrote {args.write}")
    return EXIT_FINDINGS if shortcuts else EXIT_OK


# The end of the note for an op no signature names, and what the command line adds to it.
_REGISTER = "or register one (register_signature)"
_REGISTER_HERE = (
    "or register one (register_signature, in Python: this command reads a trace with the "
    "built-in signatures only; profile it with profile_trace(path, signatures=[...]), write "
    "the profile with write_profile_md, and give that file to inspect)"
)


def _cli_notes(profile: WorkloadProfile) -> WorkloadProfile:
    """``profile`` with its notes worded for the command line: a signature registered in
    Python is not seen by this process, so the note for an op no signature names says how
    to profile it with one."""
    import attrs

    notes = tuple(
        note[: -len(_REGISTER)] + _REGISTER_HERE if note.endswith(_REGISTER) else note
        for note in profile.notes
    )
    return attrs.evolve(profile, notes=notes) if notes != profile.notes else profile


def _refuse_writing_over(path: Path, write: str | None) -> None:
    """Refuse a ``--write`` path that is the file read, ``path``, before anything is read.

    ``write_profile_md`` refuses the trace a profile names as its source; a profile read
    back names the trace it was made from instead, and was written over itself.
    """
    from kernelopt._errors import InputError, expected
    from kernelopt.workload._validators import is_file

    if write is None or not is_file(path) or not is_file(Path(write)):
        return
    try:
        same = path.samefile(write)
    except OSError:  # gone or unreadable since: the reader or the writer says so
        return
    if same:
        what = "the workload profile" if path.suffix.lower() == ".md" else "the trace"
        raise InputError(
            expected(
                "a path other than the file the profile was read from",
                f"{write}, {what} given to read (writing would replace it)",
                where="--write",
            )
        )


# The options only one trace format reads, and what that format is called in errors.
_FORMAT_ONLY = (
    ("--definition", "definition", "flashinfer-bench", "FlashInfer-Bench workloads"),
    ("--time", "time", "torch-profiler", "a PyTorch profiler trace"),
)


def _refuse_unread(args: argparse.Namespace, format: str, path: Path) -> None:
    """Refuse an option the trace's format does not read: a JSONL trace has one duration
    per call and its own shapes, so ``--time`` or ``--definition`` would be dropped."""
    from kernelopt._errors import InputError, expected

    for flag, dest, reader, name in _FORMAT_ONLY:
        if dest in options_given(args) and format != reader:
            raise InputError(
                expected(f"{flag} only with {name}", f"it with the {format} trace {path}")
            )

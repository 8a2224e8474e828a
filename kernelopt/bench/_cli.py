"""`kernelopt bench`: measure device ceilings and run the MLA decode trial matrix.

Subcommands::

    kernelopt bench ceilings [--json] [--refresh]
    kernelopt bench mla --trial-matrix [--heads 128,16] [--extra-point b=64,s=1,t=8192]
                        [--json] [--out FILE]

This module imports nothing heavy: torch loads when a subcommand runs.
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path
from typing import Any

from kernelopt._checks import ascii_digits
from kernelopt._cli_util import (
    EXIT_FINDINGS,
    EXIT_OK,
    add_json_flag,
    exit_codes,
    missing_command,
    output_path,
    print_json,
)
from kernelopt._errors import DeviceError, InputError, expected
from kernelopt._words import and_list

_HELP = "measure this GPU's ceilings and time kernelopt's MLA decode kernels"
_DESCRIPTION = (
    "Measure this GPU's ceilings (copy bandwidth, bf16 matmul rate) and time kernelopt's "
    "MLA decode kernels. To time, check and place kernels of your own on the roofline, use "
    "the Python API (kernelopt.bench: measure, Roofline, compare; see docs/bench.md)."
)
_NO_CUDA = "no CUDA device"


def register(subparsers: Any) -> None:
    """Register the `bench` subcommand and its own subcommands."""
    parser = subparsers.add_parser(
        "bench",
        help=_HELP,
        description=_DESCRIPTION,
        epilog=exit_codes(findings="a trial point failed (`bench mla`)", usage=_NO_CUDA)
        + "\n\nExamples, on a machine with an NVIDIA GPU:\n"
        "  kernelopt bench ceilings\n"
        "  kernelopt bench mla --trial-matrix --heads 16 --out mla_decode.jsonl",
    )
    parser.set_defaults(handler=lambda _args: missing_command(parser))
    commands = parser.add_subparsers(dest="bench_command", metavar="COMMAND")

    ceilings = commands.add_parser(
        "ceilings",
        help="measure (or read cached) copy bandwidth and bf16 matmul rate of this GPU",
        description=(
            "Measure this GPU's device-to-device copy bandwidth (bytes read plus written) and "
            "bf16 8192^3 matmul rate on random data, cached per GPU in "
            "$KERNELOPT_CACHE_DIR or ~/.cache/kernelopt/ceilings.json. Needs CUDA."
        ),
        epilog=exit_codes(usage=_NO_CUDA) + "\n\nExamples:\n  kernelopt bench ceilings --json",
    )
    add_json_flag(ceilings, warnings="warnings go to stderr")
    ceilings.add_argument(
        "--refresh", action="store_true", help="measure again, ignoring the cache"
    )
    ceilings.set_defaults(handler=_ceilings)

    mla = commands.add_parser(
        "mla",
        help="time kernelopt's MLA decode kernels at the trial matrix",
        description=(
            "Time kernelopt.kernels.mla at the decode (b=32 s=1 t=4096) and speculative "
            "(b=32 s=16 t=4096) points for each head count, with roofline floors and the "
            "error against the float64 reference; b is halved on CUDA OOM. Needs CUDA."
        ),
        epilog=exit_codes(
            "every point ran and was correct",
            "a point failed or was incorrect",
            "neither --trial-matrix nor --extra-point, a bad point or --out; " + _NO_CUDA,
        )
        + "\n\nExamples:\n"
        "  kernelopt bench mla --trial-matrix --heads 16 --out mla_decode.jsonl\n"
        "  kernelopt bench mla --extra-point b=64,s=1,t=8192,h=16 --json",
    )
    mla.add_argument(
        "--trial-matrix",
        action="store_true",
        help="run the default trial matrix (needed unless --extra-point is given)",
    )
    mla.add_argument(
        "--heads", default="128,16", help="query head counts, comma-separated (default 128,16)"
    )
    mla.add_argument(
        "--extra-point",
        action="append",
        default=[],
        metavar="b=B,s=S,t=T[,h=H]",
        help="an extra trial point, at every --heads count unless it names h (repeatable)",
    )
    add_json_flag(mla, warnings="warnings go to stderr")
    mla.add_argument(
        "--out",
        metavar="FILE",
        type=output_path,
        help="append one JSONL row per timed point to FILE (default: write no file)",
    )
    mla.set_defaults(handler=_mla)


def _ceilings(args: argparse.Namespace) -> int:
    from kernelopt.bench.roofline import ceilings_path, measure_ceilings

    found = measure_ceilings(refresh=args.refresh)
    if args.json:
        print_json(
            {
                "gpu": found.gpu,
                "copy_bytes_per_s": found.copy_bytes_per_s,
                "matmul_flop_per_s": found.matmul_flop_per_s,
                "ridge_flop_per_byte": found.ridge,
                "measured_at": found.measured_at,
                "torch": found.torch,
                "cache": str(ceilings_path()),
            }
        )
        return EXIT_OK
    print(f"GPU:     {found.gpu}")
    print(f"copy:    {found.copy_tb_s:.3f} TB/s (read + write, {found.copy_bytes} B buffer)")
    print(f"matmul:  {found.matmul_tflop_s:.1f} TFLOP/s (bf16 {found.matmul_n}^3, random data)")
    print(f"ridge:   {found.ridge:.1f} FLOP/byte")
    print(f"measured {found.measured_at or 'unknown'}; cache {ceilings_path()}")
    return EXIT_OK


_AXES = ("b", "s", "t", "h")


def _parse_point(text: str) -> Any:
    from kernelopt.bench.trials import TrialPoint

    values: dict[str, int] = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        key, sep, value = item.partition("=")
        if not sep or not ascii_digits(value.strip()):
            raise InputError(expected("a point like b=32,s=1,t=4096,h=16", repr(text)))
        if key.strip() in values:  # the last one winning would time another point
            raise InputError(expected("a point naming each of b, s, t, h once", repr(text)))
        values[key.strip()] = int(value)
    missing = {"b", "s", "t"} - set(values)
    if missing:
        raise InputError(expected("a point with b, s and t", f"{text!r} (no {sorted(missing)})"))
    # The MLA inputs read h alone: another axis would label the point and change nothing.
    unknown = sorted(set(values) - set(_AXES))
    if unknown:
        raise InputError(expected(f"axes among {', '.join(_AXES)}", repr(unknown[0])))
    if values.get("h", 1) < 1:
        raise InputError(expected("an integer >= 1", values["h"], where="h"))
    extra = {k: v for k, v in values.items() if k not in ("b", "s", "t")}
    return TrialPoint(b=values["b"], s=values["s"], t=values["t"], name="extra", extra=extra)


def _heads(text: str) -> tuple[int, ...]:
    parts = [part.strip() for part in text.split(",") if part.strip()]
    if not parts or not all(ascii_digits(part) and int(part) > 0 for part in parts):
        raise InputError(expected("head counts like 128,16", repr(text), where="--heads"))
    heads = tuple(int(part) for part in parts)
    twice = next((h for i, h in enumerate(heads) if h in heads[:i]), None)
    if twice is not None:
        # Each point would be timed again at that count, and its rows appended twice.
        got = f"{text!r} ({twice} twice)"
        raise InputError(expected("each head count once", got, where="--heads"))
    return heads


def _points(matrix: bool, heads: tuple[int, ...], texts: list[str]) -> list[Any]:
    """The trial points to time: the matrix's if asked, then each ``--extra-point``.

    A point without ``h`` runs at every head count. A point reached twice is refused: it
    would be timed twice and its rows appended twice, which the readers of the rows refuse.
    """
    from kernelopt.bench.trials import trial_matrix

    points = list(trial_matrix(axes={"h": heads})) if matrix else []
    # Where each point came from: the matrix point's name, or the --extra-point text.
    origins: dict[str, tuple[str, str]] = {str(p): ("matrix", p.name) for p in points}
    for text in texts:
        point = _parse_point(text)
        if "h" in point.extra:
            made = [point]
        else:
            made = list(
                trial_matrix(extra_points=[point], axes={"h": heads}, include_defaults=False)
            )
        for each in made:
            kind, name = origins.get(str(each), ("", ""))
            if kind == "matrix":
                got = f"{text!r}, the matrix's {name} point {each}"
                what = "extra points the trial matrix does not time already"
                raise InputError(expected(what, got, where="--extra-point"))
            if kind:
                got = f"{text!r} twice" if name == text else f"{name!r} and {text!r}, both {each}"
                raise InputError(expected("each point once", got, where="--extra-point"))
            origins[str(each)] = ("extra", text)
        points += made
    return points


def _finite_or_null(row: dict[str, Any]) -> dict[str, Any]:
    """``row`` with NaN and infinities as None: JSON has neither (``Infinity`` is refused
    by strict readers), and the error of a non-finite output is no number."""
    return {
        key: None if isinstance(value, float) and not math.isfinite(value) else value
        for key, value in row.items()
    }


def _check_out(out: str) -> None:
    """Refuse an ``--out`` that rows cannot be appended to, before the (long) run.

    An existing file that ``append_rows`` would refuse (not UTF-8, a last line that is not
    a whole row) is refused here too: found at the end, it cost every row the run timed.
    """
    from kernelopt.bench.records import check_appendable

    place = Path(out)
    if place.is_dir():
        raise InputError(expected("a JSONL file to append to", f"{out}, a folder", where="--out"))
    for parent in place.parents:
        if parent.exists():
            if not parent.is_dir():
                raise InputError(
                    expected(
                        "a JSONL file to append to",
                        f"{out}, under the file {parent}",
                        where="--out",
                    )
                )
            break
    check_appendable(place)


def _refuse_without_cuda(args: argparse.Namespace, points: list[Any]) -> None:
    """Refuse a run on a machine where torch sees no CUDA device, naming what was asked.

    ``mla_trial_matrix`` says why torch sees no device and what to do; to someone who
    asked only for an extra point, "the MLA decode kernels at 1 point" does not say which.
    The library's refusal is shown with the points named by the options that asked for
    them (the trial matrix, the ``--extra-point`` texts).

    Raises
    ------
    DeviceError
        Where torch sees no CUDA device (exit 2); returns where it sees one.
    """
    from kernelopt.bench.mla import no_cuda_error
    from kernelopt.bench.timer import cuda_available

    if cuda_available():
        return
    asked = ["the trial matrix"] if args.trial_matrix else []
    asked += [f"--extra-point {text!r}" for text in args.extra_point]
    raise no_cuda_error(len(points), asked=and_list(asked))


def _mla(args: argparse.Namespace) -> int:
    if not args.trial_matrix and not args.extra_point:
        raise InputError(expected("--trial-matrix and/or --extra-point", "neither"))
    heads = _heads(args.heads)
    points = _points(args.trial_matrix, heads, args.extra_point)
    if args.out:
        _check_out(args.out)
    from kernelopt.bench.mla import mla_trial_matrix
    from kernelopt.bench.records import append_rows

    try:
        results = mla_trial_matrix(points=points)
    except DeviceError:
        _refuse_without_cuda(args, points)  # in the command's words, where torch sees none
        raise
    if args.out:
        append_rows(args.out, [r.bench_row() for r in results if r.trial.measurement is not None])
    rows = [r.as_dict() for r in results]
    if args.json:
        print_json([_finite_or_null(row) for row in rows])
    else:
        header = f"{'point':<24} {'impl':<20} {'median us':>10} {'floor us':>9} {'of floor':>8}"
        print(f"{header} {'rel err':>9}  note")
        for row in rows:
            where = f"{row['point']:<24} {row['impl']:<20}"
            if row["error"]:
                print(f"{where} failed: {row['error']}")
                continue
            err = "" if row["rel_err"] is None else format(row["rel_err"], ".2e")
            print(
                f"{where} {row['median_us']:>10.2f} {row['floor_us']:>9.2f} "
                f"{(row['floor_pct'] or 0.0):>7.1f}% {err:>9}  {row['note']}"
            )
    return EXIT_FINDINGS if any(r.trial.error for r in results) else EXIT_OK

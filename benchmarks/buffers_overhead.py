"""Per-call cost of allocating a buffer with torch.empty versus taking a persistent one.

What it times, for a tiny, a small and a large shape, on CUDA and on CPU:

- ``torch.empty``: a fresh tensor every call (the caching allocator plus dispatch).
- ``pool.get``: a hit in a BufferPool (dictionary lookup and LRU touch).
- ``scope.empty``: a hit in a BufferScope (the same plus the name-to-tag step).
- ``launcher/check`` and ``launcher/unchecked``: a ``@persistent_buffers`` launcher that
  returns its persistent output, with and without the returned-buffer check.

Two clocks. ``host-perf-counter``: the host's perf_counter around many calls of the bare
request (the host overhead a launcher pays). ``cuda-events``: CUDA events around many
calls of request-plus-fill, the work a launcher does; for small shapes the GPU idles
between fills and this shows whether the request's host cost reaches the GPU timeline.
Each row is the median over repeats of (elapsed / calls), in microseconds.

Usage: ``python benchmarks/buffers_overhead.py [--out FILE] [--device all|cuda|cpu]``
(default ``benchmarks/results/buffers_overhead.jsonl``, ``all``). Prints a table last and
writes one JSON row per measurement, replacing ``--out``: the file is one run's table, so a
second run's rows are not appended to it. A file that holds anything but this script's rows
(a BenchRow file, say) is refused before anything is timed, and left as it is. Runs in well
under a minute.
Without a CUDA device, ``all`` and ``cuda`` refuse (exit 2); ``--device cpu`` times the CPU
alone. A run on one device writes its rows only to an ``--out`` given on the command line:
the default file holds the rows of both devices, and half of them must not replace it.
"""

from __future__ import annotations

import argparse
import codecs
import datetime
import json
import statistics
import time
from collections.abc import Callable
from pathlib import Path

import attrs
import torch
from _common import no_cuda, refuse_unwritable_out, scripts_commit

from kernelopt._cli_util import count_at_least_one, int_at_least
from kernelopt._errors import expected
from kernelopt._fileio import atomic_write_text
from kernelopt.buffers import BufferPool, BufferScope, persistent_buffers

SHAPES: dict[str, tuple[tuple[int, ...], torch.dtype]] = {
    # lse of a decode step: b=32 sequences x h=16 heads, fp32 (2 KiB)
    "tiny": ((32, 16), torch.float32),
    # out of an MLA decode step: b=32, s=1, h=16, d_v=512, bf16 (512 KiB)
    "small": ((32, 1, 16, 512), torch.bfloat16),
    # a prefill-sized activation: 8192 x 8192 bf16 (128 MiB)
    "large": ((8192, 8192), torch.bfloat16),
}
METHODS = ("torch.empty", "pool.get", "scope.empty", "launcher/check", "launcher/unchecked")


@attrs.frozen(kw_only=True)
class OverheadRow:
    """One measurement: per-call time of one way to get a buffer."""

    op: str
    impl: str
    shape_name: str
    shape: tuple[int, ...]
    dtype: str
    nbytes: int
    device: str
    clock: str  # "host-perf-counter" | "cuda-events"
    work: str  # "request" | "request+fill"
    calls: int
    repeats: int
    median_us: float
    p20_us: float
    p80_us: float
    gpu: str | None
    torch: str
    commit: str | None
    timestamp: str


def _requesters(
    device: torch.device, shape: tuple[int, ...], dtype: torch.dtype
) -> dict[str, Callable[[], torch.Tensor]]:
    pool = BufferPool()
    scope = BufferScope("bench", pool=pool)

    def launch(buffers: BufferScope) -> torch.Tensor:
        return buffers.empty("out", shape, dtype, device)

    checked = persistent_buffers(pool=pool, name="checked")(launch)
    unchecked = persistent_buffers(pool=pool, name="unchecked", on_return="unchecked")(launch)
    requesters: dict[str, Callable[[], torch.Tensor]] = {
        "torch.empty": lambda: torch.empty(shape, dtype=dtype, device=device),
        "pool.get": lambda: pool.get(shape, dtype, device, tag="bench"),
        "scope.empty": lambda: scope.empty("ws", shape, dtype, device),
        "launcher/check": checked,
        "launcher/unchecked": unchecked,
    }
    # What is timed must be what is claimed: hits return one address, empty may not.
    for name in METHODS[1:]:
        assert requesters[name]().data_ptr() == requesters[name]().data_ptr(), name
    return requesters


def _host_us(
    request: Callable[[], torch.Tensor], calls: int, repeats: int, sync: bool
) -> list[float]:
    samples = []
    for _ in range(repeats):
        if sync:
            torch.cuda.synchronize()
        start = time.perf_counter_ns()
        for _ in range(calls):
            request()
        samples.append((time.perf_counter_ns() - start) / calls / 1e3)
    return samples


def _events_us(request: Callable[[], torch.Tensor], calls: int, repeats: int) -> list[float]:
    samples = []
    for _ in range(repeats):
        # torch.cuda.Event.__new__ has no annotations in torch's sources, so strict mypy
        # reads the typed class's constructor as an untyped call.
        begin = torch.cuda.Event(enable_timing=True)  # type: ignore[no-untyped-call]
        end = torch.cuda.Event(enable_timing=True)  # type: ignore[no-untyped-call]
        torch.cuda.synchronize()
        begin.record()
        for _ in range(calls):
            request().fill_(1.0)
        end.record()
        end.synchronize()
        samples.append(begin.elapsed_time(end) * 1e3 / calls)
    return samples


def _row(
    samples: list[float],
    *,
    impl: str,
    shape_name: str,
    device: torch.device,
    clock: str,
    work: str,
    calls: int,
    gpu: str | None,
    commit: str | None,
) -> OverheadRow:
    shape, dtype = SHAPES[shape_name]
    q = statistics.quantiles(samples, n=5)
    return OverheadRow(
        op="buffers_overhead",
        impl=impl,
        shape_name=shape_name,
        shape=shape,
        dtype=str(dtype),
        nbytes=torch.Size(shape).numel() * dtype.itemsize,
        device=device.type,
        clock=clock,
        work=work,
        calls=calls,
        repeats=len(samples),
        median_us=statistics.median(samples),
        p20_us=q[0],
        p80_us=q[3],
        gpu=gpu,
        torch=torch.__version__,
        commit=commit,
        timestamp=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
    )


def run(calls: int, repeats: int, devices: list[torch.device]) -> list[OverheadRow]:
    rows = []
    commit = scripts_commit()
    for device in devices:
        cuda = device.type == "cuda"
        gpu = torch.cuda.get_device_name(device) if cuda else None
        for shape_name, (shape, dtype) in SHAPES.items():
            requesters = _requesters(device, shape, dtype)
            for impl in METHODS:
                request = requesters[impl]
                for _ in range(50):  # warm-up: allocator blocks, dispatch caches
                    request()
                host = _host_us(request, calls, repeats, sync=cuda)
                rows.append(
                    _row(
                        host,
                        impl=impl,
                        shape_name=shape_name,
                        device=device,
                        clock="host-perf-counter",
                        work="request",
                        calls=calls,
                        gpu=gpu,
                        commit=commit,
                    )
                )
                if cuda:
                    # Fill time grows with size; fewer calls keep large shapes short.
                    n = calls if shape_name != "large" else max(calls // 20, 10)
                    filled = request().fill_(2.0)
                    assert float(filled.view(-1)[0]) == 2.0
                    del filled
                    events = _events_us(request, n, repeats)
                    rows.append(
                        _row(
                            events,
                            impl=impl,
                            shape_name=shape_name,
                            device=device,
                            clock="cuda-events",
                            work="request+fill",
                            calls=n,
                            gpu=gpu,
                            commit=commit,
                        )
                    )
    return rows


def table(rows: list[OverheadRow]) -> str:
    groups: dict[tuple[str, str, str], dict[str, float]] = {}
    for row in rows:
        groups.setdefault((row.device, row.shape_name, row.clock), {})[row.impl] = row.median_us
    header = f"{'device':6} {'shape':6} {'clock':18}" + "".join(f"{m:>19}" for m in METHODS)
    lines = ["median per-call time (us)", header]
    for (device, shape_name, clock), by_impl in groups.items():
        cells = "".join(f"{by_impl[m]:>19.3f}" for m in METHODS)
        lines.append(f"{device:6} {shape_name:6} {clock:18}{cells}")
    return "\n".join(lines)


DEFAULT_OUT = Path("benchmarks/results/buffers_overhead.jsonl")
_FIELDS = frozenset(attrs.fields_dict(OverheadRow))
_EMPTY = (b"", codecs.BOM_UTF8, codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)


def foreign_rows(path: Path) -> str | None:
    """Why ``path`` must not be replaced by this script's rows, or None where it may.

    A missing or empty file may be, and one whose every line is a row this script wrote
    (``op`` ``"buffers_overhead"``, no field an ``OverheadRow`` lacks; rows kept from
    before ``commit`` existed lack it). Anything else (BenchRows, notes, another script's
    records) would be lost without a word: the reason names the first such line.

    Parameters
    ----------
    path : pathlib.Path
        The ``--out`` file.

    Returns
    -------
    str or None
        ``"rows.jsonl line 1 is no row of buffers_overhead.py (op 'mla_decode')"`` and the
        like, or None.
    """
    if not path.is_file():
        return None
    raw = path.read_bytes()
    if raw in _EMPTY:
        return None  # a byte-order mark alone, as an editor saves an empty file: nothing lost
    try:
        lines = raw.decode("utf-8").splitlines()
    except UnicodeDecodeError:
        return f"{path} is not UTF-8 text, so holds no row of buffers_overhead.py"
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            record = None
        if not isinstance(record, dict):
            return f"{path} line {number} is no JSON object"
        if record.get("op") != "buffers_overhead":
            return (
                f"{path} line {number} is no row of buffers_overhead.py (op {record.get('op')!r})"
            )
        unknown = sorted(set(record) - _FIELDS)
        if unknown:
            return f"{path} line {number} has fields no row of buffers_overhead.py has: {unknown}"
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--out",
        type=Path,
        default=None,
        help=f"JSONL file the rows replace (default {DEFAULT_OUT} with --device all; with "
        "--device cuda or cpu, rows are written only where --out says); a file holding "
        "anything but this script's rows is refused",
    )
    parser.add_argument(
        "--calls", type=count_at_least_one, default=2000, help="calls per timed repeat"
    )
    # Two repeats at least: p20 and p80 need two.
    parser.add_argument(
        "--repeats",
        type=int_at_least(2),
        default=7,
        help="timed repeats per row, each of --calls calls; the row is their median (7)",
    )
    parser.add_argument(
        "--device",
        choices=("all", "cuda", "cpu"),
        default="all",
        help="all (CUDA and CPU; needs a CUDA device), cuda, or cpu (the CPU alone)",
    )
    args = parser.parse_args(argv)
    out = args.out
    if out is None and args.device == "all":
        out = DEFAULT_OUT
    if out is not None:
        refuse_unwritable_out(parser, out, writes="whole-file")
        # Checked before the timings: replacing the file at the end lost whatever it held.
        foreign = foreign_rows(out)
        if foreign is not None:
            parser.error(
                "argument --out: "
                + expected(
                    "a new file, or a file of buffers_overhead.py's rows, to replace",
                    f"{foreign}; name another --out, or move that file away",
                )
            )
    # Without a GPU, --device all would write CPU rows alone over a file of both.
    if args.device in ("all", "cuda") and no_cuda(
        "buffers_overhead",
        what=f"a CUDA device for --device {args.device}",
        instead="time the CPU alone with --device cpu",
    ):
        return 2
    devices = []
    if args.device in ("all", "cuda"):
        devices.append(torch.device("cuda", torch.cuda.current_device()))
    if args.device in ("all", "cpu"):
        devices.append(torch.device("cpu"))
    rows = run(args.calls, args.repeats, devices)
    if out is None:
        print(f"{len(rows)} rows not written (--device {args.device} without --out)")
    else:
        atomic_write_text(out, "".join(json.dumps(attrs.asdict(r)) + "\n" for r in rows))
        print(f"wrote {len(rows)} rows to {out}")
    print(table(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

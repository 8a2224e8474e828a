"""What every step of the MLA decode walk-through shares: arguments, shapes, inputs, the log.

The steps (``01_…`` to ``08_…``) rebuild an MLA decode kernel the way an optimization loop
would, each writing into one log directory that the next step reads::

    LOG/
      CLAUDE.md                      the kernel, its baseline, the trial points, the rules
      kernels/mla_decode.py          the kernel as it stands (a copy of the strategy in use)
      kernels/mla_ref.py             the float64 reference it is checked against
      experiments/                   workload_profile.md, summary.md, profile.md, exp_N/…
      runs/                          the call trace and the benchmark rows (JSONL)
      docs/knowledge/                the knowledge tree LEARN writes (over the built-ins)
      docs/kernels/mla_decode.md     the kernel's devlog

Two ways to run every step:

* **GPU** (automatic when CUDA is present, or ``--gpu``): bf16 at the trial matrix,
  b = 32, t = 4096, page 64, s_q ∈ {1, 16} × h_q ∈ {128, 16}. Timings are CUDA events.
* **CPU** (no CUDA, or ``--cpu``): the Triton interpreter on tiny shapes in float16 (the
  interpreter's bf16 ``tl.dot`` is wrong). Timings are host timings of the interpreter:
  they show that the machinery works and say nothing about kernel speed.

This module must be imported before triton: :func:`setup` sets ``TRITON_INTERPRET=1`` for
the CPU path, and the interpreter is chosen when triton is first imported.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypedDict

if TYPE_CHECKING:
    import torch

    from kernelopt.bench import (
        BenchRow,
        Ceilings,
        Comparison,
        Measurement,
        Roofline,
        Timer,
        TrialPoint,
        Verdict,
    )
    from kernelopt.experiments import ResultRow
    from kernelopt.kernels.mla import MLADecodePlan, Strategy
    from kernelopt.workflow import DevlogUpdate

DtypeName = Literal["bfloat16", "float16"]  # the GPU path's dtype, the CPU path's


class CompareLimits(TypedDict, total=False):
    """Keyword arguments of ``kernelopt.bench.compare`` that bound its sampling."""

    min_pairs: int
    max_pairs: int
    max_time_ms: float


HERE = Path(__file__).resolve().parent
MARKER = ".mla-decode-example.json"  # says a directory is a log these steps own
DEFAULT_LOG = Path(tempfile.gettempdir()) / "kernelopt-mla-decode-example"

# DeepSeek-V3: softmax scale 1 / sqrt(128 + 64) (nope + rope head dims of the unabsorbed form).
SOFTMAX_SCALE = 192**-0.5
D_QK, D_V = 576, 512

# Experiment numbers of the story, in the order the steps write them.
EXP_EAGER, EXP_NAIVE, EXP_SPLIT_KV, EXP_GRAPHS, EXP_HOPPER, EXP_FP8 = 1, 2, 3, 4, 5, 6

# The baseline of experiment 1: torch eager, the one version Triton does not run (on the
# CPU path it runs as ordinary torch on the CPU, not in the Triton interpreter).
EAGER_IMPL = "torch_eager"
EAGER_KERNEL = "examples/mla_decode/_steps.py (eager_decode, over the cache dense_kv gathers)"

# This project's own H200 measurements (shared/anchors/h200-2026-12-02.json): a device-to-
# device copy at 4.25 TB/s counting bytes read plus written, and a bf16 8192³ matmul at
# 694 TFLOP/s. Reference values only: a CPU run has no ceilings of its own.
H200_COPY_BYTES_PER_S = 4.2497501013921815e12
H200_MATMUL_FLOP_PER_S = 693.6596691456391e12
H200_SOURCE = "shared/anchors/h200-2026-12-02.json (this project's H200 measurement)"

STEPS = {
    1: "01_reference_and_workload.py",
    2: "02_naive_kernel.py",
    3: "03_diagnose.py",
    4: "04_split_kv.py",
    5: "05_buffers_and_graphs.py",
    6: "06_hopper_kernel.py",
    7: "07_learn.py",
    8: "08_fp8_cache.py",
}
# A file each step leaves behind: a later step that finds it missing runs the step first,
# and the step itself refuses to run again where it exists (a log never rewrites a result).
PRODUCTS = {
    1: "experiments/workload_profile.md",
    2: f"experiments/exp_{EXP_NAIVE}/result.md",
    3: f"experiments/exp_{EXP_SPLIT_KV}/plan.md",
    4: f"experiments/exp_{EXP_SPLIT_KV}/result.md",
    5: f"experiments/exp_{EXP_GRAPHS}/result.md",
    6: f"experiments/exp_{EXP_HOPPER}/result.md",
    7: "docs/kernels/mla_decode.md",
    8: f"experiments/exp_{EXP_FP8}/result.md",
}


@dataclass(frozen=True)
class Setup:
    """One step's run: where it writes, on what device, at which shapes.

    Attributes
    ----------
    step : int
        Which step is running (1 to 8).
    log : Path
        The log directory (``--log``).
    gpu : bool
        True on the GPU path (bf16, trial matrix), False on the CPU path (interpreter).
    device : str
        ``"cuda"`` or ``"cpu"``.
    dtype_name : {"bfloat16", "float16"}
        ``"bfloat16"`` on the GPU, ``"float16"`` on the CPU.
    page : int
        Rows per KV-cache page.
    args : argparse.Namespace
        The parsed command line.
    """

    step: int
    log: Path
    gpu: bool
    device: str
    dtype_name: DtypeName
    page: int
    args: argparse.Namespace

    @property
    def dtype(self) -> torch.dtype:
        """The query/cache dtype of this run."""
        import torch

        return torch.bfloat16 if self.dtype_name == "bfloat16" else torch.float16

    @property
    def experiments(self) -> Path:
        """``LOG/experiments``: what kernelopt reads and writes as the experiment log."""
        return self.log / "experiments"

    @property
    def runs(self) -> Path:
        """``LOG/runs``: the call trace and benchmark rows (JSONL)."""
        return self.log / "runs"

    @property
    def bench_rows(self) -> Path:
        """``LOG/runs/bench.jsonl``: one ``BenchRow`` per timing, raw samples kept."""
        return self.runs / "bench.jsonl"

    @property
    def knowledge(self) -> Path:
        """``LOG/docs/knowledge``: the knowledge tree LEARN writes, merged over the built-ins."""
        return self.log / "docs" / "knowledge"

    @property
    def devlog(self) -> Path:
        """``LOG/docs/kernels/mla_decode.md``: the kernel's devlog."""
        return self.log / "docs" / "kernels" / "mla_decode.md"

    @property
    def where(self) -> str:
        """The device the Triton kernels run on, in words, for results and evidence."""
        return self.where_of("triton")

    def where_of(self, impl: str) -> str:
        """The device ``impl`` runs on, in words, for results and evidence.

        The GPU's name on the GPU path. On the CPU path ``CPU (Triton interpreter)`` for the
        Triton kernels, so that nobody takes their times for a GPU's, and ``CPU`` for torch
        eager (:data:`EAGER_IMPL`), which runs as ordinary torch, not in the interpreter.
        """
        if self.gpu:
            import torch

            return torch.cuda.get_device_name()
        return "CPU" if impl == EAGER_IMPL else "CPU (Triton interpreter)"

    def points(self) -> tuple[TrialPoint, ...]:
        """The trial points of this run.

        GPU: the trial matrix, decode-like b=32 s=1 t=4096 and speculative-like b=32 s=16
        t=4096, each with h=128 (compute-bound at s=16) and h=16 (memory-bound at s=1).
        CPU: the same two kinds of point, shrunk so the interpreter finishes in seconds.
        """
        from kernelopt.bench import TrialPoint, trial_matrix

        if self.gpu:
            return trial_matrix(axes={"h": (128, 16)})
        return (
            TrialPoint(name="decode", b=2, s=1, t=128, extra={"h": 16}),
            TrialPoint(name="speculative", b=2, s=4, t=128, extra={"h": 16}),
        )

    def timer(self) -> Timer:
        """Timing settings shared by every version this run compares.

        GPU: kernelopt's defaults (CUDA events, L2 flushed before each call, warm-up by
        time, noise-based stopping). CPU: a handful of samples, enough to exercise the
        machinery; an interpreter call takes a fraction of a second.
        """
        from kernelopt.bench import Timer

        if self.gpu:
            return Timer()
        return Timer(warmup_ms=1.0, min_samples=3, max_samples=5, max_time_ms=1000.0)

    def compare_limits(self) -> CompareLimits:
        """Pairs and time ``kernelopt.bench.compare`` may spend (defaults on the GPU)."""
        if self.gpu:
            return {}
        # Four pairs at least: a judge of the raw samples later (LEARN) needs them.
        return {"min_pairs": 4, "max_pairs": 8, "max_time_ms": 20000.0}

    def ceilings(self) -> Ceilings | None:
        """This device's measured ceilings (GPU, cached after the first run), or None (CPU)."""
        if not self.gpu:
            return None
        from kernelopt.bench import measure_ceilings

        return measure_ceilings()


def banner(text: str) -> None:
    """Print a section heading of the walk-through."""
    print(f"\n== {text}")


def verdict_words(result: Comparison, *, candidate: str, baseline: str) -> str:
    """A verdict of ``kernelopt.bench.compare`` with the two versions named: the ratio its
    summary shows is the candidate's time over the baseline's, the inverse of the speedup.

    Parameters
    ----------
    result : Comparison
        The A/B verdict.
    candidate, baseline : str
        What the two timed versions are called.
    """
    return f"{result.summary()} ({candidate} time / {baseline} time; speedup {result.speedup:.3g}x)"


def verdict_line(points: Sequence[TrialPoint], verdicts: Sequence[Verdict]) -> str:
    """An experiment's Verdict line over several points: one word first, as the log's
    readers take it, then each point's (``FAST (decode h=16: FAST, decode h=128: SAME)``).

    The word is FAST when some point is FAST and none SLOW, SLOW when some point is SLOW and
    none FAST, SAME when every point is SAME, and UNCLEAR otherwise (the points disagree,
    or some could not be told apart from noise): the status, not this word, says what was
    kept when they disagree.

    Parameters
    ----------
    points : sequence of TrialPoint
        The compared points, each with its head count in ``extra["h"]``.
    verdicts : sequence of Verdict
        One verdict a point, in the same order.
    """
    from kernelopt.bench import Verdict

    if Verdict.FAST in verdicts and Verdict.SLOW not in verdicts:
        word = Verdict.FAST
    elif Verdict.SLOW in verdicts and Verdict.FAST not in verdicts:
        word = Verdict.SLOW
    elif all(v is Verdict.SAME for v in verdicts):
        word = Verdict.SAME
    else:
        word = Verdict.UNCLEAR
    each = ", ".join(
        f"{p.name} h={p.extra['h']}: {v.value}" for p, v in zip(points, verdicts, strict=True)
    )
    return f"{word.value} ({each})"


def status_of(verdicts: Sequence[Verdict], speedups: Sequence[float]) -> str:
    """The status of an experiment judged by A/Bs at several points (steps 4, 6 and 8).

    KEPT when some point is FAST and none is SLOW; NEUTRAL when every point is SAME or
    UNCLEAR (a change inside the noise); otherwise the verdicts disagree, and the
    geometric mean of the speedups decides between KEPT and REVERTED.

    Parameters
    ----------
    verdicts : sequence of Verdict
        One verdict a point.
    speedups : sequence of float
        The A/Bs' speedups (baseline time over candidate time), one a point.
    """
    import statistics

    from kernelopt.bench import Verdict

    if Verdict.FAST in verdicts and Verdict.SLOW not in verdicts:
        return "KEPT"
    if all(v in (Verdict.SAME, Verdict.UNCLEAR) for v in verdicts):
        return "NEUTRAL"
    return "KEPT" if statistics.geometric_mean(speedups) > 1.0 else "REVERTED"


def judged_speedup(result: Comparison) -> Comparison | None:
    """The A/B to record as a result row's speedup: ``result`` when FAST or SLOW, else None.

    A SAME or UNCLEAR verdict says any difference lies within the noise; its point ratio,
    recorded as the row's speedup, would read as a gain (or a loss) that the A/B did not
    find, and ``diagnose`` takes a row's speedup for the gain of a new trial point.

    Parameters
    ----------
    result : Comparison
        The A/B at one point.
    """
    from kernelopt.bench import Verdict

    return result if result.verdict in (Verdict.FAST, Verdict.SLOW) else None


def devlog_update_words(update: DevlogUpdate) -> str:
    """What an update of the devlog changed: ``"1 row added, 0 replaced"``.

    Parameters
    ----------
    update : DevlogUpdate
        What ``kernelopt.workflow.update_devlog`` returned.
    """
    from kernelopt._words import count_text

    return f"{count_text(len(update.added), 'row')} added, {len(update.replaced)} replaced"


def clip(text: str, width: int) -> str:
    """``text`` cut to at most ``width`` characters, ending in ``…`` where it was cut."""
    return text if len(text) <= width else text[: width - 1].rstrip() + "…"


def cpu_note(setup: Setup) -> None:
    """Say, once per step, what CPU timings are worth."""
    if not setup.gpu:
        print(
            "   [CPU] These are host timings of the Triton interpreter on tiny shapes: they "
            "test the machinery and say nothing about how fast the kernel is on a GPU."
        )


def setup(step: int, description: str, argv: Sequence[str] | None = None) -> Setup:
    """Parse the command line, pick the device, prepare the log; call before importing triton.

    Parameters
    ----------
    step : int
        The step number (1 to 8).
    description : str
        The step's docstring, shown whole by ``--help``.
    argv : sequence of str, optional
        Arguments (default ``sys.argv[1:]``).
    """
    parser = argparse.ArgumentParser(
        description=description.strip(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--log",
        type=Path,
        default=DEFAULT_LOG,
        help=f"log directory shared by the steps (default {DEFAULT_LOG})",
    )
    device = parser.add_mutually_exclusive_group()
    device.add_argument(
        "--gpu", action="store_true", help="GPU path (default when CUDA is present)"
    )
    device.add_argument(
        "--cpu", action="store_true", help="CPU path: Triton interpreter, tiny shapes"
    )
    args = parser.parse_args(argv)

    import torch

    has_cuda = torch.cuda.is_available()
    if args.gpu and not has_cuda:
        parser.error(
            "--gpu needs a CUDA device; none is present (run without --gpu for the CPU path)"
        )
    gpu = has_cuda and not args.cpu
    if not gpu:
        # The interpreter is chosen when triton is first imported: set the switch now.
        os.environ["TRITON_INTERPRET"] = "1"
    elif os.environ.get("TRITON_INTERPRET", "").strip().lower() in {"1", "true", "on", "yes"}:
        # Triton takes each of these spellings as "on"; triton is not imported yet here.
        parser.error(
            f"TRITON_INTERPRET={os.environ['TRITON_INTERPRET']} is set: unset it for the GPU "
            "path, or pass --cpu"
        )
    result = Setup(
        step=step,
        log=args.log.resolve(),
        gpu=gpu,
        device="cuda" if gpu else "cpu",
        dtype_name="bfloat16" if gpu else "float16",
        page=64 if gpu else 16,
        args=args,
    )
    print(f"Step {step}: {STEPS[step]}")
    path = (
        "GPU path: bf16, trial matrix" if gpu else "CPU path: Triton interpreter, fp16, tiny shapes"
    )
    print(f"   log: {result.log}\n   device: {result.device} ({path})")
    _stop_cleanly_on_interrupt(result)
    _prepare_log(result)
    return result


def _stop_cleanly_on_interrupt(setup: Setup) -> None:
    """Make Ctrl-C end the step with what it means for the log, not a traceback."""

    def stop(signum: int, frame: object) -> None:
        print(
            f"Expected step {setup.step} to run to its end, got an interrupt: it may have "
            f"written part of its work into {setup.log}, so it will not run on that log again; "
            "start over with step 1, or pass another --log",
            file=sys.stderr,
        )
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGINT, stop)


def _prepare_log(setup: Setup) -> None:
    marker = setup.log / MARKER
    wanted = {"device": setup.device, "dtype": setup.dtype_name}
    if setup.log.exists() and not setup.log.is_dir():
        raise SystemExit(f"Expected a directory for --log, got the file {setup.log}")
    if setup.log.exists() and any(setup.log.iterdir()) and not marker.is_file():
        # Step 1 writes the marker before anything else, so files without it are not a log
        # these steps began (another effort's log, say): step 1 would clear them, and a
        # later step would take their results for the earlier steps' and write into them.
        raise SystemExit(
            f"Expected an empty directory or a log these examples wrote at {setup.log}, "
            f"got other files: choose another --log"
        )
    if setup.step == 1:
        # Step 1 starts the log over.
        if setup.log.exists():
            if any(setup.log.iterdir()):
                print("   emptied the log these steps wrote there: step 1 starts it over")
            shutil.rmtree(setup.log)
        try:
            setup.log.mkdir(parents=True)
        except OSError as error:  # a path under a file, a folder this user may not write
            raise SystemExit(
                f"Expected a directory that can be made for --log, got {setup.log} "
                f"({error.strerror}): choose another --log"
            ) from None
        marker.write_text(json.dumps({**wanted, "finished": []}) + "\n", encoding="utf-8")
        return
    if marker.is_file():
        found = _marker(setup.log)
        if {key: found.get(key) for key in wanted} != wanted:
            raise SystemExit(
                f"Expected a log written on the {setup.device} path, got one written on the "
                f"{found.get('device')} path at {setup.log}: rerun from step 1 or choose "
                f"another --log"
            )
    done = setup.log / PRODUCTS[setup.step]
    if done.exists() and _finished(setup.log, setup.step):
        raise SystemExit(
            f"Expected a log where step {setup.step} has not run yet, got {done} (a log never "
            "rewrites a result): start over with step 1, or pass another --log"
        )
    for earlier in range(1, setup.step):
        # A step writes its product before its last files (snapshots, CLAUDE.md, the
        # devlog's rows): one that stopped after it has not finished, and is run again
        # (step 1) or refuses to (any other), rather than leaving a later step a half log.
        progress = _progress(setup.log, earlier)
        if progress == "finished":
            continue
        if progress == "did not finish" and earlier > 1:
            raise SystemExit(
                f"Expected a log where step {earlier} has not started yet (so that step "
                f"{setup.step} runs it first) or has finished, got one where it started and did "
                f"not finish (interrupted, or it failed) at {setup.log}: what it wrote before "
                "it stopped would be written twice; start over with step 1, or pass another "
                "--log"
            )
        run_step(earlier, setup, progress)
    # A step that started on this log and did not finish (interrupted, or it failed) may
    # have written part of its work (benchmark rows, LEARN's evidence): running it again
    # would write that part twice. Read again: the earlier steps just run added theirs.
    found = _marker(setup.log) if marker.is_file() else wanted
    started = [int(n) for n in found.get("started", [])]
    if setup.step in started:
        raise SystemExit(
            f"Expected a log where step {setup.step} has not started yet, got one where it "
            f"started and did not finish (interrupted, or it failed) at {setup.log}: what it "
            "wrote before it stopped would be written twice; start over with step 1, or pass "
            "another --log"
        )
    marker.write_text(
        json.dumps({**found, "started": [*started, setup.step]}) + "\n", encoding="utf-8"
    )


def _marker(log: Path) -> dict[str, Any]:
    """The marker of ``log`` (empty when it has none), or a refusal that names what is wrong.

    Every step reads the marker before it writes anything, so a marker that is not what
    step 1 wrote stops the step with its reason here, and the log stays as it was.
    """
    path = log / MARKER
    if not path.is_file():
        return {}
    try:
        text = path.read_bytes().decode("utf-8")
        found = json.loads(text)
    except OSError as error:
        got = f"a file that cannot be read ({error.strerror})"
    except UnicodeDecodeError:
        got = "bytes that are not UTF-8 text"
    except json.JSONDecodeError as error:
        got = (
            f"{clip(text.strip(), 40)!r} ({error.msg} at line {error.lineno} column {error.colno})"
        )
    else:
        problem = _marker_problem(found)
        if problem is None:
            return dict(found)
        got = problem
    raise SystemExit(
        f"Expected the examples' marker JSON at {path}, got {got}: start over with step 1, "
        "or pass another --log"
    )


def _marker_problem(found: object) -> str | None:
    """What keeps ``found`` (a parsed marker) from being one step 1 wrote; None if nothing.

    A marker is an object whose ``finished`` and ``started`` lists, where present, hold
    step numbers.
    """
    if not isinstance(found, dict):
        return f"a JSON {type(found).__name__} instead of an object"
    for key in ("finished", "started"):
        steps = found.get(key, [])
        if not isinstance(steps, list) or not all(
            isinstance(n, int) and not isinstance(n, bool) and n in STEPS for n in steps
        ):
            return f"{key} = {clip(json.dumps(steps), 40)} instead of a list of step numbers"
    return None


def _progress(log: Path, step: int) -> Literal["finished", "did not finish", "has not run"]:
    """How far ``step`` got on ``log``: finished, started and did not finish, or not run.

    Step 1 writes the marker first and records no start: a marker without step 1 among the
    finished says it started. Other steps record their start in the marker.
    """
    if (log / PRODUCTS[step]).is_file() and _finished(log, step):
        return "finished"
    found = _marker(log)
    if (step == 1 and (log / MARKER).is_file()) or step in found.get("started", []):
        return "did not finish"
    return "has not run"


def _finished(log: Path, step: int) -> bool:
    """Whether ``step`` ran to its end on ``log`` (it called :func:`finish`).

    A log started before the steps recorded their ends has no ``finished`` list: there a
    step counts as finished once its product exists, as it did then.
    """
    found = _marker(log)
    return "finished" not in found or step in [int(n) for n in found["finished"]]


def finish(setup: Setup) -> None:
    """Record in the log that this step ran to its end: call it last, after every write.

    Later steps take an earlier step's work as done only once it is recorded here.
    """
    found = _marker(setup.log)
    finished = [int(n) for n in found.get("finished", [])]
    (setup.log / MARKER).write_text(
        json.dumps({**found, "finished": [*finished, setup.step]}) + "\n", encoding="utf-8"
    )


def run_step(
    step: int, setup: Setup, progress: Literal["did not finish", "has not run"] = "has not run"
) -> None:
    """Run an earlier step in a subprocess with the same log and device (it runs its own
    earlier steps the same way).

    Parameters
    ----------
    step : int
        The earlier step to run.
    setup : Setup
        The step that needs it.
    progress : {"did not finish", "has not run"}
        How far ``step`` got on the log, as the line printed before it says.
    """
    why = (
        "did not finish on this log"
        if progress == "did not finish"
        else "has not run on this log yet"
    )
    print(f"   (step {step} {why}: running {STEPS[step]} first)")
    command = [sys.executable, str(HERE / STEPS[step]), "--log", str(setup.log)]
    command.append("--gpu" if setup.gpu else "--cpu")
    done = subprocess.run(command, check=False, capture_output=True, text=True)
    if done.returncode != 0:
        sys.stderr.write(done.stdout + done.stderr)
        raise SystemExit(f"Expected step {step} to succeed, got exit code {done.returncode}")
    print(f"   (step {step} done)")


# ---------------------------------------------------------------------------- inputs


def make_inputs(
    setup: Setup, point: TrialPoint, *, seed: int = 0, page: int | None = None
) -> dict[str, torch.Tensor]:
    """Random inputs of one trial point: q, a paged cache with shuffled pages, the table.

    Returns ``{"q": [b, s, h, 576], "kv_cache": [pages, page, 1, 576], "block_table":
    [b, ceil(t / page)] int32, "cache_seqlens": [b] int32}`` on the run's device (page:
    the setup's unless given). The data
    are random (never zeros: matrix units and caches behave differently on zeros) and the
    pages lie in a random order, as a serving allocator leaves them.
    """
    import torch

    gen = torch.Generator(device="cpu").manual_seed(seed)
    b, s, t, h = point.b, point.s, point.t, point.extra["h"]
    page = page or setup.page
    width = -(-t // page)
    kv_cache = torch.randn(b * width, page, 1, D_QK, generator=gen)
    block_table = torch.randperm(b * width, generator=gen).view(b, width).to(torch.int32)
    q = torch.randn(b, s, h, D_QK, generator=gen)
    return {
        "q": q.to(setup.device, setup.dtype),
        "kv_cache": kv_cache.to(setup.device, setup.dtype),
        "block_table": block_table.to(setup.device),
        "cache_seqlens": torch.full((b,), t, dtype=torch.int32, device=setup.device),
    }


def outputs_for(inputs: dict[str, torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
    """Caller-owned ``out [b, s, h, 512]`` (q's dtype) and ``lse [b, h, s]`` float32."""
    import torch

    q = inputs["q"]
    b, s, h, _ = q.shape
    out = torch.empty(b, s, h, D_V, dtype=q.dtype, device=q.device)
    lse = torch.empty(b, h, s, dtype=torch.float32, device=q.device)
    return out, lse


def rel_err(value: torch.Tensor, ref: torch.Tensor) -> float:
    """‖value − ref‖ / ‖ref‖ in float64 (inf when value holds a NaN or an inf)."""
    import torch

    if not bool(torch.isfinite(value).all()):
        return float("inf")
    ref = ref.double()
    return float((value.double() - ref).norm() / ref.norm().clamp_min(1e-30))


# Bounds against the float64 reference: bf16 keeps 8 mantissa bits, fp16 11.
ERR_BOUND: dict[DtypeName, float] = {"bfloat16": 1e-2, "float16": 2e-3}


def correctness_words(setup: Setup) -> str:
    """How correctness was checked, for result.md."""
    bound = ERR_BOUND[setup.dtype_name]
    return f"out and lse rel err <= {bound:.0e} vs float64, outputs NaN-poisoned"


# ---------------------------------------------------------------------------- torch eager


def dense_kv(inputs: dict[str, torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
    """The paged cache gathered densely, ``[b, t_max, 576]``, and the causal visibility mask
    ``[b, s·h, t_max]`` (draft token i sees keys < seqlen − s + i + 1)."""
    import torch

    q, kv, table, seqlens = (inputs[k] for k in ("q", "kv_cache", "block_table", "cache_seqlens"))
    s, h = q.shape[1], q.shape[2]
    page = kv.shape[1]
    t_max = table.shape[1] * page
    keys = torch.arange(t_max, device=q.device)
    dense = kv[table[:, keys // page].long(), (keys % page)[None, :], 0]  # [b, t_max, 576]
    token = torch.arange(s, device=q.device).repeat_interleave(h)  # row r = i·h + head
    limit = seqlens[:, None].long() - s + 1 + token[None, :]  # [b, s·h]
    visible = keys[None, None, :] < limit[:, :, None]
    return dense, visible


def eager_decode(
    q: torch.Tensor, dense: torch.Tensor, visible: torch.Tensor, softmax_scale: float
) -> torch.Tensor:
    """What a user writes first: bmm → float32 softmax → bmm over the dense cache.

    ``q [b, s, h, 576]``, ``dense [b, t, 576]``, ``visible [b, s·h, t]`` → ``[b, s, h, 512]``.
    It moves the whole score matrix ``[b, s·h, t]`` through memory three times (write,
    softmax, read), which the fused kernels never do.
    """
    import torch

    b, s, h, _ = q.shape
    scores = torch.bmm(q.reshape(b, s * h, D_QK), dense.transpose(1, 2)).float() * softmax_scale
    probs = torch.softmax(scores.masked_fill(~visible, float("-inf")), dim=-1).to(q.dtype)
    return torch.bmm(probs, dense[..., :D_V]).reshape(b, s, h, D_V)


# ---------------------------------------------------------------------------- the log


def snapshot_kernel(module: str, destinations: Sequence[Path], *, experiment: int | None) -> None:
    """Copy the source of a kernelopt module into the log, as experiment N ran it.

    The module docstring is replaced by one line naming the module: it documents the
    library (including the strategies that come after this one), not this kernel, and a
    reader of the log (or ``kernelopt diagnose``) would take those names for techniques
    this kernel uses. Everything else is copied byte for byte.

    Parameters
    ----------
    module : str
        The module to copy, such as ``"kernelopt.kernels.mla.naive"``.
    destinations : sequence of Path
        Where to write the copy.
    experiment : int or None
        The experiment that ran it; None for the float64 reference, which no experiment
        runs as its kernel and every experiment is checked against.
    """
    import importlib

    path = Path(str(importlib.import_module(module).__file__))
    text = path.read_text(encoding="utf-8")
    tree = ast.parse(text)
    first = tree.body[0] if tree.body else None
    if (
        isinstance(first, ast.Expr)
        and isinstance(first.value, ast.Constant)
        and isinstance(first.value.value, str)
    ):
        lines = text.splitlines(keepends=True)
        role = (
            "the float64 reference every experiment is checked against"
            if experiment is None
            else f"as experiment {experiment} ran it"
        )
        head = f'"""{module}, {role} (module documentation left out)."""\n'
        start, end = first.lineno - 1, first.end_lineno or first.lineno
        text = "".join([*lines[:start], head, *lines[end:]])
    for destination in destinations:
        destination.parent.mkdir(parents=True, exist_ok=True)
        destination.write_text(text, encoding="utf-8")


def write_eager_baseline(setup: Setup, rows: Sequence[ResultRow], *, notes: str) -> None:
    """Write experiment 1, torch eager, the baseline the kernels are compared with.

    Its kernel is the code it timed, :func:`eager_decode` (:data:`EAGER_KERNEL`), not
    ``kernels/mla_ref.py``, the float64 reference it is checked against; its device is
    :meth:`Setup.where_of` torch eager's (``CPU`` on the CPU path: torch eager does not run
    in the Triton interpreter).

    Parameters
    ----------
    setup : Setup
        The run (step 2's).
    rows : sequence of ResultRow
        The eager timings, one a trial point.
    notes : str
        The record's notes.
    """
    from kernelopt.bench import write_experiment

    write_experiment(
        setup.experiments,
        experiment=EXP_EAGER,
        title="torch eager baseline (bmm, fp32 softmax, bmm)",
        rows=rows,
        status="BASELINE",
        correctness="PASS",
        correctness_detail=f"rel err <= {ERR_BOUND[setup.dtype_name]:.0e} vs float64",
        gpu=setup.where_of(EAGER_IMPL),
        kernel=EAGER_KERNEL,
        notes=notes,
    )


def find_row(rows: Sequence[BenchRow], impl: str, point: TrialPoint) -> BenchRow | None:
    """The last BenchRow of ``impl`` at ``point`` (None when there is none)."""
    wanted = point.as_dict()
    found = [
        r for r in rows if r.impl == impl and all(r.config.get(k) == v for k, v in wanted.items())
    ]
    return found[-1] if found else None


# ---------------------------------------------------------------------------- one version


def schedule_metrics(plan: MLADecodePlan) -> dict[str, float]:
    """The catalog's ``kv_splits`` (most pieces of one sequence) and ``waves`` (programs of
    the attention kernel over the multiprocessors the scheduler balanced over); empty for the
    naive strategy, which has no schedule."""
    schedule = plan.schedule
    if schedule is None:
        return {}
    sms = schedule.num_slots / plan.config.ctas_per_sm
    return {
        "kv_splits": float(max(schedule.splits)),
        "waves": schedule.num_units * schedule.m_tiles / sms,
    }


@dataclass
class Checked:
    """One kernel version at one trial point, verified against the reference and timed."""

    point: TrialPoint
    impl: str
    err_out: float
    err_lse: float
    plan: MLADecodePlan
    run: Callable[[], object]  # one call into the caller-owned outputs
    outputs: tuple[torch.Tensor, torch.Tensor]
    roofline: Roofline | None  # None on the CPU path: no ceilings
    measurement: Measurement | None = None  # None when not timed here (compare times it)


def check_plan(
    setup: Setup,
    point: TrialPoint,
    inputs: dict[str, torch.Tensor],
    reference: tuple[torch.Tensor, torch.Tensor],
    *,
    strategy: Strategy,
    impl: str,
    ceilings: Ceilings | None,
    time: bool = True,
    kv_row_bytes: int | None = None,
    kv_fp8: bool = False,
) -> Checked:
    """What step 2 does for the naive kernel, for any ``MLADecodePlan`` strategy.

    Plan once, poison the caller-owned ``out``/``lse`` with NaN, run once, require every
    element written and the error against the float64 reference under the dtype's bound,
    then time the run with the setup's timer (outputs poisoned before each timed call and
    checked after each batch) and place it on the roofline when ceilings exist.
    ``kv_row_bytes``: bytes of one cached token when the cache is not 576 elements of the
    queries' dtype (656 for the FP8 layout), for the roofline. ``kv_fp8``: plan for the
    656-byte FP8 cache layout (``MLADecodePlan(kv_fp8=True)``).
    """
    from kernelopt.bench import Roofline, check_written, mla_decode_cost
    from kernelopt.kernels.mla import MLADecodePlan

    plan = MLADecodePlan(
        inputs["cache_seqlens"],
        s_q=point.s,
        h_q=point.extra["h"],
        page_size=inputs["kv_cache"].shape[1],
        softmax_scale=SOFTMAX_SCALE,
        dtype=setup.dtype,
        device=setup.device,
        strategy=strategy,
        kv_fp8=kv_fp8,
    )
    out, lse = outputs_for(inputs)

    def run() -> object:
        return plan.run(inputs["q"], inputs["kv_cache"], inputs["block_table"], out=out, lse=lse)

    check_written(run, (out, lse))  # NaN in, and no NaN may survive the call
    err_out, err_lse = rel_err(out, reference[0]), rel_err(lse, reference[1])
    bound = ERR_BOUND[setup.dtype_name]
    if not (err_out <= bound and err_lse <= bound):
        raise SystemExit(
            f"Expected {impl} within {bound:.0e} of the float64 reference at {point}, got "
            f"out {err_out:.2e}, lse {err_lse:.2e}"
        )
    measurement = setup.timer().measure(run, outputs=(out, lse), label=impl) if time else None
    cost = mla_decode_cost(
        b=point.b,
        s_q=point.s,
        h_q=point.extra["h"],
        seqlens=point.t,
        elt_bytes=setup.dtype.itemsize,
        kv_row_bytes=kv_row_bytes,
    )
    roofline = None if ceilings is None else Roofline(ceilings=ceilings, cost=cost)
    return Checked(
        point=point,
        impl=impl,
        err_out=err_out,
        err_lse=err_lse,
        plan=plan,
        run=run,
        outputs=(out, lse),
        roofline=roofline,
        measurement=measurement,
    )


def bench_row(
    setup: Setup,
    checked: Checked,
    measurement: Measurement | None = None,
    *,
    impl: str = "",
    config: dict[str, str] | None = None,
) -> BenchRow:
    """The JSONL row of a checked version: its own measurement, or one ``compare`` made.

    ``config`` adds what the point's sizes do not say, such as the cache format
    (``{"kv": "fp8"}``, as ``benchmarks/mla_decode.py`` writes it).
    """

    m = measurement or checked.measurement
    if m is None:
        raise ValueError(f"Expected a measurement of {checked.impl}, got none")
    line = checked.roofline
    metrics = {} if line is None else {**line.place(m).metrics(), **schedule_metrics(checked.plan)}
    note = f"rel err out {checked.err_out:.1e} lse {checked.err_lse:.1e} vs float64"
    return timing_row(
        setup,
        m,
        impl=impl or checked.impl,
        point=checked.point,
        line=line,
        metrics=metrics,
        note=note,
        config=config,
    )


def timing_row(
    setup: Setup,
    m: Measurement,
    *,
    impl: str,
    point: TrialPoint,
    line: Roofline | None,
    metrics: dict[str, float] | None = None,
    note: str = "",
    config: dict[str, str] | None = None,
) -> BenchRow:
    """A ``BenchRow`` of one timing (raw samples kept, so a later A/B can judge them).

    On the CPU path the device is named as :meth:`Setup.where_of` names it for ``impl``
    (``CPU (Triton interpreter)`` for a Triton kernel, ``CPU`` for torch eager) rather than
    ``cpu``, so that nobody reading the row (or the devlog and evidence made from it)
    mistakes it for a GPU measurement.
    """
    import attrs

    from kernelopt.bench import row_from_measurement

    if metrics is None:
        metrics = {} if line is None else line.place(m).metrics()
    row = row_from_measurement(
        m,
        op="mla_decode",
        impl=impl,
        # A format is part of the point: rows of two cache formats must not read as one.
        config={**point.as_dict(), **(config or {})},
        floor=None if line is None else line.floor(m.unit),
        metrics=metrics,
        note=note,
        keep_samples=True,
    )
    return row if setup.gpu else attrs.evolve(row, gpu=setup.where_of(impl))

"""The MLA decode trial matrix: kernelopt's reference MLA kernels timed at the default points.

Absorbed DeepSeek-V3 MLA decode as MQA (see ``kernelopt.kernels.mla``): q
``[b, s_q, h_q, 576]``, a paged latent cache ``[num_blocks, page, 1, 576]`` whose first
512 columns are V, ``block_table [b, max_blocks]`` int32, ``cache_seqlens [b]`` int32,
causal among the ``s_q`` draft tokens. Its roofline cost per call::

    FLOPs = 2 · s_q · h_q · Σ seqlen · (576 + 512)
    bytes = Σ seqlen · 576 · elt + b · s_q · h_q · (576 + 512) · elt

The kernels are imported only when the matrix runs; without them the error says so.
"""

from __future__ import annotations

import importlib
import math
import operator
from collections.abc import Iterable, Sequence
from typing import Any

import attrs

from kernelopt._errors import DeviceError, InputError, KernelOptError, expected
from kernelopt._words import count_text
from kernelopt.bench.records import BenchRow
from kernelopt.bench.roofline import Ceilings, Cost, Roofline, _is_cpu, measure_ceilings
from kernelopt.bench.timer import Timer, cuda_available, no_cuda_reason
from kernelopt.bench.trials import (
    DEFAULT_POINTS,
    TrialCall,
    TrialPoint,
    TrialResult,
    _plain_int,
    run_trials,
)
from kernelopt.bench.verify import _relative_error
from kernelopt.experiments.points import canonical_axis

__all__ = [
    "HEADS",
    "MLATrial",
    "load_mla",
    "mla_decode_cost",
    "mla_trial_matrix",
    "no_cuda_error",
]

_D_QK = 576  # 512 latent (also V) + 64 rotary
HEADS = (128, 16)  # compute-bound and memory-bound heads of the trial matrix
CHECK_TOLERANCE = 2e-2  # bf16 operands: the bound benchmarks/mla_decode.py applies too
_PAGE = 64


def mla_decode_cost(
    *,
    b: int,
    s_q: int,
    h_q: int,
    seqlens: int | Sequence[int],
    elt_bytes: int = 2,
    kv_row_bytes: int | None = None,
) -> Cost:
    """Roofline cost of one absorbed MLA decode call, from ``kernelopt.kernels.mla.cost``.

    Parameters
    ----------
    b : int
        Batch.
    s_q : int
        Query tokens per sequence.
    h_q : int
        Query heads (one latent KV head).
    seqlens : int or sequence of int
        Cached tokens per sequence: one length for all ``b``, or one per sequence (a list,
        tuple, range, 1-D array or tensor; not a set or a dict).
    elt_bytes : int
        Bytes per element of q, cache and output (2 for bf16).
    kv_row_bytes : int, optional
        Bytes of one cached token when the cache is not ``576 · elt_bytes`` wide: 656 for
        the FP8 layout (``kernelopt.kernels.mla.FP8_KV_BYTES``).

    Raises
    ------
    InputError
        For a ``b`` that is not a positive integer, one length that is not an integer
        >= 0 (a bool, a float, text), a list of lengths not ``b`` long, lengths given as a
        set or a dict, or sizes the cost model refuses.

    Examples
    --------
    >>> cost = mla_decode_cost(b=32, s_q=1, h_q=16, seqlens=4096)
    >>> round(cost.bytes / 4.2497501013921815e12 * 1e6, 2)  # µs at the anchor's copy rate
    35.79
    >>> fp8 = mla_decode_cost(b=32, s_q=1, h_q=16, seqlens=4096, kv_row_bytes=656)
    >>> round(fp8.bytes / 4.2497501013921815e12 * 1e6, 2)
    20.49
    """
    try:
        from kernelopt.kernels.mla._validate import check_positive_int
        from kernelopt.kernels.mla.cost import (
            _refuse_unordered,
            mla_decode_bytes,
            mla_decode_flops,
        )
    except ImportError as error:
        raise KernelOptError(
            expected("the MLA cost model in kernelopt.kernels.mla.cost", f"{error}")
        ) from None
    # Before b is used: b=None failed with "unsupported operand type(s) for *".
    b = check_positive_int(b, "b")
    lengths: int | list[int]
    scalar = getattr(seqlens, "ndim", None) == 0  # a NumPy scalar or a 0-d tensor
    if scalar or isinstance(seqlens, str | bytes) or not isinstance(seqlens, Iterable):
        # One length for every sequence: the sum is b times it, checked here, where the
        # value is still the one given (-5, not -160).
        lengths = b * _one_length(seqlens)
    else:
        _refuse_unordered(seqlens)  # before list(): a dict's keys would pass as lengths
        lengths = list(seqlens)
        if len(lengths) != b:
            raise InputError(expected(f"{b} sequence lengths (b)", len(lengths), where="seqlens"))
    flops = mla_decode_flops(lengths, s_q=s_q, h_q=h_q)
    moved = mla_decode_bytes(
        lengths, batch=b, s_q=s_q, h_q=h_q, elt_bytes=elt_bytes, kv_row_bytes=kv_row_bytes
    )
    name = f"mla decode b={b} s={s_q} h={h_q}"
    if kv_row_bytes is not None:
        name += f" row={kv_row_bytes}B"
    return Cost(flops=flops, bytes=moved, name=name)


def _one_length(value: object) -> int:
    """A cache length given once for the whole batch: an integer >= 0 of any kind (Python,
    NumPy, a 0-d tensor), never a bool, a float or text."""
    try:
        length = -1 if isinstance(value, bool) else operator.index(value)  # type: ignore[arg-type]
    except TypeError:
        length = -1
    if length < 0:
        raise InputError(
            expected(
                "one cache length as an integer >= 0 or one per sequence",
                repr(value),
                where="seqlens",
            )
        )
    return length


def load_mla() -> Any:
    """Import ``kernelopt.kernels.mla``, or say clearly that it is missing.

    Raises
    ------
    KernelOptError
        When the module (or one of ``mla_decode_ref``, ``MLADecodePlan``) is absent.
    """
    try:
        module = importlib.import_module("kernelopt.kernels.mla")
    except ImportError as error:
        raise KernelOptError(
            expected(
                "the MLA decode kernels in kernelopt.kernels.mla (mla_decode_ref, MLADecodePlan)",
                f"{type(error).__name__}: {error}",
            )
        ) from None
    missing = [name for name in ("mla_decode_ref", "MLADecodePlan") if not hasattr(module, name)]
    if missing:
        raise KernelOptError(
            expected(
                "kernelopt.kernels.mla to define mla_decode_ref and MLADecodePlan", f"no {missing}"
            )
        )
    return module


@attrs.frozen(kw_only=True)
class MLATrial:
    """One MLA trial point: timing, roofline placement and error against the reference.

    Parameters
    ----------
    trial : TrialResult
        The timing (or failure) at the point.
    cost : Cost
        FLOPs and bytes of the point that ran.
    floor_us : float, optional
        Roofline floor, µs (None without ceilings).
    rel_err : float, optional
        ‖out − ref‖ / ‖ref‖ against the float64 reference.
    metrics : dict of str to float
        Roofline metrics (dram_pct, tc_pct, floor_pct, ...).
    """

    trial: TrialResult
    cost: Cost
    floor_us: float | None = None
    rel_err: float | None = None
    metrics: dict[str, float] = attrs.field(factory=dict)

    def as_dict(self) -> dict[str, Any]:
        """A flat, JSON-ready summary."""
        m = self.trial.measurement
        return {
            "point": str(self.trial.point),
            "requested": str(self.trial.requested),
            "impl": self.trial.impl,
            "median_us": None if m is None else m.median,
            "p20_us": None if m is None else m.p20,
            "p80_us": None if m is None else m.p80,
            "floor_us": self.floor_us,
            "floor_pct": self.metrics.get("floor_pct"),
            "rel_err": self.rel_err,
            "note": self.trial.note,
            "error": self.trial.error,
        }

    def bench_row(self) -> BenchRow:
        """The JSONL row of a measured trial."""
        return self.trial.bench_row(op="mla_decode", floor=self.floor_us, metrics=self.metrics)


def _head_axis(point: TrialPoint) -> str | None:
    """The name under which ``point`` gives its query heads (``h`` or ``h_q``), or None."""
    return next((name for name in point.extra if canonical_axis(name) == "h"), None)


def _head_count(point: TrialPoint) -> int:
    """The query heads of ``point``; :data:`HEADS`'s first where it names none."""
    axis = _head_axis(point)
    return HEADS[0] if axis is None else point.extra[axis]


def _inputs(point: TrialPoint, torch: Any, seed: int, device: str, dtype: Any) -> dict[str, Any]:
    # Random data, never zeros; pages in a random order, as a serving engine's allocator
    # leaves them.
    h = _head_count(point)
    generator = torch.Generator(device=device).manual_seed(seed)
    blocks_per_seq = math.ceil(point.t / _PAGE)
    cache = torch.randn(
        point.b * blocks_per_seq, _PAGE, 1, _D_QK, device=device, dtype=dtype, generator=generator
    )
    q = torch.randn(point.b, point.s, h, _D_QK, device=device, dtype=dtype, generator=generator)
    order = torch.randperm(point.b * blocks_per_seq, device=device, generator=generator)
    block_table = order.view(point.b, blocks_per_seq).to(torch.int32)
    seqlens = torch.full((point.b,), point.t, device=device, dtype=torch.int32)
    return {
        "q": q,
        "kv_cache": cache,
        "block_table": block_table,
        "cache_seqlens": seqlens,
        "softmax_scale": 1.0 / math.sqrt(192.0),  # DeepSeek-V3: (128 nope + 64 rope) ** -0.5
    }


def _point_cost(point: TrialPoint, elt_bytes: int) -> Cost:
    """The work and traffic of one trial point's decode call."""
    return mla_decode_cost(
        b=point.b,
        s_q=point.s,
        h_q=_head_count(point),
        seqlens=point.t,
        elt_bytes=elt_bytes,
    )


def _check_heads(heads: object) -> tuple[int, ...]:
    """The head counts of ``mla_trial_matrix(heads=...)``, each an int >= 1 given once."""
    if getattr(heads, "ndim", None) == 1 and hasattr(heads, "tolist"):
        heads = heads.tolist()  # a 1-D array or tensor, as trial_matrix's axes take
    if isinstance(heads, str | bytes) or not isinstance(heads, Sequence) or not heads:
        raise InputError(
            expected("a non-empty sequence of head counts", repr(heads), where="heads")
        )
    values = tuple(_plain_int(value) for value in heads)
    for value in values:
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise InputError(expected("head counts as integers >= 1", repr(value), where="heads"))
    twice = next((h for i, h in enumerate(values) if h in values[:i]), None)
    if twice is not None:
        # Every point without h would be timed twice at that count, its rows written twice.
        got = f"{tuple(heads)!r} ({twice} twice)"
        raise InputError(expected("each head count once", got, where="heads"))
    return values  # type: ignore[return-value]  # each checked to be an int above


def _crossed(points: Sequence[TrialPoint], heads: tuple[int, ...]) -> list[TrialPoint]:
    """``points`` with each that names no head count (``h``) once per count of ``heads``,
    as ``kernelopt bench mla --extra-point`` crosses its points with ``--heads``.

    Raises
    ------
    InputError
        For an item that is not a TrialPoint, or a point reached twice (given twice, or
        given with ``h`` and also made from one without it), naming the ``points`` index.
    """
    chosen: list[TrialPoint] = []
    origins: dict[str, str] = {}  # each point's spelling: which of points gave it
    for index, point in enumerate(points):
        if not isinstance(point, TrialPoint):
            raise InputError(
                expected("a TrialPoint", type(point).__name__, where=f"points[{index}]")
            )
        if _head_axis(point) is not None:
            made = [point]
        else:
            made = [attrs.evolve(point, extra={**point.extra, "h": h}) for h in heads]
        for each in made:
            spelling = str(each)
            if spelling in origins:
                # Each point runs alone through run_trials, which never sees the repeat.
                raise InputError(
                    expected(
                        "each point once",
                        f"{each} again (as {origins[spelling]})",
                        where=f"points[{index}]",
                    )
                )
            at = "" if each is point else f" at h={each.extra['h']}"
            origins[spelling] = f"points[{index}]{at}"
        chosen += made
    return chosen


def _check_ceilings(ceilings: Ceilings, device: str) -> None:
    """Refuse ceilings of another device than the one the kernels run on, before timing.

    A host-clock time placed on a GPU's ceilings reads as 0.0001 % of its floor, and a
    GPU's time on the host's as far above it: a floor holds only for its own device.
    """
    if not isinstance(ceilings, Ceilings):
        raise InputError(expected("Ceilings", type(ceilings).__name__, where="ceilings"))
    on_cuda = device.startswith("cuda")
    if on_cuda != _is_cpu(ceilings.gpu):
        return
    if on_cuda:
        what = f"the ceilings of a GPU for device {device!r}"
        fix = "measure_ceilings() on it, or leave ceilings= out"
    else:
        what = f"the ceilings of the host for device {device!r}"
        fix = "pass Ceilings(gpu='cpu', ...) for the host, or run on device='cuda'"
    raise InputError(
        expected(
            what,
            f"those of {ceilings.gpu!r}: a floor holds only for the device its ceilings "
            f"were measured on; {fix}",
            where="ceilings",
        )
    )


def no_cuda_error(points: int, *, asked: str = "") -> DeviceError:
    """The refusal of a run of the MLA decode kernels where torch sees no CUDA device: what
    the run needed, why torch sees none and what to do (:func:`mla_trial_matrix` raises it).

    Parameters
    ----------
    points : int
        How many trial points the run would have timed.
    asked : str
        The points in the caller's words, shown after their count; the command line names
        its options there (``"the trial matrix and --extra-point 'b=64,s=1,t=8192'"``).
        Default: none.

    Returns
    -------
    DeviceError
        ``Expected a CUDA device to time the MLA decode kernels at 3 points, got none:
        torch 2.11.0+cpu is built without CUDA; install a CUDA build of torch on a machine
        with an NVIDIA GPU``.
    """
    what = f"a CUDA device to time the MLA decode kernels at {count_text(points, 'point')}"
    return DeviceError(
        expected(f"{what} ({asked})" if asked else what, f"none: {no_cuda_reason()}")
    )


def mla_trial_matrix(
    *,
    points: Sequence[TrialPoint] | None = None,
    heads: Sequence[int] = HEADS,
    strategies: Sequence[str] | None = None,
    timer: Timer | None = None,
    ceilings: Ceilings | None = None,
    check: bool = True,
    tolerance: float = CHECK_TOLERANCE,
    seed: int = 0,
    device: str = "cuda",
    dtype: str = "bfloat16",
) -> list[MLATrial]:
    """Time ``kernelopt.kernels.mla`` at the trial matrix, with floors and errors.

    Each strategy runs through ``MLADecodePlan`` (planned once per point, outside the
    timing) into caller-owned ``out``/``lse`` buffers, which the timer poisons before every
    call and checks after every batch.

    Parameters
    ----------
    points : sequence of TrialPoint, optional
        Default: the decode and speculative points. A point that names no head count
        (``h``) runs at each of ``heads``, as ``kernelopt bench mla --extra-point`` does;
        one that names it runs at that count only.
    heads : sequence of int
        Query head counts (each an int >= 1, once) to cross the points without ``h`` with.
    strategies : sequence of str, optional
        ``MLADecodePlan`` strategies to time; default all (``STRATEGIES``) the device runs:
        ``seesaw`` only on a Hopper GPU.
    timer : Timer, optional
        Timing settings; default cold ``Timer()``.
    ceilings : Ceilings, optional
        Default: this GPU's cached ceilings, measured now if none are cached. Required
        off CUDA, where they must be the host's (``Ceilings(gpu="cpu", ...)``) and the
        host-clock times are placed on them as given (a check of the wiring, not of the
        device); a GPU's ceilings are refused there, and the host's on CUDA.
    check : bool
        Compare each point's output with ``mla_decode_ref`` (float64) before timing it.
    tolerance : float
        Largest ``‖out − ref‖ / ‖ref‖`` a strategy may reach and be timed; one further
        off, or with a non-finite output or LSE, is recorded as ``incorrect: ...`` with
        its ``rel_err`` and not timed.
    seed : int
        Seed of the random inputs.
    device : str
        ``"cuda"``; ``"cpu"`` runs the kernels in the Triton interpreter (with
        ``TRITON_INTERPRET=1``), host-timed: a check of the wiring on tiny points, not a
        measurement.
    dtype : str
        Input dtype name (``"bfloat16"``; ``"float32"`` for interpreter runs).

    Returns
    -------
    list of MLATrial
        Point-major: every strategy at the first point, then the next point.

    Raises
    ------
    KernelOptError
        When ``kernelopt.kernels.mla`` is not present.
    DeviceError
        Without CUDA, saying why torch sees no device and what to do
        (:func:`no_cuda_error`).
    InputError
        For a ``tolerance`` that is not a finite number > 0, an empty ``points``, a
        point reached twice (by its spelling, once crossed with ``heads``), a head count
        listed twice (all before the kernels or the device are looked for), a ``dtype``
        torch does not know, a non-CUDA ``device`` without ``ceilings``, or ceilings of
        another device than ``device`` (before anything is timed).
    """
    numeric = isinstance(tolerance, int | float) and not isinstance(tolerance, bool)
    if not (numeric and math.isfinite(tolerance) and tolerance > 0):
        raise InputError(expected("a finite number > 0", repr(tolerance), where="tolerance"))
    # The points are checked before the kernels and the device are looked for: each point
    # runs alone through run_trials, which therefore never sees a point listed twice.
    counts = _check_heads(heads)
    if points is not None and (
        isinstance(points, TrialPoint | str | bytes) or not isinstance(points, Sequence)
    ):
        raise InputError(expected("a list of TrialPoint", type(points).__name__, where="points"))
    if points is not None and not points:
        # run_trials refuses no points, but it gets them one at a time: none would time
        # nothing and return [] without a word.
        raise InputError(
            expected("at least one trial point (None for the defaults)", "[]", where="points")
        )
    chosen = _crossed(DEFAULT_POINTS if points is None else points, counts)
    mla = load_mla()
    if device.startswith("cuda") and not cuda_available():
        raise no_cuda_error(len(chosen))
    import torch

    elt = getattr(torch, dtype, None)
    if not isinstance(elt, torch.dtype):
        raise InputError(expected("a torch dtype name such as 'bfloat16'", repr(dtype)))
    if strategies is not None:
        names = list(strategies)
    else:
        hopper = device.startswith("cuda") and torch.cuda.get_device_capability(device)[0] == 9
        names = [s for s in mla.STRATEGIES if s != "seesaw" or hopper]
    for point in chosen:
        # Costed now as well as after the timings: a point the roofline cannot place
        # would otherwise fail only once every other point had been timed.
        _point_cost(point, elt.itemsize)
    if ceilings is None:
        if not device.startswith("cuda"):
            raise InputError(expected(f"ceilings= for device {device!r}", "none"))
        # The cached ceilings when they were measured at the full sizes, else a new run.
        ceilings = measure_ceilings()
    _check_ceilings(ceilings, device)
    timer = timer or Timer()
    errors: dict[tuple[str, str], float] = {}
    references: dict[str, Any] = {}

    def maker(strategy: str) -> Any:
        def make(point: TrialPoint) -> Any:
            inputs = _inputs(point, torch, seed, device, elt)
            q, cache, table = inputs["q"], inputs["kv_cache"], inputs["block_table"]
            plan = mla.MLADecodePlan(
                inputs["cache_seqlens"],
                s_q=point.s,
                h_q=q.shape[2],
                page_size=_PAGE,
                softmax_scale=inputs["softmax_scale"],
                dtype=q.dtype,
                device=q.device,
                strategy=strategy,
            )
            out = torch.empty(
                q.shape[0], q.shape[1], q.shape[2], 512, dtype=q.dtype, device=q.device
            )
            lse = torch.empty(
                q.shape[0], q.shape[2], q.shape[1], dtype=torch.float32, device=q.device
            )

            def verify(_result: object) -> None:
                # Runs after one call into poisoned out and lse (run_trials), before timing.
                key = str(point)
                if key not in references:
                    references[key] = mla.mla_decode_ref(
                        q,
                        cache,
                        table,
                        inputs["cache_seqlens"],
                        softmax_scale=inputs["softmax_scale"],
                        causal=True,
                    )[0]
                ref = references[key]
                error = math.inf
                if bool(torch.isfinite(out).all()) and bool(torch.isfinite(lse).all()):
                    error = _relative_error(out.double(), ref.to(torch.float64))
                errors[(key, strategy)] = error
                if not error <= tolerance:
                    raise InputError(
                        expected(
                            f"a relative error <= {tolerance:g} against the float64 reference",
                            f"{error:.3g}",
                        )
                    )

            return TrialCall(
                fn=lambda: plan.run(q, cache, table, out=out, lse=lse),
                outputs=(out, lse),
                check=verify if check else None,
            )

        return make

    trials: list[TrialResult] = []
    for point in chosen:
        for strategy in names:
            trials += run_trials(
                maker(strategy), points=[point], impl=f"kernelopt_{strategy}", timer=timer
            )
    results = []
    for trial in trials:
        p = trial.point
        cost = _point_cost(p, elt.itemsize)
        line = Roofline(ceilings=ceilings, cost=cost)
        metrics: dict[str, float] = {}
        if trial.measurement is not None:
            m = trial.measurement
            # Off CUDA the caller gave the host's ceilings (_check_ceilings): the host-clock
            # time is placed on them as a time, whatever clock the timer names.
            on_cuda = device.startswith("cuda")
            placed = line.place(m) if on_cuda else line.place(m.median, unit=m.unit)
            metrics = placed.metrics()
        strategy = trial.impl.removeprefix("kernelopt_")
        results.append(
            MLATrial(
                trial=trial,
                cost=cost,
                floor_us=line.floor("us"),
                rel_err=errors.get((str(p), strategy)),
                metrics=metrics,
            )
        )
    return results

"""Time one call of a function: CUDA events, a cold or hot L2, CUDA graphs, noise-based stopping.

The procedure, and why:

1. One untimed call (compilation, autotuning, handle creation stay out of the numbers),
   then warm-up calls for ``warmup_ms`` of host time (clocks rise, caches of the driver
   fill).
2. Steady state: warm-up goes on in windows of calls, timed as the samples are, until
   the median per-call times of two consecutive windows agree within
   ``settle_tolerance`` and, where NVML reports power, a GPU drawing close to its limit
   has started to cap (:mod:`kernelopt.bench._settle`), or for at most ``settle_ms``.
   Under a power cap a heavy kernel is fast for its first tens of milliseconds and slower
   after; a kernel inside a model runs in the sustained state, so that is what is timed.
3. NVML reads clocks and throttle reasons (:mod:`kernelopt.bench.device`).
4. Batches of samples. In ``"cold"`` mode a buffer of twice the L2 is written before
   each call (outside the events), or the caller's input sets rotate and are proven to
   wrap the L2; in ``"hot"`` mode calls run back to back on the same inputs; in
   ``"graph"`` mode N calls are captured in one CUDA graph and each replay's time is
   divided by N, removing the per-launch host overhead that events include.
5. Sampling stops when the median's 95 % interval is within ``± rel_precision``, or at
   ``max_samples``, or after ``max_time_ms``: noisy kernels get more samples, quiet ones
   fewer.
6. NVML is read again; a clock that moved or a power/thermal slowdown is flagged.

Without CUDA the same API times with :func:`time.perf_counter_ns` and says so
(``backend="cpu-perf-counter"``). torch is imported only when a CUDA timing starts.
"""

from __future__ import annotations

import contextlib
import functools
import math
import sys
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import attrs

from kernelopt._errors import DeviceError, InputError, expected
from kernelopt.bench import guards
from kernelopt.bench._nvtx import nvtx_range
from kernelopt.bench._settle import SettleVerdict, Window, settle_verdict
from kernelopt.bench._stats import StopRule, quantile, stop_reason
from kernelopt.bench.device import DeviceState, clock_changes, read_device_state
from kernelopt.bench.measurement import MODES, Measurement, at_least, one_of

__all__ = [
    "DEFAULT_L2_BYTES",
    "Timer",
    "cuda_available",
    "device_l2_bytes",
    "evicting_bytes",
    "measure",
]

# Used when the device does not report its L2 size: larger than any L2 shipped so far
# (H200: 60 MiB), so a flush of twice this still clears the cache.
DEFAULT_L2_BYTES = 128 * 1024 * 1024
_BATCH_TARGET_MS = 10.0  # host time per batch of samples between synchronizations
_GRAPH_TARGET_MS = 2.0  # device time one graph replay should take in auto graph mode
_OVERHEAD_SAMPLES = 50
_WINDOW_MIN_SAMPLES = 3  # a window's median needs a few calls, however long each call is
_FLUSH_BUFFERS: dict[tuple[int, int], Any] = {}

ArgSet = Sequence[Any] | Mapping[str, Any]


def cuda_available() -> bool:
    """True when torch is installed and sees a CUDA device (imports torch)."""
    try:
        import torch
    except ImportError:
        return False
    return bool(torch.cuda.is_available())


def no_cuda_reason() -> str:
    """Why torch sees no CUDA device here, and what to do about it, in words.

    Returns
    -------
    str
        One of: torch is not installed; torch is built without CUDA (``2.11.0+cpu``), so
        a CUDA build is needed; or a CUDA build sees no GPU, so the process must run where
        a GPU, its driver and its visibility (``CUDA_VISIBLE_DEVICES``) are there.
    """
    try:
        import torch
    except ImportError:
        return "torch is not installed; install a CUDA build of torch"
    if torch.version.cuda is None:
        return (
            f"torch {torch.__version__} is built without CUDA; install a CUDA build of torch "
            "on a machine with an NVIDIA GPU"
        )
    return (
        f"torch {torch.__version__} (CUDA {torch.version.cuda}) sees no GPU "
        "(torch.cuda.is_available() is False); run it on a machine with an NVIDIA GPU, its "
        "driver loaded and the GPU visible to the process (nvidia-smi, CUDA_VISIBLE_DEVICES)"
    )


def device_l2_bytes(device: int | None = None) -> int:
    """L2 cache size of a CUDA device in bytes (``DEFAULT_L2_BYTES`` if not reported).

    Raises
    ------
    DeviceError
        Without a CUDA device (torch's own error there is a bare AssertionError).
    """
    if not cuda_available():
        raise DeviceError(
            expected("a CUDA device to read the L2 size of", f"none: {no_cuda_reason()}")
        )
    import torch

    index = torch.cuda.current_device() if device is None else device
    size = int(getattr(torch.cuda.get_device_properties(index), "L2_cache_size", 0) or 0)
    return size if size > 0 else DEFAULT_L2_BYTES


# One piece of memory an argument spans: the address space it lives in (the host, or a
# device), its first and past-the-last byte there, and a lower bound on the bytes it
# touches in between (all of them for a dense tensor; fewer for a strided view).
_Piece = tuple[str, int, int, int]

# Element offsets worked out exactly, to tell whether two strided views touch the same
# bytes, only up to this many elements each (a few MiB of host memory).
_EXACT_ELEMENTS = 1 << 22


def _layout(value: Any) -> tuple[str, int, tuple[int, ...], tuple[int, ...], int] | None:
    """Where a tensor or an array lies: its address space, the address of its first
    element, its sizes, its strides in bytes and its item size; None for anything else
    (or a tensor with no memory of its own, such as a sparse one)."""
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(value, torch.Tensor):
        try:
            address = int(value.data_ptr())
        except (RuntimeError, NotImplementedError):  # sparse, nested: no strided memory
            return None
        item = int(value.element_size())
        space = "host" if value.device.type == "cpu" else str(value.device)
        strides = tuple(int(s) * item for s in value.stride())
        return space, address, tuple(int(n) for n in value.shape), strides, item
    numpy = sys.modules.get("numpy")
    if numpy is not None and hasattr(value, "__array_interface__"):
        array = numpy.asarray(value)  # a view sharing the memory of the object
        address = int(array.__array_interface__["data"][0])
        return "host", address, tuple(array.shape), tuple(array.strides), int(array.itemsize)
    return None


def _span(
    address: int, sizes: tuple[int, ...], strides: tuple[int, ...], item: int
) -> tuple[int, int, int]:
    """``(lo, hi, touched)``: the bytes from the lowest to past the highest a strided
    layout reaches, and a lower bound on the bytes it touches between them.

    A dimension of stride 0 (``expand``, ``broadcast_to``) reaches no new byte, and
    overlapping rows (a sliding window) touch their bytes once: a 4-KiB vector expanded to
    4096 rows spans 4 KiB, not its 16 MiB of elements.
    """
    if any(n == 0 for n in sizes):
        return address, address, 0
    dims = sorted((abs(s), n) for n, s in zip(sizes, strides, strict=True) if n > 1 and s)
    lo = address + sum((n - 1) * s for n, s in zip(sizes, strides, strict=True) if s < 0)
    extent = touched = item  # one element
    dense = True  # whether every byte from lo to lo + extent is touched
    for stride, n in dims:
        if dense and stride <= extent:  # copies that abut or overlap: still one run
            extent += (n - 1) * stride
            touched = extent
        elif stride >= extent:  # disjoint copies
            dense = dense and stride == extent
            touched *= n
            extent += (n - 1) * stride
        else:  # copies overlapping a layout with holes: no more than one copy is sure
            extent += (n - 1) * stride
    return lo, lo + extent, touched


def _pieces(value: Any, found: list[_Piece]) -> None:
    """Add the memory each tensor, array or byte string in ``value`` spans to ``found``,
    walking lists, tuples and mappings; other values span nothing."""
    layout = _layout(value)
    if layout is not None:
        space, address, sizes, strides, item = layout
        lo, hi, touched = _span(address, sizes, strides, item)
        bounds = _storage_bounds(value)
        if bounds is not None:  # a view cannot reach past the memory it views
            lo, hi = max(lo, bounds[0]), min(hi, bounds[1])
            touched = min(touched, max(hi - lo, 0))
        if hi > lo:
            found.append((space, lo, hi, touched))
    elif isinstance(value, (bytes, bytearray, memoryview)):
        found.append((f"object {id(value)}", 0, len(value), len(value)))
    elif isinstance(value, Mapping):
        for item in value.values():
            _pieces(item, found)
    elif isinstance(value, (list, tuple)):
        for item in value:
            _pieces(item, found)


def _storage_bounds(value: Any) -> tuple[int, int] | None:
    """The first and past-the-last byte of the memory a tensor or array views."""
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(value, torch.Tensor):
        try:
            storage = value.untyped_storage()
            return int(storage.data_ptr()), int(storage.data_ptr()) + int(storage.nbytes())
        except (RuntimeError, NotImplementedError):
            return None
    base = value
    while getattr(base, "base", None) is not None:
        base = base.base
    numpy = sys.modules.get("numpy")
    if numpy is not None and isinstance(base, numpy.ndarray) and base.flags.owndata:
        lo, hi, _touched = _span(
            int(base.__array_interface__["data"][0]),
            tuple(base.shape),
            tuple(base.strides),
            int(base.itemsize),
        )
        return lo, hi
    return None


def _merged(intervals: list[tuple[int, int]]) -> list[tuple[int, int]]:
    runs: list[tuple[int, int]] = []
    for lo, hi in sorted(intervals):
        if runs and lo <= runs[-1][1]:
            runs[-1] = (runs[-1][0], max(runs[-1][1], hi))
        else:
            runs.append((lo, hi))
    return runs


def _length(intervals: list[tuple[int, int]]) -> int:
    return sum(hi - lo for lo, hi in _merged(intervals))


def _common(first: list[tuple[int, int]], second: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The bytes in both of two lists of intervals, as intervals."""
    a, b = _merged(first), _merged(second)
    both = []
    i = j = 0
    while i < len(a) and j < len(b):
        lo, hi = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        if lo < hi:
            both.append((lo, hi))
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return both


def _at_least(pieces: list[_Piece]) -> int:
    """Bytes that ``pieces`` of one region surely touch: the union of the dense ones, or
    the most any one strided view touches."""
    dense = [(lo, hi) for _space, lo, hi, touched in pieces if touched == hi - lo]
    return max([_length(dense), *(touched for *_where, touched in pieces)])


def _footprint(per_set: list[list[_Piece]]) -> tuple[list[int], int, int]:
    """For sets used in turn: the bytes the other sets bring that each set does not hold,
    the bytes every set holds, and the bytes of all sets together.

    Pieces are merged where they overlap in one address space (views of one buffer count
    its bytes once). Where a strided view with holes overlaps others, which bytes it
    shares is not worked out: a set holding any piece of that region is counted as
    bringing none of it and none of it as shared, so the rotation's guarantee is never
    overstated.
    """
    tagged = sorted((piece, index) for index, pieces in enumerate(per_set) for piece in pieces)
    evicting = [0] * len(per_set)
    shared = total = 0
    region: list[tuple[_Piece, int]] = []

    def close(region: list[tuple[_Piece, int]]) -> None:
        nonlocal shared, total
        if not region:
            return
        by_set: list[list[_Piece]] = [[] for _ in per_set]
        for piece, index in region:
            by_set[index].append(piece)
        everyone = [piece for piece, _index in region]
        if all(touched == hi - lo for _space, lo, hi, touched in everyone):
            whole = _length([(lo, hi) for _space, lo, hi, _touched in everyone])
            total += whole
            spans = [[(lo, hi) for _space, lo, hi, _touched in own] for own in by_set]
            for index, runs in enumerate(spans):
                evicting[index] += whole - _length(runs)
            held = spans[0]
            for runs in spans[1:]:
                held = _common(held, runs)
            shared += _length(held)
            return
        # Which bytes the sets share here is not worked out: none is said to be shared.
        total += _at_least(everyone)
        for index, own in enumerate(by_set):
            if not own:
                evicting[index] += _at_least(everyone)

    reach = 0  # the end of the region's furthest piece
    for piece, index in tagged:
        space, lo, hi, _touched = piece
        if region and (space != region[0][0][0] or lo >= reach):
            close(region)
            region = []
        reach = max(reach, hi) if region else hi
        region.append((piece, index))
    close(region)
    return evicting, shared, total


def _set_pieces(inputs: Sequence[ArgSet]) -> list[list[_Piece]]:
    per_set = []
    for args in inputs:
        found: list[_Piece] = []
        _pieces(args, found)
        per_set.append(found)
    return per_set


def _element_starts(layout: tuple[str, int, tuple[int, ...], tuple[int, ...], int]) -> Any:
    """The sorted addresses of a layout's elements, or None past ``_EXACT_ELEMENTS``."""
    import numpy as np

    _space, address, sizes, strides, _item = layout
    dims = [(n, s) for n, s in zip(sizes, strides, strict=True) if n > 1 and s]
    if math.prod(n for n, _s in dims) > _EXACT_ELEMENTS:
        return None
    starts = np.zeros(1, dtype=np.int64)
    for n, stride in dims:
        starts = (starts[:, None] + np.arange(n, dtype=np.int64) * stride).reshape(-1)
    return np.unique(starts + address)


def _share_memory(first: Any, second: Any) -> bool:
    """Whether two tensors or arrays surely have a byte in common.

    Spans that overlap do when both views are dense; strided views with holes (the two
    halves of each row) are compared element by element, and views too large for that
    are not said to share memory.
    """
    import numpy as np

    a, b = _layout(first), _layout(second)
    if a is None or b is None or a[0] != b[0]:
        return False
    (lo_a, hi_a, touched_a), (lo_b, hi_b, touched_b) = _span(*a[1:]), _span(*b[1:])
    if not (lo_a < hi_b and lo_b < hi_a):
        return False
    if touched_a == hi_a - lo_a and touched_b == hi_b - lo_b:
        return True
    starts_a, starts_b = _element_starts(a), _element_starts(b)
    if starts_a is None or starts_b is None:
        return False
    # An element of a at x meets one of b at y when x - item_a < y < x + item_b.
    first_after = np.searchsorted(starts_a, starts_b - a[4], side="right")
    first_past = np.searchsorted(starts_a, starts_b + b[4], side="left")
    return bool((first_after < first_past).any())


def _named_arguments(value: Any, where: str) -> list[tuple[str, Any]]:
    """Each tensor or array in an input set with the expression that reaches it."""
    if isinstance(value, Mapping):
        return [
            n for key, item in value.items() for n in _named_arguments(item, f"{where}[{key!r}]")
        ]
    if isinstance(value, (list, tuple)):
        return [n for i, item in enumerate(value) for n in _named_arguments(item, f"{where}[{i}]")]
    return [(where, value)] if _layout(value) is not None else []


def _outputs_in_inputs(guarded: guards._Guarded, inputs: Sequence[ArgSet]) -> list[str]:
    """``"outputs[0] shares memory with inputs[0][0]"`` for each output that does with an
    argument of an input set (the first such argument).

    Sharing memory alone says nothing wrong: a kernel's output buffer is often passed in
    every input set (``fn(x, out)``). It matters when the kernel also reads it (one that
    works in place): the kernel read the poison. So it is named only where the check
    failed.
    """
    arguments = [
        named for i, args in enumerate(inputs) for named in _named_arguments(args, f"inputs[{i}]")
    ]
    found = []
    for out_where, tensor, _region in guarded:
        for in_where, argument in arguments:
            if _share_memory(tensor, argument):
                found.append(f"{out_where} shares memory with {in_where}")
                break
    return found


def evicting_bytes(inputs: Sequence[ArgSet]) -> tuple[int, int]:
    """Bytes that the other input sets bring between two uses of one set.

    With sets used in turn, set *i* is reused after every other set ran once; what those
    sets touch that set *i* does not hold is what evicts set *i* from the L2. Buffers
    shared by every set (weights passed to each) stay in cache whatever the rotation.

    Parameters
    ----------
    inputs : sequence of argument sets
        Tuples or lists of positional arguments, or mappings of keyword arguments.
        Tensors and arrays count by the bytes of memory they span: an expanded or
        broadcast tensor counts the memory under it, not its elements, and views that
        overlap in one buffer count its bytes once (a strided view with holes counts no
        more than the elements it holds). Other values count zero.

    Returns
    -------
    (evicting, shared) : tuple of int
        The smallest, over sets, of the bytes the other sets bring (the rotation's
        guarantee), and the bytes shared by every set.

    Raises
    ------
    InputError
        As :func:`measure` refuses its ``inputs=``: no input set, or input sets that are
        not a sequence of tuples, lists or mappings (a lone tensor ``x`` is the set
        ``(x,)``).
    """
    _check_input_sets(inputs)
    per_set = _set_pieces(inputs)
    evicting, shared, total = _footprint(per_set)
    if len(per_set) < 2:
        return 0, total
    return min(evicting), shared


def _check_input_sets(inputs: object) -> None:
    """Refuse what :func:`measure` and :func:`evicting_bytes` cannot take as input sets.

    The sets must be a sequence (a list or tuple) of at least one set, each a tuple or
    list of positional arguments or a mapping of keyword arguments. The whole is checked
    before its items: a mapping would be iterated as its keys and a string as its
    characters, each then refused under another name, and a number has no items at all.

    Parameters
    ----------
    inputs : object
        What the caller passed as the input sets.

    Raises
    ------
    InputError
        ``inputs: Expected input sets as tuples or mappings, got Tensor`` for a lone
        tensor (or a number, a mapping, a string, or such an item), or ``inputs:
        Expected at least one input set, got an empty sequence``.
    """
    if isinstance(inputs, str | bytes | Mapping) or not isinstance(inputs, Sequence):
        raise InputError(
            expected("input sets as tuples or mappings", type(inputs).__name__, where="inputs")
        )
    if len(inputs) == 0:
        raise InputError(expected("at least one input set", "an empty sequence", where="inputs"))
    for args in inputs:
        if not isinstance(args, Mapping | list | tuple):
            raise InputError(
                expected("input sets as tuples or mappings", type(args).__name__, where="inputs")
            )


def _calls(fn: Callable[..., object], inputs: Sequence[ArgSet] | None) -> list[Callable[[], Any]]:
    if not callable(fn):
        # Checked before the warm-up: measure(kernel(x)) passes the call's result.
        raise InputError(expected("a callable to time", type(fn).__name__, where="fn"))
    if inputs is None:
        return [fn]
    _check_input_sets(inputs)
    return [
        functools.partial(fn, **args) if isinstance(args, Mapping) else functools.partial(fn, *args)
        for args in inputs
    ]


class _Runner:
    """One function prepared for sampling on one backend."""

    backend = "cpu-perf-counter"

    def __init__(
        self,
        timer: Timer,
        calls: list[Callable[[], Any]],
        outputs: guards._Guarded | None,
        cache: str,
    ) -> None:
        self.timer = timer
        self.calls = calls
        self.outputs = outputs  # the outputs to poison and check, with their regions
        self.inputs: Sequence[ArgSet] | None = None  # named where an output shares memory
        self.cache = cache
        self.calls_per_sample = 1
        self.next_call = 0
        self.estimate_ms = 0.0  # per-call time seen during warm-up (host clock, synced)
        self.warmup_calls = 0
        self.warmup_time_ms = 0.0
        self.settled: bool | None = None  # None: settling was not asked for (settle_ms=0)
        self.settle_notes: list[str] = []
        self.reads_device = False  # whether device_state() can read NVML during warm-up

    def call(self) -> None:
        self.calls[self.next_call % len(self.calls)]()
        self.next_call += 1

    def sync(self) -> None:
        """Wait for the device."""

    def before_call(self) -> None:
        if self.outputs is not None:
            guards._poison_guarded(self.outputs)

    def prepare(self) -> None:
        """Warm up for ``warmup_ms``, then until the per-call time settles; time both."""
        began = time.perf_counter()
        self.warmup()
        self.settle()
        self.warmup_time_ms = (time.perf_counter() - began) * 1000.0

    def warmup(self) -> None:
        self.before_call()
        self.call()  # compilation and first-call costs, excluded from the estimate
        self.sync()
        count = 0
        began = time.perf_counter()
        elapsed_ms = 0.0
        while count < 2 or elapsed_ms < self.timer.warmup_ms:
            self.before_call()
            self.call()
            self.sync()
            count += 1
            elapsed_ms = (time.perf_counter() - began) * 1000.0
        self.estimate_ms = elapsed_ms / count
        self.warmup_calls = count + 1

    def settle(self) -> None:
        """Warm up in windows until two consecutive ones agree (see ``_settle``)."""
        timer = self.timer
        if timer.settle_ms <= 0:
            return
        began = time.perf_counter()
        deadline = began + timer.settle_ms / 1000.0
        length = timer.settle_window_ms
        longest = max(length, timer.settle_ms / 4.0)
        windows: list[Window] = []
        verdict: SettleVerdict | None = None
        while verdict is None or not (verdict.settled or time.perf_counter() >= deadline):
            if verdict is not None and not verdict.agree:
                # A power cap holds the clocks down in steps (an H200 stepped between 1523
                # and 1601 us per matmul within a quarter second): short windows disagree,
                # longer ones average over the steps.
                length = min(2.0 * length, longest)
            windows.append(self._window(length, deadline))
            verdict = settle_verdict(
                windows, tolerance=timer.settle_tolerance, power_margin=timer.power_margin
            )
        self.settled = verdict.settled
        self.warmup_calls += sum(len(w.samples) for w in windows) * self.calls_per_sample
        if not verdict.settled:
            spent = (time.perf_counter() - began) * 1000.0
            self.settle_notes.append(
                f"warm-up did not settle in {spent:.0f} ms (settle_ms {timer.settle_ms:g}, "
                f"{len(windows)} windows): {verdict.reason}; the per-call time may still "
                "have been moving"
            )

    def _window(self, length_ms: float, deadline: float) -> Window:
        began = time.perf_counter()
        samples: list[float] = []
        states: list[DeviceState | None] = []

        def probe() -> None:
            states.append(self.device_state())

        while True:
            k = self.batch_size(1000)
            samples.extend(self.sample(k, probe if self.reads_device else None))
            now = time.perf_counter()
            long_enough = (now - began) * 1000.0 >= length_ms
            if now >= deadline or (long_enough and len(samples) >= _WINDOW_MIN_SAMPLES):
                break
        elapsed_ms = (time.perf_counter() - began) * 1000.0
        return Window(samples=samples, elapsed_ms=elapsed_ms, state=states[-1] if states else None)

    def batch_size(self, remaining: int) -> int:
        per_sample = max(self.estimate_ms * self.calls_per_sample, 1e-3)
        return max(1, min(remaining, 100, int(_BATCH_TARGET_MS / per_sample)))

    def sample(self, k: int, probe: Callable[[], None] | None = None) -> list[float]:
        """Take ``k`` samples, µs per call; ``probe()`` runs once, after the calls."""
        samples = []
        n = self.calls_per_sample
        for _ in range(k):
            self.before_call()
            began = time.perf_counter_ns()
            for _ in range(n):
                self.call()
            samples.append((time.perf_counter_ns() - began) / 1000.0 / n)
        if probe is not None:
            probe()
        return samples

    def overhead(self) -> float:
        times = []
        for _ in range(_OVERHEAD_SAMPLES):
            began = time.perf_counter_ns()
            times.append((time.perf_counter_ns() - began) / 1000.0)
        return quantile(times, 0.5)

    def check_outputs(self) -> None:
        if self.outputs is None:
            return
        self.sync()
        failure = guards._guard_failure(self.outputs, by=" by each timed call", timed=True)
        if failure is not None:
            if self.inputs is not None:
                shared = _outputs_in_inputs(self.outputs, self.inputs)
                failure = guards._guard_failure(
                    self.outputs, by=" by each timed call", timed=True, shared=shared
                )
            raise InputError(str(failure))

    def device_state(self) -> DeviceState | None:
        return None

    def gpu_name(self) -> str:
        return "cpu"


class _CudaRunner(_Runner):
    backend = "cuda-events"

    def __init__(
        self,
        timer: Timer,
        calls: list[Callable[[], Any]],
        outputs: guards._Guarded | None,
        cache: str,
        device: int,
        l2_bytes: int,
    ) -> None:
        super().__init__(timer, calls, outputs, cache)
        import torch

        self.torch: Any = torch
        self.device = device
        self.stream = torch.cuda.current_stream(device)
        self.flush: Any = None
        if cache == "flush":
            size = int(l2_bytes * timer.flush_factor) // 4 * 4
            key = (device, size)
            if key not in _FLUSH_BUFFERS:
                _FLUSH_BUFFERS[key] = torch.empty(size // 4, dtype=torch.int32, device=device)
            self.flush = _FLUSH_BUFFERS[key]
        self.graph: Any = None
        self.props = torch.cuda.get_device_properties(device)
        self.reads_device = timer.read_clocks

    def sync(self) -> None:
        self.torch.cuda.synchronize(self.device)

    def before_call(self) -> None:
        super().before_call()
        if self.flush is not None:
            self.flush.zero_()  # writes 2x L2 bytes: every line the call needs is evicted

    def _event_pairs(self, k: int) -> tuple[list[Any], list[Any]]:
        event = self.torch.cuda.Event
        return (
            [event(enable_timing=True) for _ in range(k)],
            [event(enable_timing=True) for _ in range(k)],
        )

    def build_graph(self) -> None:
        """Capture ``calls_per_sample`` calls (rotating through input sets) in one graph."""
        torch = self.torch
        if self.timer.graph_calls is not None:
            n = self.timer.graph_calls
        else:
            starts, ends = self._event_pairs(1)
            starts[0].record(self.stream)
            for _ in range(5):
                self.call()
            ends[0].record(self.stream)
            ends[0].synchronize()
            per_call_ms = max(starts[0].elapsed_time(ends[0]) / 5, 1e-4)
            n = max(10, min(500, round(_GRAPH_TARGET_MS / per_call_ms)))
        n = max(n, len(self.calls))
        n -= n % len(self.calls)  # every input set equally often
        side = torch.cuda.Stream(self.device)
        side.wait_stream(self.stream)
        with torch.cuda.stream(side):  # capture needs warm-up on a side stream
            for _ in range(3):
                self.call()
        self.stream.wait_stream(side)
        self.sync()
        graph = torch.cuda.CUDAGraph()
        try:
            with torch.cuda.graph(graph):
                for _ in range(n):
                    self.call()
        except Exception as error:
            raise InputError(
                expected("a function CUDA graphs can capture", f"{type(error).__name__}: {error}")
            ) from error
        self.sync()
        self.graph = graph
        self.calls_per_sample = n

    def warmup(self) -> None:
        with self.torch.cuda.device(self.device):
            super().warmup()
            if self.timer.mode == "graph":
                self.build_graph()
                self.graph.replay()
                self.sync()

    def sample(self, k: int, probe: Callable[[], None] | None = None) -> list[float]:
        """Take ``k`` samples, µs per call; ``probe()`` runs while the queued calls run."""
        starts, ends = self._event_pairs(k)
        with self.torch.cuda.device(self.device):
            for i in range(k):
                self.before_call()
                starts[i].record(self.stream)
                if self.graph is not None:
                    self.graph.replay()
                else:
                    self.call()
                ends[i].record(self.stream)
            if probe is not None:
                probe()  # the device is busy with the calls just queued: power under load
            ends[-1].synchronize()
        n = self.calls_per_sample
        return [s.elapsed_time(e) * 1000.0 / n for s, e in zip(starts, ends, strict=True)]

    def overhead(self) -> float:
        starts, ends = self._event_pairs(_OVERHEAD_SAMPLES)
        for start, end in zip(starts, ends, strict=True):
            start.record(self.stream)
            end.record(self.stream)
        ends[-1].synchronize()
        return quantile(
            [s.elapsed_time(e) * 1000.0 for s, e in zip(starts, ends, strict=True)], 0.5
        )

    def device_state(self) -> DeviceState | None:
        if not self.timer.read_clocks:
            return None
        return read_device_state(self.device, uuid=str(getattr(self.props, "uuid", "") or ""))

    def gpu_name(self) -> str:
        return str(self.props.name)


def require_timer(timer: object) -> None:
    """Refuse a ``timer`` that is neither None nor has a ``measure`` method, before a run
    builds anything: every config or point would otherwise be built, then recorded as
    failed to time.

    Raises
    ------
    InputError
        ``timer: Expected a Timer (or an object with .measure), got str``.
    """
    if timer is not None and not callable(getattr(timer, "measure", None)):
        raise InputError(
            expected("a Timer (or an object with .measure)", type(timer).__name__, where="timer")
        )


def require_measurement(value: object) -> Measurement:
    """``value``, the result of a timer's ``measure``, when it is a :class:`Measurement`.

    A stand-in timer returning a bare number (``triton.testing.do_bench``'s milliseconds,
    say) would otherwise be kept as the measurement and fail far from its cause, or, as a
    NaN, compare as never faster than anything.

    Raises
    ------
    InputError
        ``timer.measure: Expected a Measurement, got float``.
    """
    if not isinstance(value, Measurement):
        raise InputError(expected("a Measurement", type(value).__name__, where="timer.measure"))
    return value


def _positive(name: str) -> Callable[[object, object, float], None]:
    def check(_instance: object, _attribute: object, value: float) -> None:
        # bool is an int to Python, but True is no duration.
        number = isinstance(value, (int, float)) and not isinstance(value, bool)
        if not (number and value > 0 and math.isfinite(value)):
            # repr: a "5" given for 5 must show its quotes, or the message reads as nonsense.
            raise InputError(expected("a positive number", repr(value), where=name))

    return check


def _non_negative(name: str) -> Callable[[object, object, float], None]:
    def check(_instance: object, _attribute: object, value: float) -> None:
        number = isinstance(value, (int, float)) and not isinstance(value, bool)
        if not (number and value >= 0 and math.isfinite(value)):
            raise InputError(expected("a number >= 0", repr(value), where=name))

    return check


def _device_index(_instance: object, _attribute: object, value: int | None) -> None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
        raise InputError(expected("a CUDA device index >= 0 or None", repr(value), where="device"))


def _flag(_instance: object, attribute: attrs.Attribute[bool], value: object) -> None:
    if not isinstance(value, bool):
        raise InputError(expected("a bool", repr(value), where=attribute.name))


@attrs.frozen(kw_only=True)
class Timer:
    """Settings for timing calls; reuse one Timer for every version you compare.

    Parameters
    ----------
    mode : {"cold", "hot", "graph"}
        ``"cold"``: L2 cleared before each call, or the input sets rotated (the default,
        what a kernel sees in a model where other layers ran in between). ``"hot"``:
        back-to-back calls on the same inputs (data may sit in L2: the hot-l2-timing
        anti-pattern when the working set fits). ``"graph"``: CUDA-graph replays of
        N calls, for launch-bound kernels.
    warmup_ms : float
        Host time spent in warm-up calls before the settling windows start, ms.
    settle_ms : float
        Cap on the settling phase, ms: warm-up goes on in windows of calls until two
        consecutive windows agree (and no power cap is pending), or this long. 0 turns
        settling off. 1 s lets a heavy kernel reach its power-capped clocks; a light or
        already steady kernel stops after two windows.
    settle_window_ms : float
        Host time of the first settling window, ms; a window that disagrees with the one
        before doubles the next (up to ``settle_ms / 4``).
    settle_tolerance : float
        Relative difference of two windows' median per-call times still counted as
        agreeing (0.01 = 1 %; medians within 0.5 µs, the events' resolution, always agree).
    power_margin : float
        Share of the enforced power limit (NVML) from which a GPU running without a
        power cap is expected to cap soon: warm-up does not stop there (above 1, never).
    min_samples, max_samples : int
        Bounds on the number of samples.
    max_time_ms : float
        Cap on sampling time, ms.
    rel_precision : float
        Stop when the median's 95 % interval is within ``± rel_precision`` (0.005 =
        ±0.5 %).
    graph_calls : int, optional
        Calls per graph replay in graph mode; None picks ~2 ms of work per replay
        (10 to 500 calls).
    l2_bytes : int, optional
        L2 size to assume; None reads it from the device. On the CPU backend, giving it
        enables the rotation check.
    flush_factor : float
        Flush buffer size in multiples of the L2 (2 = twice the L2).
    backend : {"auto", "cuda-events", "cpu-perf-counter"}
        ``"auto"`` uses CUDA events when a CUDA device is present.
    device : int, optional
        CUDA device index; None is the current device.
    read_clocks : bool
        Read NVML clocks and throttle reasons before and after sampling.
    clock_tolerance : float
        Relative clock change flagged as ``clocks_moved`` (0.05 = 5 %).
    strict_rotation : bool
        In cold mode with input sets that do not provably wrap the L2: raise (True) or
        warn and record the cache as ``"none"`` (False).
    nvtx : bool
        Push NVTX ranges around warm-up and sample batches.
    """

    mode: str = attrs.field(default="cold", validator=one_of(*MODES))
    warmup_ms: float = attrs.field(default=25.0, validator=_positive("warmup_ms"))
    settle_ms: float = attrs.field(default=1000.0, validator=_non_negative("settle_ms"))
    settle_window_ms: float = attrs.field(default=20.0, validator=_positive("settle_window_ms"))
    settle_tolerance: float = attrs.field(default=0.01, validator=_positive("settle_tolerance"))
    power_margin: float = attrs.field(default=0.9, validator=_positive("power_margin"))
    min_samples: int = attrs.field(default=10, validator=at_least(1))
    max_samples: int = attrs.field(default=1000, validator=at_least(1))
    max_time_ms: float = attrs.field(default=1000.0, validator=_positive("max_time_ms"))
    rel_precision: float = attrs.field(default=0.005, validator=_positive("rel_precision"))
    graph_calls: int | None = None
    l2_bytes: int | None = None
    flush_factor: float = attrs.field(default=2.0, validator=_positive("flush_factor"))
    backend: str = attrs.field(
        default="auto",
        validator=one_of("auto", "cuda-events", "cpu-perf-counter"),
    )
    device: int | None = attrs.field(default=None, validator=_device_index)
    read_clocks: bool = attrs.field(default=True, validator=_flag)
    clock_tolerance: float = attrs.field(default=0.05, validator=_positive("clock_tolerance"))
    strict_rotation: bool = attrs.field(default=True, validator=_flag)
    nvtx: bool = attrs.field(default=True, validator=_flag)

    def __attrs_post_init__(self) -> None:
        if self.max_samples < self.min_samples:
            raise InputError(
                expected(
                    f"an integer >= min_samples ({self.min_samples})",
                    repr(self.max_samples),
                    where="max_samples",
                )
            )
        if self.graph_calls is not None and (
            isinstance(self.graph_calls, bool)
            or not isinstance(self.graph_calls, int)
            or self.graph_calls < 1
        ):
            raise InputError(
                expected("an integer >= 1 or None", repr(self.graph_calls), where="graph_calls")
            )
        if self.l2_bytes is not None and (
            isinstance(self.l2_bytes, bool)
            or not isinstance(self.l2_bytes, int)
            or self.l2_bytes < 1
        ):
            raise InputError(
                expected("a positive integer or None", repr(self.l2_bytes), where="l2_bytes")
            )

    def set_up(self) -> None:
        """Do ahead of time the one-time work of a process's first timing, which no later
        timing repeats: import torch to look for a CUDA device, query the device (its
        first query starts CUDA) and start NVML.

        Callers that hold a clock of their own (:func:`~kernelopt.bench.tune`'s budget)
        call it before starting that clock: importing torch alone takes a second or more.
        It raises nothing: a device that fails here fails :meth:`measure` too, where the
        caller records it.
        """
        if self.backend == "cpu-perf-counter":
            return
        with contextlib.suppress(Exception):
            if not cuda_available():
                return
            import torch

            device = torch.cuda.current_device() if self.device is None else self.device
            if self.l2_bytes is None:
                device_l2_bytes(device)
            if self.read_clocks:
                read_device_state(device)

    def _backend(self) -> str:
        if self.backend == "cpu-perf-counter":
            return self.backend
        if cuda_available():
            return "cuda-events"
        if self.backend == "cuda-events":
            # "got none" alone left the user to find out why torch sees no GPU.
            raise DeviceError(
                expected(
                    "a CUDA device for backend='cuda-events'",
                    f"none: {no_cuda_reason()}; or time on the host clock with "
                    "backend='cpu-perf-counter'",
                )
            )
        return "cpu-perf-counter"

    def _cache(
        self, inputs: Sequence[ArgSet] | None, l2_bytes: int | None, notes: list[str]
    ) -> str:
        if self.mode == "hot" or (self.mode == "graph" and inputs is None):
            if inputs is not None and l2_bytes is not None:
                every = [piece for pieces in _set_pieces(inputs) for piece in pieces]
                _evicting, _shared, held = _footprint([every])
                if held < l2_bytes:
                    notes.append(
                        f"hot-l2-timing: the {held} input bytes fit in the "
                        f"{l2_bytes}-byte L2, so hot calls read them from cache"
                    )
            return "none"
        if inputs is None:
            return "flush"
        if len(inputs) == 1:  # nothing rotates: flush when cold, hot in a graph
            return "flush" if self.mode == "cold" else "none"
        if l2_bytes is None:
            notes.append("input sets rotated, but the cache size is unknown: wrap not checked")
            return "none"
        evicting, shared = evicting_bytes(inputs)
        if shared:
            notes.append(f"{shared} bytes are shared by every input set and stay in cache")
        if evicting >= l2_bytes:
            return "rotate"
        message = expected(
            f"input sets whose rotation evicts the L2 ({l2_bytes} bytes)",
            f"{evicting} bytes brought in between two uses of a set "
            f"(add sets or use mode='cold' without inputs to flush)",
            where="inputs",
        )
        if self.strict_rotation:
            raise InputError(message)
        warnings.warn(message, stacklevel=4)
        notes.append("input sets do not wrap the L2: timing is partly hot")
        return "none"

    def _runner(
        self,
        fn: Callable[..., object],
        inputs: Sequence[ArgSet] | None,
        outputs: Any,
        notes: list[str],
        written: Any = None,
        names: tuple[str, str] = ("outputs", "written"),
    ) -> _Runner:
        calls = _calls(fn, inputs)
        guarded = None
        if outputs is not None:
            # All checked before the first call poisons anything: [] turned the check off.
            guarded = guards._guarded(outputs, written, *names)
        elif written is not None:
            raise InputError(
                expected(
                    f"{names[0]}= holding the regions of {names[1]}=", "no outputs", where=names[1]
                )
            )
        backend = self._backend()
        if backend == "cuda-events":
            import torch

            device = torch.cuda.current_device() if self.device is None else self.device
            l2 = self.l2_bytes or device_l2_bytes(device)
            cache = self._cache(inputs, l2, notes)
            runner: _Runner = _CudaRunner(self, calls, guarded, cache, device, l2)
            runner.inputs = inputs
            return runner
        cache = self._cache(inputs, self.l2_bytes, notes)
        notes.append("no CUDA: host clock (time.perf_counter_ns) around each call")
        if cache == "flush":
            cache = "none"
            notes.append("cpu backend: caches are not flushed")
        runner = _Runner(self, calls, guarded, cache)
        runner.inputs = inputs
        if self.mode == "graph":
            runner.calls_per_sample = self.graph_calls or 10
            notes.append("cpu backend: graph mode times back-to-back calls per sample")
        return runner

    def measure(
        self,
        fn: Callable[..., object],
        *,
        inputs: Sequence[ArgSet] | None = None,
        outputs: Any = None,
        label: str = "",
        written: Any = None,
    ) -> Measurement:
        """Time one call of ``fn``.

        Parameters
        ----------
        fn : callable
            ``fn()`` runs one call; with ``inputs``, ``fn(*args)`` (or ``fn(**kwargs)``)
            for each argument set in turn.
        inputs : sequence of tuples or mappings, optional
            Argument sets to rotate through. In cold mode with two or more sets, their
            bytes must provably evict the L2 between two uses of a set (see
            :func:`evicting_bytes`), and no flush is done.
        outputs : Tensor or sequence of Tensor, optional
            Buffers the function overwrites; poisoned before every timed call and
            checked after every batch (:mod:`kernelopt.bench.guards`). Their contents
            are lost, and the poison stays where the check fails. A kernel that reads
            them (one that works in place) reads the poison: where an output left
            unwritten shares memory with an input set's argument, the error names both.
        label : str
            Name for NVTX ranges and records.
        written : optional
            The region of each output the function writes, as
            :func:`~kernelopt.bench.guards.check_written` takes it: every element of it
            must be written by each call, and none outside it.

        Returns
        -------
        Measurement
            Per-call samples in µs and the conditions of the run.

        Raises
        ------
        InputError
            Before anything is called: for a ``label`` that is not a str (the measurement
            would refuse it only after the whole timing), for ``outputs`` that hold no
            tensor (``[]`` would check nothing) or cannot be poisoned, and for
            ``written`` regions that do not fit their outputs. After a batch, for
            outputs left unwritten (or written outside their region).
        """
        if not isinstance(label, str):
            raise InputError(expected("a str", repr(label), where="label"))
        notes: list[str] = []
        runner = self._runner(fn, inputs, outputs, notes, written)
        name = f"kernelopt:{label or getattr(fn, '__name__', 'fn')}"
        with nvtx_range(f"{name}:warmup", enabled=self.nvtx):
            runner.prepare()
        before = runner.device_state()
        rule = StopRule(
            min_samples=self.min_samples,
            max_samples=self.max_samples,
            max_time_ms=self.max_time_ms,
            rel_precision=self.rel_precision,
        )
        samples: list[float] = []
        began = time.perf_counter()
        reason: str | None = None
        while reason is None:
            k = runner.batch_size(self.max_samples - len(samples))
            with nvtx_range(name, enabled=self.nvtx):
                samples.extend(runner.sample(k))
            runner.check_outputs()
            reason = stop_reason(samples, (time.perf_counter() - began) * 1000.0, rule)
        after = runner.device_state()
        return self._finish(runner, samples, reason, before, after, notes, label)

    def _finish(
        self,
        runner: _Runner,
        samples: list[float],
        reason: str,
        before: DeviceState | None,
        after: DeviceState | None,
        notes: list[str],
        label: str,
    ) -> Measurement:
        overhead = runner.overhead()
        moved = clock_changes(before, after, tolerance=self.clock_tolerance)
        notes = [*notes, *runner.settle_notes, *moved]
        if reason == "time_cap" and len(samples) < self.min_samples:
            # One sample is a median of one call: say so, so that no spread is read into it.
            taken = "the first sample" if len(samples) == 1 else f"{len(samples)} samples"
            notes.append(
                f"time cap {self.max_time_ms:g} ms reached after {taken} "
                f"(min_samples {self.min_samples} not met)"
            )
        median = quantile(samples, 0.5)
        if runner.calls_per_sample == 1 and median < 2.0 * overhead:
            notes.append(
                f"median {median:.3g} us is under twice the empty-region time "
                f"{overhead:.3g} us: overhead dominates; try mode='graph'"
            )
        return Measurement(
            samples=samples,
            unit="us",
            mode=self.mode,
            cache=runner.cache,
            backend=runner.backend,
            gpu=runner.gpu_name(),
            device=before,
            device_after=after,
            clocks_moved=bool(moved),
            calls_per_sample=runner.calls_per_sample,
            warmup_calls=runner.warmup_calls,
            warmup_time_ms=runner.warmup_time_ms,
            settled=runner.settled,
            stop_reason=reason,
            overhead=overhead,
            label=label,
            notes=notes,
        )


def measure(
    fn: Callable[..., object],
    *,
    mode: str = "cold",
    inputs: Sequence[ArgSet] | None = None,
    outputs: Any = None,
    label: str = "",
    written: Any = None,
    warmup_ms: float = 25.0,
    settle_ms: float = 1000.0,
    settle_tolerance: float = 0.01,
    min_samples: int = 10,
    max_samples: int = 1000,
    max_time_ms: float = 1000.0,
    rel_precision: float = 0.005,
    graph_calls: int | None = None,
    l2_bytes: int | None = None,
    backend: str = "auto",
    device: int | None = None,
    read_clocks: bool = True,
    strict_rotation: bool = True,
    nvtx: bool = True,
    settle_window_ms: float = 20.0,
    power_margin: float = 0.9,
    flush_factor: float = 2.0,
    clock_tolerance: float = 0.05,
) -> Measurement:
    """Time one call of ``fn`` with a fresh :class:`Timer`.

    ``Timer(mode=..., warmup_ms=..., ...).measure(fn, inputs=..., outputs=..., label=...,
    written=...)``: :class:`Timer` documents the timer's options and :meth:`Timer.measure`
    the call's (``fn``, ``inputs``, ``outputs``, ``label``, ``written``).

    Returns
    -------
    Measurement
        The samples, their statistics and the device state around them.

    Examples
    --------
    >>> from kernelopt.bench import measure
    >>> m = measure(lambda: sum(range(1000)), mode="hot", backend="cpu-perf-counter",
    ...             warmup_ms=1, max_time_ms=20)
    >>> m.backend, m.unit
    ('cpu-perf-counter', 'us')
    """
    timer = Timer(
        mode=mode,
        warmup_ms=warmup_ms,
        settle_ms=settle_ms,
        settle_tolerance=settle_tolerance,
        min_samples=min_samples,
        max_samples=max_samples,
        max_time_ms=max_time_ms,
        rel_precision=rel_precision,
        graph_calls=graph_calls,
        l2_bytes=l2_bytes,
        backend=backend,
        device=device,
        read_clocks=read_clocks,
        strict_rotation=strict_rotation,
        nvtx=nvtx,
        settle_window_ms=settle_window_ms,
        power_margin=power_margin,
        flush_factor=flush_factor,
        clock_tolerance=clock_tolerance,
    )
    return timer.measure(fn, inputs=inputs, outputs=outputs, label=label, written=written)

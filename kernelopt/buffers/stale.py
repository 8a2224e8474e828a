"""Prove that a launcher's persistent buffers hold nothing a later call depends on.

Persisting a buffer is right only while every call rewrites every element it reads, so
its result cannot depend on what the buffers held before the call. The checker runs
each call on the same inputs from three states of every persisted buffer: zero-filled,
poisoned (NaN for floating types, the largest value for integer types, True for bool),
and striped (the type's largest and lowest values in turn). A launcher that reads last
call's workspace, accumulates into a buffer it never resets, or leaves part of a
persistent output unwritten gives different results; the checker then poisons one
buffer at a time to name the culprits of each output that changed.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Sequence
from typing import Any

import attrs
import torch

from kernelopt._errors import InputError, KernelOptError, expected
from kernelopt.buffers.launcher import BoundLauncher, PersistentLauncher
from kernelopt.buffers.pool import BufferPool
from kernelopt.buffers.records import HeldBuffer
from kernelopt.buffers.scope import BufferScope

__all__ = ["StaleRead", "StaleReadReport", "check_no_stale_reads", "poison_"]


def poison_(tensor: torch.Tensor) -> torch.Tensor:
    """Fill ``tensor`` in place with a value no correct computation leaves behind.

    NaN for floating and complex types (it survives every arithmetic step), the largest
    representable value for integer types (an out-of-range index or count rather than a
    plausible one such as 0 or -1), True for bool.

    Parameters
    ----------
    tensor : torch.Tensor
        Any shape, dtype and device; overwritten in place.

    Returns
    -------
    torch.Tensor
        ``tensor`` itself.

    Raises
    ------
    InputError
        When ``tensor`` is no ``torch.Tensor``.
    """
    if not isinstance(tensor, torch.Tensor):
        raise InputError(expected("a torch.Tensor", type(tensor).__name__, where="tensor"))
    if tensor.dtype.is_floating_point or tensor.dtype.is_complex:
        return tensor.fill_(float("nan"))
    if tensor.dtype == torch.bool:
        return tensor.fill_(True)
    return tensor.fill_(torch.iinfo(tensor.dtype).max)


def _stripe_(tensor: torch.Tensor) -> torch.Tensor:
    """Fill ``tensor`` with its type's largest and lowest values in turn (True and False for
    bool): the state that tells a read through a sign test (``flags > 0``, ``< 0``) or
    ``nan_to_num`` from zeros, which NaN and the largest integer answer as 0 does."""
    dtype = tensor.dtype
    high: bool | float
    low: bool | float
    if dtype == torch.bool:
        high, low = True, False
    elif dtype.is_floating_point or dtype.is_complex:
        info = torch.finfo(dtype)
        high, low = info.max, info.min
    else:
        limits = torch.iinfo(dtype)
        high, low = limits.max, limits.min
    pair = torch.tensor([high, low], dtype=dtype, device=tensor.device)
    stripes = pair.repeat((tensor.numel() + 1) // 2)[: tensor.numel()]
    return tensor.copy_(stripes.view(tensor.shape))


# The non-zero states every buffer is set to, each compared with the zeroed run: NaN
# survives arithmetic, the stripes survive comparisons and nan_to_num.
_FILLS: tuple[Callable[[torch.Tensor], torch.Tensor], ...] = (poison_, _stripe_)


@attrs.frozen(kw_only=True)
class StaleRead:
    """One output that changed when the persistent buffers were poisoned.

    Parameters
    ----------
    call : int
        The ``i`` of ``make_inputs(i)`` for the call that showed it.
    output : str
        Which output: ``"result"``, ``"result[1]"``, ``"result['lse']"``.
    mismatched : int
        Elements that differ (NaN where a number was counts), out of ``total``.
    total : int
        Elements in that output.
    error : str or None
        The exception the poisoned call raised instead of returning, if it did.
    culprits : tuple of str
        Buffers whose poison alone changes this output (``"name shape dtype"``), each
        output judged on its own: a buffer only another output reads is not named here.
        Empty when no single buffer changes it (only several poisoned together do).
    """

    call: int
    output: str
    mismatched: int
    total: int
    error: str | None = None
    culprits: tuple[str, ...] = ()

    def describe(self) -> str:
        """One line: call, output, extent and culprits."""
        what = (
            f"raised {self.error}"
            if self.error is not None
            else f"differs at {self.mismatched}/{self.total} elements"
        )
        if not self.culprits:
            return f"call {self.call}: {self.output} {what}; stale buffer: no single buffer"
        stale = "stale buffer" if len(self.culprits) == 1 else "stale buffers"
        return f"call {self.call}: {self.output} {what}; {stale}: {', '.join(self.culprits)}"


@attrs.frozen(kw_only=True)
class StaleReadReport:
    """What :func:`check_no_stale_reads` did and found.

    Parameters
    ----------
    calls : int
        Calls checked (each run clean, then poisoned).
    buffers : tuple of str
        Every persisted buffer that was poisoned (``"name shape dtype"``); empty means
        the launcher held no persistent buffers and the check proved nothing.
    stale : tuple of StaleRead
        The outputs that changed; empty when the launcher passed.
    """

    calls: int
    buffers: tuple[str, ...]
    stale: tuple[StaleRead, ...]

    @property
    def ok(self) -> bool:
        """True when no output changed under poison."""
        return not self.stale


def _label(held: HeldBuffer) -> str:
    return f"{held.name} {tuple(held.key.shape)} {held.key.dtype}"


def _clone(value: Any) -> Any:
    """A deep copy of tensors in tuples, lists and dicts; other leaves as they are."""
    if isinstance(value, torch.Tensor):
        return value.detach().clone()
    if isinstance(value, tuple):
        items = [_clone(v) for v in value]
        return type(value)(*items) if hasattr(value, "_fields") else tuple(items)
    if isinstance(value, list):
        return [_clone(v) for v in value]
    if isinstance(value, dict):
        return {k: _clone(v) for k, v in value.items()}
    return value


def _diff(a: Any, b: Any, path: str, rtol: float, atol: float) -> list[tuple[str, int, int]]:
    """(output path, mismatched, total) for every leaf where ``b`` differs from ``a``."""
    if isinstance(a, torch.Tensor):
        if not isinstance(b, torch.Tensor) or a.shape != b.shape or a.dtype != b.dtype:
            return [(path, max(a.numel(), 1), max(a.numel(), 1))]
        if a.dtype.is_floating_point or a.dtype.is_complex:
            same = torch.isclose(a, b, rtol=rtol, atol=atol, equal_nan=True)
        else:
            same = torch.eq(a, b)
        mismatched = int(same.numel() - int(same.sum().item()))
        return [(path, mismatched, a.numel())] if mismatched else []
    if isinstance(a, (tuple, list)):
        if not isinstance(b, (tuple, list)) or len(a) != len(b):
            return [(path, 1, 1)]
        found: list[tuple[str, int, int]] = []
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            found += _diff(x, y, f"{path}[{i}]", rtol, atol)
        return found
    if isinstance(a, dict):
        if not isinstance(b, dict) or a.keys() != b.keys():
            return [(path, 1, 1)]
        found = []
        for k in a:
            found += _diff(a[k], b[k], f"{path}[{k!r}]", rtol, atol)
        return found
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return []
    try:
        equal = bool(a == b)
    except Exception:  # an object whose == is not a truth value
        equal = a is b
    return [] if equal else [(path, 1, 1)]


def _run(
    launcher: Callable[..., object], args: Sequence[object], *, catch: bool = True
) -> tuple[Any, str | None]:
    """Call once; the result is cloned so no reference to a returned buffer survives.

    With ``catch``, any exception is returned as text: these runs start from a state the
    checker set, so a failure (kernelopt's own refusals included, such as a buffer
    size read from a poisoned count) is the state showing. Misuse that fails in every
    state surfaces in the first, uncaught run.
    """
    if not catch:
        return _clone(launcher(*_clone(list(args)))), None
    try:
        return _clone(launcher(*_clone(list(args)))), None
    except Exception as error:  # the poison made the launcher fail: a stale read too
        return None, f"{type(error).__name__}: {error}"


def _fill(
    held: list[HeldBuffer],
    poison: HeldBuffer | None,
    *,
    poison_all: bool,
    fill: Callable[[torch.Tensor], torch.Tensor] = poison_,
) -> None:
    """Set every buffer to zero, then ``fill`` ``poison`` (or all of them)."""
    for buffer in held:
        if poison_all or buffer is poison:
            fill(buffer.tensor)
        else:
            buffer.tensor.zero_()


def _touches(changed: str, output: str) -> bool:
    """Whether a change found at path ``changed`` is a change of the output ``output``.

    The same leaf, a leaf inside it (``result[1][0]`` inside ``result[1]``), or a
    container holding it whose structure changed (``result``, when a tuple's length
    differs, changes every element).
    """
    return changed == output or changed.startswith(output + "[") or output.startswith(changed + "[")


def _changed_by(
    launcher: Callable[..., object],
    args: Sequence[object],
    held: list[HeldBuffer],
    suspect: HeldBuffer,
    outputs: Sequence[str],
    rtol: float,
    atol: float,
) -> set[str]:
    """Those of ``outputs`` that filling ``suspect`` alone (the others zeroed) changes from
    a run from zeroed buffers: every one of them when that run raises instead."""
    _fill(held, None, poison_all=False)
    reference, error = _run(launcher, args)
    if error is not None:
        return set()  # fails even from zeroed buffers: no single buffer to blame
    changed: set[str] = set()
    for fill in _FILLS:
        _fill(held, suspect, poison_all=False, fill=fill)
        value, error = _run(launcher, args)
        if error is not None:
            return set(outputs)  # no output came back: each one changed
        paths = [found[0] for found in _diff(reference, value, "result", rtol, atol)]
        changed.update(o for o in outputs if any(_touches(path, o) for path in paths))
        # Another fill can only add outputs: once every one is changed, it would run for
        # nothing.
        if len(changed) == len(outputs):
            break
    return changed


def _culprits(
    launcher: Callable[..., object],
    args: Sequence[object],
    held: list[HeldBuffer],
    outputs: Sequence[str],
    rtol: float,
    atol: float,
) -> dict[str, tuple[str, ...]]:
    """For each of ``outputs`` (paths such as ``"result[1]"``), the buffers whose poison
    alone changes that output, in the order ``held`` lists them.

    Judged per output, not over the whole result: in a pipeline whose outputs each read
    their own workspace (two partial-sum buffers, one per reduced output), the buffer
    behind one output is no culprit of the other.
    """
    blamed: dict[str, list[str]] = {output: [] for output in outputs}
    for suspect in held:
        for output in _changed_by(launcher, args, held, suspect, outputs, rtol, atol):
            blamed[output].append(_label(suspect))
    return {output: tuple(names) for output, names in blamed.items()}


def _stale_outputs(
    launcher: Callable[..., object],
    args: Sequence[object],
    held: list[HeldBuffer],
    rtol: float,
    atol: float,
) -> tuple[list[tuple[str, int, int]], str | None]:
    """The outputs (path, mismatched, total) that change when every buffer goes from zeros
    to one of the filled states, and the error a run raised instead, if one did."""
    _fill(held, None, poison_all=False)
    zeroed, error = _run(launcher, args)
    if error is not None:
        return [("result", 0, 0)], error
    for fill in _FILLS:
        _fill(held, None, poison_all=True, fill=fill)
        value, error = _run(launcher, args)
        if error is not None:
            return [("result", 0, 0)], error
        found = _diff(zeroed, value, "result", rtol, atol)
        if found:
            return found, None
    return [], None


def _fillable(source: BufferPool | BufferScope) -> list[HeldBuffer]:
    """The buffers of ``source`` that the checker may fill.

    A result an earlier call returned and the caller still holds is not one of them
    (asking for it would have raised): filling it would overwrite the caller's result.
    """
    held = source.buffers()
    if isinstance(source, BufferScope):
        kept = source._still_held()
        held = [h for h in held if h.key not in kept]
    return held


def _first_run(
    launcher: Callable[..., object], args: Sequence[object], source: BufferPool | BufferScope
) -> str | None:
    """Run call 0 once, allocating its buffers; the error text if it failed only because
    of what its buffers held before.

    Those buffers hold what the launcher's earlier calls (or the allocator) left: an
    index read before it is written can be out of range. A failure that a rerun from
    zeroed buffers does not repeat is that stale read; one that it repeats (a wrong
    argument, a result the caller still holds) is the launcher's own and is raised as
    it is.
    """
    try:
        _run(launcher, args, catch=False)
    except Exception as first:
        held = _fillable(source)
        if not held:
            raise
        _fill(held, None, poison_all=False)
        _value, zeroed_error = _run(launcher, args)
        if zeroed_error is not None:
            raise
        return f"{type(first).__name__}: {first}"
    return None


def check_no_stale_reads(
    launcher: Callable[..., object],
    make_inputs: Callable[[int], Sequence[object]],
    *,
    calls: int = 3,
    buffers: BufferPool | BufferScope | None = None,
    rtol: float = 0.0,
    atol: float = 0.0,
    strict: bool = True,
) -> StaleReadReport:
    """Check that poisoning the persisted buffers between calls leaves results unchanged.

    For each ``i < calls``: draw ``args = make_inputs(i)``; run ``launcher(*args)`` once
    (this allocates the call's buffers); zero every buffer held in the launcher's scope
    and run; poison them all (see :func:`poison_`) and run again; then fill them with
    the type's largest and lowest values in turn and run again (a read through a sign
    test or ``nan_to_num`` answers NaN as it answers 0); compare each result with the
    zeroed one. Each run gets a fresh copy of ``args``, so launchers that write their
    inputs in place are compared fairly. For each output that changed, the buffers
    filled one at a time (the others zeroed) that change that output are its culprits.

    Parameters
    ----------
    launcher : callable
        A :class:`~kernelopt.buffers.PersistentLauncher`, a method bound from one
        (``obj.method``, whose instance's scope is poisoned), or any callable together
        with ``buffers``.
    make_inputs : callable
        ``make_inputs(i)`` returns the positional arguments (tuple or list) of call
        ``i``. Vary shapes across ``i`` if the launcher has shape-dependent paths.
    calls : int
        Calls to check (>= 1).
    buffers : BufferPool or BufferScope, optional
        What to poison when ``launcher`` is not a ``PersistentLauncher``: every buffer
        the pool or scope holds.
    rtol, atol : float
        Tolerances for floating outputs (0 = bitwise equal; raise them for launchers
        that are nondeterministic, e.g. with atomics). NaN never matches a number.
    strict : bool
        Raise on a stale read (default); False returns the report either way.

    Returns
    -------
    StaleReadReport
        ``report.ok`` is True when nothing changed; ``report.buffers`` lists what was
        poisoned.

    Raises
    ------
    KernelOptError
        With ``strict``: an output changed (the message names call, output and, for
        each output, its culprit buffers).
    InputError
        No buffers to poison were given, or ``make_inputs`` returned a non-sequence; a
        launcher or ``make_inputs`` that is not callable, ``buffers`` of another type,
        tolerances that are not finite numbers >= 0, or a ``strict`` that is not a bool
        (refused before any call).

    Notes
    -----
    A buffer that an earlier call returned and the caller still references (see
    ``on_return="check"``) is neither zeroed nor poisoned: it holds the caller's result.
    Only a scope tracks what it returned; with ``buffers`` a pool, every buffer is filled.
    On CUDA, a launcher that reads a poisoned integer buffer as an index may fault the
    device rather than return; run the checker in a process you can lose.
    The first run of call 0 starts from what the launcher's earlier calls (or the
    allocator) left in its buffers. If it raises and a run from zeroed buffers does not,
    that is a stale read (an index read before it is written, say): reported, with the
    buffers whose poison alone makes it raise. If the zeroed run raises too, the first
    error is raised as it is (the launcher's own fault, whatever its buffers hold).

    Examples
    --------
    >>> import torch
    >>> from kernelopt.buffers import BufferPool, check_no_stale_reads, persistent_buffers
    >>> @persistent_buffers(pool=BufferPool())
    ... def running_sum(buffers, x):
    ...     acc = buffers.empty("acc", x.shape, x.dtype, x.device)
    ...     acc += x  # bug: acc is never reset, so it carries the previous call
    ...     return acc.clone()
    >>> report = check_no_stale_reads(
    ...     running_sum, lambda i: (torch.full((4,), float(i)),), strict=False
    ... )
    >>> report.ok, report.stale[0].culprits
    (False, ('acc (4,) torch.float32',))
    """
    # Integral, not int: a count computed with numpy (np.int64) is an int all the same.
    if isinstance(calls, bool) or not isinstance(calls, numbers.Integral) or calls < 1:
        raise InputError(expected("calls as an int >= 1", repr(calls), where="calls"))
    calls = int(calls)
    # Checked before the first call: torch.isclose would refuse a bad tolerance only after
    # the launcher ran, and with its own wording.
    for label, tol in (("rtol", rtol), ("atol", atol)):
        # Real, not (int, float): a tolerance computed with numpy (np.float32) is a number
        # all the same, as counts take numpy's integers.
        if isinstance(tol, bool) or not isinstance(tol, numbers.Real) or not 0 <= tol < math.inf:
            raise InputError(expected("a finite number >= 0", repr(tol), where=label))
    rtol, atol = float(rtol), float(atol)
    if not isinstance(strict, bool):
        # "no" is truthy: a report the caller meant to read would raise instead.
        raise InputError(expected("a bool", repr(strict), where="strict"))
    if not callable(launcher):
        raise InputError(expected("a callable launcher", type(launcher).__name__, where="launcher"))
    if not callable(make_inputs):
        raise InputError(
            expected("a callable make_inputs(i)", type(make_inputs).__name__, where="make_inputs")
        )
    if buffers is not None and not isinstance(buffers, (BufferPool, BufferScope)):
        raise InputError(
            # Bounded: a list of held buffers (pool.buffers()) would print every tensor.
            expected("a BufferPool, a BufferScope or None", repr(buffers)[:80], where="buffers")
        )
    source: BufferPool | BufferScope
    if buffers is not None:
        source = buffers
    elif isinstance(launcher, (PersistentLauncher, BoundLauncher)):
        source = launcher.scope  # a bound method's: the scope of its instance
    else:
        raise InputError(
            expected(
                "a PersistentLauncher, or buffers= naming the pool or scope it uses",
                type(launcher).__name__,
            )
        )

    poisoned_labels: dict[str, None] = {}
    stale: list[StaleRead] = []
    for i in range(calls):
        args = make_inputs(i)
        if not isinstance(args, (tuple, list)):
            raise InputError(
                expected(
                    "make_inputs(i) to return a tuple or list of positional arguments",
                    type(args).__name__,
                )
            )
        # A first run allocates this call's buffers. Later calls start from what the
        # previous poisoned run left, so failing there is a stale read, after which
        # nothing can be trusted. Call 0 starts from what the launcher's earlier calls
        # (or the allocator) left: see _first_run.
        if i == 0:
            error = _first_run(launcher, args, source)
        else:
            _clean, error = _run(launcher, args)
        if error is not None:
            culprits: tuple[str, ...] = ()
            if i == 0:
                # The zeroed run passed: poisoning one buffer at a time names culprits.
                held = _fillable(source)
                poisoned_labels.update((_label(h), None) for h in held)
                culprits = _culprits(launcher, args, held, ["result"], rtol, atol)["result"]
            stale.append(
                StaleRead(
                    call=i, output="result", mismatched=0, total=0, error=error, culprits=culprits
                )
            )
            break
        # Both compared runs start from a state set here, never from what an earlier
        # run left: a buffer still holding poison from before would make both runs
        # agree on NaN and hide the stale read.
        held = _fillable(source)
        poisoned_labels.update((_label(h), None) for h in held)
        found, error = _stale_outputs(launcher, args, held, rtol, atol)
        if not found:
            continue
        blamed = _culprits(launcher, args, held, [path for path, _n, _t in found], rtol, atol)
        stale += [
            StaleRead(
                call=i, output=path, mismatched=n, total=t, error=error, culprits=blamed[path]
            )
            for path, n, t in found
        ]
    report = StaleReadReport(calls=calls, buffers=tuple(poisoned_labels), stale=tuple(stale))
    if strict and not report.ok:
        raise KernelOptError(
            expected(
                "results unchanged when the persistent buffers hold poison between calls",
                "; ".join(s.describe() for s in report.stale),
            )
        )
    return report

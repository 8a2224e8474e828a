"""Budgeted tuning: a pruned config space, a wall-clock budget, and a stop when gains stop.

The workflow this serves: start from a manual config expected to be good, explore a few
tilings to see how performance moves, and search wider only with domain rules pruning
the space, within a small time budget. A search that grows past a sane size without
beating the start config is the ``autotune-explosion`` anti-pattern (a kernel tuned over
10 000 configs that gained nothing over its predecessor): kernel design matters more than
autotuning. :func:`tune` warns by that name.
"""

from __future__ import annotations

import itertools
import math
import random
import sys
import time
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import attrs

from kernelopt._checks import finite
from kernelopt._errors import InputError, expected
from kernelopt.bench._error_text import check_said, one_line
from kernelopt.bench.measurement import Measurement
from kernelopt.bench.timer import Timer, require_measurement, require_timer
from kernelopt.experiments._validators import instance_of, optional_text

__all__ = [
    "AutotuneExplosionWarning",
    "TuningInterrupted",
    "TuningResult",
    "TuningTrial",
    "UnsureGainWarning",
    "iter_space",
    "space_size",
    "tune",
]

EXPLOSION_ID = "autotune-explosion"
_COUNT_LIMIT = 1_000_000  # configs visited at most to count a pruned space
# Once more than sane_size configs survive, the warning is decided: counting goes on only
# this far, so the count is exact for a small space and cheap for a huge one.
_COUNT_ENOUGH = 10_000
_COUNT_SHARE = 0.1  # of the budget, at most, spent counting survivors for the warning

Config = dict[str, Any]
Rule = Callable[[Mapping[str, Any]], bool]


class AutotuneExplosionWarning(UserWarning):
    """A tuning search grew past a sane size (catalog anti-pattern ``autotune-explosion``)."""


def _check_space(space: object) -> None:
    """Refuse what would be searched as something else: a str of values is a sequence of
    characters to Python, and a list of knob names has no values at all."""
    if not isinstance(space, Mapping) or not space:
        got = repr(space) if isinstance(space, Mapping) else type(space).__name__
        raise InputError(expected("a space {knob: [values]}", got, where="space"))
    for knob, values in space.items():
        if not isinstance(knob, str):
            raise InputError(expected("knob names as str", repr(knob), where="space"))
        # Anything indexable with a length (a list, a range, a numpy array), not a set.
        indexable = hasattr(values, "__len__") and hasattr(values, "__getitem__")
        if isinstance(values, str | bytes | Mapping) or not indexable or len(values) == 0:
            raise InputError(
                expected("a non-empty list of values", repr(values), where=f"space[{knob!r}]")
            )


def space_size(space: Mapping[str, Sequence[Any]]) -> int:
    """Number of configs in the full cross product of ``space``."""
    return math.prod(len(values) for values in space.values())


def _config_at(space: Mapping[str, Sequence[Any]], index: int) -> Config:
    # Mixed-radix decoding: config number `index` of the product, last knob fastest,
    # the same order as itertools.product.
    config: Config = {}
    for knob, values in reversed(list(space.items())):
        index, digit = divmod(index, len(values))
        config[knob] = values[digit]
    return {knob: config[knob] for knob in space}


def iter_space(
    space: Mapping[str, Sequence[Any]],
    *,
    order: str = "given",
    seed: int = 0,
) -> Iterator[Config]:
    """Yield every config of ``space`` once, in product order or in a seeded random order.

    Random order samples config numbers without materializing the product, so a huge
    space costs nothing until visited.
    """
    if order == "given":
        knobs = list(space)
        for values in itertools.product(*(space[k] for k in knobs)):
            yield dict(zip(knobs, values, strict=True))
    elif order == "random":
        total = space_size(space)
        rng = random.Random(seed)
        if total <= _COUNT_LIMIT:
            # A Fisher-Yates shuffle drawn one config at a time: the first config comes
            # at once (sampling a million numbers up front took a second of the budget),
            # and only the swaps made so far are stored.
            swapped: dict[int, int] = {}
            for position in range(total):
                other = rng.randrange(position, total)
                here = swapped.pop(position, position)
                index = swapped.get(other, other) if other != position else here
                if other != position:
                    swapped[other] = here  # the number displaced by the draw
                yield _config_at(space, index)
            return
        # A huge space: a seeded affine permutation of the config numbers visits each
        # once with nothing stored (a set of those drawn grew without bound while the
        # budget ran).
        step = rng.randrange(1, total)
        while math.gcd(step, total) != 1:
            step = rng.randrange(1, total)
        start = rng.randrange(total)
        for position in range(total):
            yield _config_at(space, (start + step * position) % total)
    else:
        raise InputError(expected("order 'given' or 'random'", repr(order)))


# What tells two values apart: a type tag and a spelling. Equal numbers share one
# (1, 1.0 and np.int64(1) are one value: one config, timed once), a bool keeps its own
# (True is no 1 to a kernel's constexpr), and anything else is told apart by its repr.
ValueKey = tuple[str, object]


def _config_key(config: Mapping[str, Any]) -> tuple[tuple[str, ValueKey], ...]:
    """What tells two configs apart: knob names and :func:`_value_key` of their values."""
    keyed = ((knob, _value_key(value)) for knob, value in config.items())
    return tuple(sorted(keyed, key=lambda item: item[0]))


def _value_key(value: Any) -> ValueKey:
    """One key per value as the kernel sees it: ``1``, ``1.0`` and ``np.int64(1)`` share
    ``("number", "1")``, ``True`` is ``("bool", "True")``; a tuple or list is keyed by its
    items (``(64, 32)`` is ``(64.0, 32)``)."""
    plain = _plain_value(value)
    if isinstance(plain, bool):
        return ("bool", repr(plain))
    if isinstance(plain, float) and plain.is_integer():
        # Exact: an integral float is the int it equals (2.0**60 is 2**60), and -0.0 is 0.
        return ("number", repr(int(plain)))
    if isinstance(plain, int | float):
        return ("number", repr(plain))
    if isinstance(plain, tuple | list):
        return (type(plain).__name__, tuple(_value_key(item) for item in plain))
    return (type(plain).__name__, repr(plain))


def _plain_value(value: Any) -> Any:
    numpy = sys.modules.get("numpy")  # a numpy scalar exists only where numpy is imported
    if numpy is not None and isinstance(value, numpy.generic):
        return value.item()
    return value


def _unique_values(values: Sequence[Any]) -> list[Any]:
    """``values`` in order, each first occurrence only, as the user spelled it (``[1, 1.0]``
    is ``[1]``; :func:`_value_key` tells values apart)."""
    kept: dict[ValueKey, Any] = {}
    for value in values:
        kept.setdefault(_value_key(value), value)
    return list(kept.values())


def _one_knob_changes(
    space: Mapping[str, Sequence[Any]], center: Mapping[str, Any]
) -> list[Config]:
    """The configs of ``space`` that differ from ``center`` in one knob, nearest first.

    A knob's values are near in the order the space lists them: one step either way from
    the center's value comes before two steps (``BLOCK_M`` 32 and 128 around 64, before
    16), ties in knob order, the smaller-index value first. A center value the space does
    not list is nearest the knob's first value.
    """
    ranked: list[tuple[int, int, int, Config]] = []
    for knob_index, (knob, values) in enumerate(space.items()):
        here = _value_key(center[knob])
        keys = [_value_key(value) for value in values]
        position = keys.index(here) if here in keys else -1
        for index, value in enumerate(values):
            if index == position:
                continue
            changed = {**center, knob: value}
            ranked.append((abs(index - position), knob_index, index, changed))
    ranked.sort(key=lambda item: item[:3])
    return [changed for *_, changed in ranked]


def _walk_around(
    space: Mapping[str, Sequence[Any]],
    start: Config,
    best_so_far: Callable[[], Config | None],
) -> Iterator[Config]:
    """The given order from a start config: ``start``, then each time the untried config
    nearest the best so far (one knob changed, :func:`_one_knob_changes`), and once every
    such neighbour of the best is tried, the next untried config in product order; each
    config once.

    A manual start is expected to be near good: walking the product from its first corner
    (every knob at its smallest) spent the patience far from it.
    """
    seen = {_config_key(start)}
    yield start
    rest = iter_space(space)
    while True:
        center = best_so_far() or start
        following = next(
            (c for c in _one_knob_changes(space, center) if _config_key(c) not in seen), None
        )
        if following is None:
            following = next((c for c in rest if _config_key(c) not in seen), None)
        if following is None:
            return
        seen.add(_config_key(following))
        yield following


def _allowed(config: Mapping[str, Any], rules: Sequence[Rule]) -> bool | str:
    """Whether every rule allows ``config``, or why one of them could not say.

    A rule that raises (a knob it divides by is 0) names itself and its error instead of
    ending the search: the configs timed so far would be lost with it.
    """
    for index, rule in enumerate(rules):
        try:
            if not rule(config):
                return False
        except Exception as error:
            return f"rules[{index}] raised {one_line(error)}"
    return True


def _start_verdicts(start: Mapping[str, Any], rules: Sequence[Rule]) -> tuple[list[int], list[str]]:
    """The rules refusing ``start`` (their indices), and those raising on it (their errors).

    A rule that raises on the start is refused with the start, as one that returns False
    is: the search would otherwise end in the rule's own traceback before anything ran.
    """
    refused: list[int] = []
    raised: list[str] = []
    for index, rule in enumerate(rules):
        try:
            if not rule(start):
                refused.append(index)
        except Exception as error:
            raised.append(f"rules[{index}] raised {one_line(error)}")
    return refused, raised


@attrs.frozen(kw_only=True)
class TuningTrial:
    """One config tried: its median time (µs), or why it failed or was incorrect.

    ``error`` is one line: the exception's type and every line of its message, joined by
    ``"; "`` (at most 2000 characters: a longer one keeps its start and end and says
    how many characters were cut between them).
    """

    config: dict[str, Any] = attrs.field(validator=instance_of(dict, "a dict"))
    median: float | None = attrs.field(default=None, validator=finite(minimum=0, optional=True))
    error: str | None = attrs.field(default=None, validator=optional_text())


@attrs.frozen(kw_only=True)
class TuningResult:
    """The outcome of :func:`tune`.

    Parameters
    ----------
    best_config : dict, optional
        The fastest correct config; None when no config was timed.
    best : Measurement, optional
        Its measurement.
    start : Measurement, optional
        The measurement of the first config tried (the manual start point).
    trials : tuple of TuningTrial
        Every config tried (timed, failed or incorrect), in order.
    space_size : int
        Configs in the full product.
    pruned : int
        Configs skipped by the rules during the search.
    stop_reason : str
        ``"exhausted"``, ``"budget"``, ``"patience"`` (no gain for ``patience`` configs)
        or ``"interrupted"`` (a keyboard interrupt; see :class:`TuningInterrupted`).
    elapsed_s : float
        Wall-clock time of the search, as ``budget_s`` counts it (without the timer's
        one-time setup).
    warnings : tuple of str
        Warnings raised: ``autotune-explosion`` (:class:`AutotuneExplosionWarning`), a
        rule that raised (``RuntimeWarning``), and a gain over the start that is no
        measured gain of the kernel, timed with the host clock or within the timings'
        noise (:class:`UnsureGainWarning`): ``gain_over_start`` is then no gain to take.
    """

    best_config: dict[str, Any] | None
    best: Measurement | None
    start: Measurement | None
    trials: tuple[TuningTrial, ...]
    space_size: int
    pruned: int
    stop_reason: str
    elapsed_s: float
    warnings: tuple[str, ...] = ()

    @property
    def evaluated(self) -> int:
        """Configs timed (or attempted)."""
        return len(self.trials)

    @property
    def gain_over_start(self) -> float:
        """Start time over best time, minus 1 (0.25 = the best is 25 % faster); 0 when the
        start config (or every config) failed; ``inf`` when only the best timed 0 (a call
        under the host clock's resolution)."""
        if self.best is None or self.start is None:
            return 0.0
        if self.best.seconds <= 0:
            return math.inf if self.start.seconds > 0 else 0.0
        return self.start.seconds / self.best.seconds - 1.0

    def metrics(self) -> dict[str, float]:
        """Catalog trigger metrics: ``autotune_configs``."""
        return {"autotune_configs": float(self.evaluated)}


class TuningInterrupted(KeyboardInterrupt):
    """A keyboard interrupt during :func:`tune`, carrying the configs timed before it.

    A ``KeyboardInterrupt``: uncaught, it stops the program as Ctrl-C does; caught, its
    ``result`` (``stop_reason`` ``"interrupted"``) holds the search so far.

    Parameters
    ----------
    result : TuningResult
        Every config tried before the interrupt, and the best of them.
    """

    def __init__(self, result: TuningResult) -> None:
        super().__init__(f"tuning interrupted after {result.evaluated} configs")
        self.result = result


def _incorrect(
    config: Config, call: Callable[[], object], check: Callable[[Config, Any], object]
) -> str | None:
    """Why one call of ``config`` is wrong by ``check``, or None when it is right."""
    result = call()
    try:
        verdict = check(config, result)
    except Exception as error:  # an assertion of closeness, typically
        return f"incorrect: {one_line(error)}"
    if verdict is not None and not verdict:
        return f"incorrect: {check_said(check, verdict)}"
    return None


def _attempt(
    build: Callable[[Config], Callable[[], object]],
    config: Config,
    timer: Timer,
    check: Callable[[Config, Any], object] | None,
) -> tuple[Measurement | None, str | None]:
    """Build, check and time one config: its measurement, or why its result is wrong."""
    call = build(config)
    if not callable(call):
        # Said here: the timer would say "'NoneType' object is not callable".
        raise InputError(expected("a callable", type(call).__name__, where="build(config)"))
    wrong = None if check is None else _incorrect(config, call, check)
    if wrong is not None:
        return None, wrong
    return require_measurement(timer.measure(call, label=str(config))), None


class UnsureGainWarning(UserWarning):
    """:func:`tune` found a best config whose gain over the start is no measured gain of
    the kernel: timed with the host clock (no CUDA, or the Triton interpreter), or within
    the spread of the two timings. The message is also in :attr:`TuningResult.warnings`."""


def _gain_doubts(start: Measurement | None, best: Measurement | None, gain: float) -> list[str]:
    """Why the gain of ``best`` over ``start`` (``gain``, 0.25 = 25 % faster) does not
    read as a gain of the kernel; empty where it does, or where there is no gain.

    The host clock times the interpreter or the host around the call, where knobs such as
    ``num_warps`` change nothing the kernel does on a GPU; and a best whose samples reach
    into the start's (its P80 at or above the start's P20) is the start again, within the
    noise of one timing of each.
    """
    if start is None or best is None or start is best or not gain > 0:
        return []
    said = f"gain {gain:.1%} over the start config"
    host = [m for m in (start, best) if m.backend == "cpu-perf-counter"]
    if host:
        return [
            f"{said} was timed with the host clock (backend 'cpu-perf-counter': no CUDA, or "
            "the Triton interpreter): it is the host's time around the call, not the "
            "kernel's on a GPU, and knobs the interpreter ignores (num_warps, num_stages) "
            "move it by noise alone; tune on the GPU"
        ]
    start_us, best_us = start.to_unit("us"), best.to_unit("us")
    if best_us.p80 >= start_us.p20:
        return [
            f"{said} is within the timings' noise: the best's P80 {best_us.p80:.4g} us "
            f"reaches the start's P20 {start_us.p20:.4g} us; time both longer (Timer "
            "max_time_ms) or compare them (kernelopt.bench.compare) before taking it"
        ]
    return []


def _warn(message: str, collected: list[str]) -> None:
    collected.append(message)
    warnings.warn(message, AutotuneExplosionWarning, stacklevel=3)


def _count_allowed(
    space: Mapping[str, Sequence[Any]], rules: Sequence[Rule], sane_size: int, until: float
) -> tuple[int, bool]:
    """Configs of ``space`` the rules allow, and whether that count is of the whole space.

    A space of at most ``_COUNT_ENOUGH`` configs is counted in full. A larger one stops
    early (the count is then a lower bound) once the warning is decided and
    ``_COUNT_ENOUGH`` configs were visited, after ``_COUNT_LIMIT`` configs, or at the
    ``until`` clock: a count of a huge space must not spend the budget the search needs.
    """
    small = space_size(space) <= _COUNT_ENOUGH
    allowed = 0
    for visited, config in enumerate(iter_space(space)):
        if not small and (visited >= _COUNT_LIMIT or time.perf_counter() >= until):
            return allowed, False
        if allowed > sane_size and visited >= _COUNT_ENOUGH:
            return allowed, False
        allowed += _allowed(config, rules) is True
    return allowed, True


def tune(
    build: Callable[[Config], Callable[[], object]],
    space: Mapping[str, Sequence[Any]],
    *,
    start: Mapping[str, Any] | None = None,
    rules: Sequence[Rule] = (),
    budget_s: float = 600.0,
    patience: int = 20,
    min_gain: float = 0.01,
    sane_size: int = 200,
    order: str = "given",
    seed: int = 0,
    timer: Timer | None = None,
    check: Callable[[Config, Any], object] | None = None,
) -> TuningResult:
    """Search ``space`` for the fastest correct config within a budget.

    Parameters
    ----------
    build : callable
        ``build(config)`` returns a function running one call with that config (it may
        compile; a config that fails to build or run is recorded and skipped).
    space : mapping of knob to sequence of values
        The knobs and the values to try. Values equal as numbers are one value (``1``,
        ``1.0`` and ``np.int64(1)``: one config, shown as first written); a bool is not
        the int it equals.
    start : mapping, optional
        The manual config expected to be good, timed first; gains are reported against
        it, so every rule must allow it. Default: the first allowed config of the space.
    rules : sequence of callables
        ``rule(config) -> bool``; a config runs only when every rule returns True
        (domain pruning: ``lambda c: c["BLOCK_N"] * c["num_stages"] <= 256``). A config
        whose rule raises is a failed trial naming the rule and its error (a
        ``RuntimeWarning`` the first time each error is met); the search goes on.
    budget_s : float
        Wall-clock budget of the search, s: no config starts once it is spent (one
        started before runs to its end, so the search may exceed it by one timing). It
        counts the search's own work: counting the pruned space, and building, checking
        and timing each config (its warm-up and clock settling included). The timer's
        one-time setup of the process (importing torch, the first query of the CUDA
        device and of NVML) is done before the budget's clock starts, and is not counted.
    patience : int
        Stop after this many configs in a row without a gain of ``min_gain``.
    min_gain : float
        Relative improvement that counts as a gain (0.01 = 1 %).
    sane_size : int
        Pruned-space size, and number of configs tried without gain, above which the
        ``autotune-explosion`` warning is raised.
    order : {"given", "random"}
        ``"given"``: with a ``start``, around it first: each next config changes one knob
        of the best config so far by the fewest steps along its listed values (the start's
        neighbours, then the neighbours of each new best), and once every such neighbour
        of the best is tried, the rest of the space in product order; without a start,
        product order. ``"random"``: the start, then a seeded random order.
    seed : int
        Seed of the random order.
    timer : Timer, optional
        Timing settings; default a short cold Timer (200 ms of samples per config, after
        its warm-up and, on a GPU, the clock settling).
    check : callable, optional
        ``check(config, result)``, with ``result`` what one untimed call of the built
        function returned, before the config is timed. A config whose check raises or
        returns a false value (None passes, as ``torch.testing.assert_close`` returns) is
        recorded as ``incorrect: ...`` and never timed, so it is never the best. The
        record keeps the exception's whole message on one line, its lines joined by
        ``"; "`` (assert_close's mismatch count and greatest differences included), cut
        at 2000 characters (its start and end kept, with how many were cut).

    Returns
    -------
    TuningResult
        The search; ``best_config`` is None when no config was timed.

    Raises
    ------
    InputError
        Before anything is built: for a space, start, threshold, order, seed, rule,
        check or timer of the wrong kind, or a start config a rule refuses.
    TuningInterrupted
        On a keyboard interrupt (it is one), with the search so far, also while the
        pruned space is being counted.
    """
    _check_space(space)
    if start is not None and not isinstance(start, Mapping):
        # A list of knob names, or a str, has names but no values to start from.
        raise InputError(
            expected("a start config {knob: value}", type(start).__name__, where="start")
        )
    if start is not None and set(start) != set(space):
        # Sorted as text: a start holding a key of another type (an int beside the str
        # knobs) failed with "'<' not supported between instances of 'str' and 'int'".
        given = sorted(start, key=repr)
        raise InputError(
            expected(f"a start config with knobs {sorted(space)}", given, where="start")
        )
    if isinstance(patience, bool) or not isinstance(patience, int) or patience < 1:
        raise InputError(expected("an int >= 1", repr(patience), where="patience"))
    if (
        isinstance(budget_s, bool)
        or not isinstance(budget_s, int | float)
        or not math.isfinite(budget_s)
        or budget_s <= 0
    ):
        raise InputError(expected("a finite budget_s > 0", repr(budget_s), where="budget_s"))
    if isinstance(min_gain, bool) or not isinstance(min_gain, int | float):
        raise InputError(expected("min_gain as a number in [0, 1)", repr(min_gain)))
    if not 0 <= min_gain < 1:
        raise InputError(expected("min_gain as a number in [0, 1)", repr(min_gain)))
    if isinstance(sane_size, bool) or not isinstance(sane_size, int) or sane_size < 1:
        raise InputError(expected("sane_size as an int >= 1", repr(sane_size)))
    # Checked here, not when first used: an order met only after the start config was built
    # and timed wasted that build.
    if order not in ("given", "random"):
        raise InputError(expected("order 'given' or 'random'", repr(order), where="order"))
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise InputError(expected("seed as an int", repr(seed), where="seed"))
    if not callable(build):
        raise InputError(expected("build as a callable", type(build).__name__, where="build"))
    if isinstance(rules, str | bytes) or not isinstance(rules, Sequence):
        raise InputError(expected("rules as a sequence of callables", repr(rules)))
    for rule in rules:
        if not callable(rule):
            raise InputError(expected("each rule a callable", repr(rule), where="rules"))
    if check is not None and not callable(check):
        raise InputError(expected("check as a callable or None", repr(check), where="check"))
    require_timer(timer)
    if start is not None:
        # The manual start is the search's reference: a start the rules refuse was
        # skipped like any pruned config, and the gain was then reported over nothing.
        refused, raised_by = _start_verdicts(start, rules)
        if refused or raised_by:
            why = [f"refused by rules{refused}"] if refused else []
            raise InputError(
                expected(
                    "a start config the rules allow",
                    ", ".join([repr(dict(start)), *why, *raised_by]),
                    where="start",
                )
            )
    timer = timer or Timer(max_time_ms=200.0, rel_precision=0.01)
    # A value listed twice would make one config twice; once each, no config is met again
    # (but the start) and none needs remembering.
    space = {knob: _unique_values(values) for knob, values in space.items()}
    collected: list[str] = []
    if isinstance(timer, Timer):  # an object standing in for one sets itself up
        timer.set_up()
    # The budget counts from here: pruning a huge space is part of what the search costs.
    began = time.perf_counter()
    total = space_size(space)
    trials: list[TuningTrial] = []
    raised: set[str] = set()  # errors of rules, each warned of once
    best: Measurement | None = None
    best_config: Config | None = None
    first: Measurement | None = None
    reference_s = math.inf  # the time a config must beat by min_gain to count as a gain
    pruned = 0
    since_gain = 0
    stop = "exhausted"
    start_key = None if start is None else _config_key(start)
    start_config = None if start is None else dict(start)
    candidates: Iterator[Config]
    if start_config is not None and order == "given":
        candidates = _walk_around(space, start_config, lambda: best_config)
    else:
        candidates = itertools.chain(
            [start_config] if start_config is not None else [],
            iter_space(space, order=order, seed=seed),
        )

    def outcome(reason: str) -> TuningResult:
        return TuningResult(
            best_config=best_config,
            best=best,
            start=first,
            trials=tuple(trials),
            space_size=total,
            pruned=pruned,
            stop_reason=reason,
            elapsed_s=time.perf_counter() - began,
            warnings=tuple(collected),
        )

    try:
        # Counted inside the try: Ctrl-C while a huge space is counted (up to a tenth of
        # the budget) is the same interrupt as one while configs are timed.
        if total > sane_size:
            count_until = began + budget_s * _COUNT_SHARE
            allowed, complete = _count_allowed(space, rules, sane_size, count_until)
            if allowed > sane_size:
                bound = "" if complete else "at least "
                _warn(
                    f"{EXPLOSION_ID}: {bound}{allowed} configs survive pruning (sane size "
                    f"{sane_size}); prune with domain rules or a smaller space: kernel "
                    "design gains more than autotuning",
                    collected,
                )
        for config in candidates:
            # Checked before the rules too: a space the rules prune almost entirely would
            # otherwise be walked to its end, however long that takes.
            if time.perf_counter() - began >= budget_s:
                stop = "budget"
                break
            key = _config_key(config)
            if key == start_key and config is not start_config:
                continue  # the start, met again in the space
            verdict = _allowed(config, rules)
            wrong: str | None
            measured: Measurement | None
            if verdict is False:
                pruned += 1
                continue
            if isinstance(verdict, str):
                # Never built: the config is a failed trial, and the first such error a
                # warning, since a rule that raises is a rule to mend.
                wrong, measured = verdict, None
                if verdict not in raised:
                    raised.add(verdict)
                    message = f"{verdict} for {config}: recorded as failed, not pruned"
                    collected.append(message)
                    warnings.warn(message, RuntimeWarning, stacklevel=2)
            else:
                try:
                    measured, wrong = _attempt(build, config, timer, check)
                except Exception as error:
                    wrong, measured = one_line(error), None
            if measured is None:  # failed to build or run, or incorrect: never the best
                trials.append(TuningTrial(config=config, error=wrong))
                since_gain += 1
            else:
                # In µs whatever unit the timer answered in (a stand-in timer may give ms).
                trials.append(TuningTrial(config=config, median=measured.to_unit("us").median))
                # The start is the manual config; if it failed to build, no other config
                # stands in for it (the gain over start is then unknown, not 0 against
                # another).
                if first is None and (start_key is None or key == start_key):
                    first = measured
                if best is None or measured.seconds < best.seconds:
                    best, best_config = measured, config
                if measured.seconds < reference_s * (1.0 - min_gain):
                    reference_s, since_gain = measured.seconds, 0
                else:
                    since_gain += 1
            if since_gain >= patience:
                stop = "patience"
                break
    except KeyboardInterrupt as error:
        # Ctrl-C in a long search must not lose what was timed: the interrupt goes on,
        # carrying the search so far.
        raise TuningInterrupted(outcome("interrupted")) from error

    result = outcome(stop)
    if result.evaluated > sane_size and result.gain_over_start < min_gain:
        # With the start untimed the gain is unknown, not the 0 gain_over_start reads.
        gain = (
            f"{result.gain_over_start:+.1%} over the start config"
            if result.start is not None
            else "no gain known: the start config was never timed"
        )
        _warn(
            f"{EXPLOSION_ID}: {result.evaluated} configs tried for {gain} (sane size {sane_size})",
            collected,
        )
        result = attrs.evolve(result, warnings=tuple(collected))
    doubts = _gain_doubts(result.start, result.best, result.gain_over_start)
    for message in doubts:
        collected.append(message)
        warnings.warn(message, UnsureGainWarning, stacklevel=2)
    if doubts:
        result = attrs.evolve(result, warnings=tuple(collected))
    return result

"""The thresholds of the nine detectors, typed, with the seed's numbers as defaults.

Pass a :class:`DiagnoseParams` to :func:`kernelopt.diagnose.diagnose` to change any of them::

    from kernelopt.diagnose import DiagnoseParams, LocalMinimumParams, diagnose

    params = DiagnoseParams(local_minimum=LocalMinimumParams(min_experiments=4))
    diagnosis = diagnose("experiments/", params=params)
"""

from __future__ import annotations

from typing import Any

import attrs

from kernelopt._checks import finite
from kernelopt._errors import InputError, expected
from kernelopt.experiments._validators import integer

__all__ = [
    "BufferPersistenceParams",
    "CorrectnessWallParams",
    "DiagnoseParams",
    "IgnoredPriorResearchParams",
    "LocalMinimumParams",
    "MissingFundamentalParams",
    "OverEngineeringParams",
    "OverlookedShortcutParams",
    "RepetitionLoopParams",
    "WrongBottleneckParams",
]

# Thresholds are checked at construction and refused with an InputError naming the field.
_positive_int = integer(minimum=1)
_non_negative = finite(minimum=0.0)


def _fraction(_instance: object, attribute: Any, value: object) -> None:
    finite(minimum=0.0)(_instance, attribute, value)
    if value > 1.0:  # type: ignore[operator]
        raise InputError(expected("a fraction between 0 and 1", repr(value), where=attribute.name))


def _percent(_instance: object, attribute: Any, value: object) -> None:
    # A measured share may pass 100 (a call can beat a measured ceiling), but a threshold
    # above 100 would leave a kernel running at its full DRAM or tensor-core ceiling
    # unclassified: no bound is judged so. 0 (every kernel measured) and 100 (only a
    # saturated one) are thresholds the detector's ``>=`` can use, so both ends are kept.
    finite()(_instance, attribute, value)
    if not 0.0 <= value <= 100.0:  # type: ignore[operator]
        raise InputError(expected("a percentage from 0 to 100", repr(value), where=attribute.name))


def _optional_family(_instance: object, attribute: Any, value: object) -> None:
    if value is not None and (not isinstance(value, str) or not value.strip()):
        raise InputError(
            expected("a family name such as 'mla-decode', or None", repr(value), where="family")
        )


def _of(kind: type) -> Any:
    """A validator: an instance of the parameters class ``kind``."""

    def check(_instance: object, attribute: Any, value: object) -> None:
        if not isinstance(value, kind):
            raise InputError(
                expected(f"a {kind.__name__}", type(value).__name__, where=attribute.name)
            )

    return check


@attrs.frozen(kw_only=True)
class RepetitionLoopParams:
    """Item 1. ``min_experiments`` attempts sharing one idea or axis (a catalog tag, a knob,
    a distinctive term of their titles) while the best improved by less than ``min_gain``
    (a fraction: 0.05 is 5 %) over them."""

    min_experiments: int = attrs.field(default=3, validator=_positive_int)
    min_gain: float = attrs.field(default=0.05, validator=_fraction)


@attrs.frozen(kw_only=True)
class LocalMinimumParams:
    """Item 2. At least ``min_experiments`` consecutive recent attempts during which the best
    result improved by less than ``min_gain`` in total (so each was < ``min_gain`` better than
    the best before it)."""

    min_experiments: int = attrs.field(default=5, validator=_positive_int)
    min_gain: float = attrs.field(default=0.05, validator=_fraction)


@attrs.frozen(kw_only=True)
class CorrectnessWallParams:
    """Item 3. At least ``min_failures`` consecutive correctness failures among the most recent
    attempts (attempts whose correctness is unknown neither count nor break the run)."""

    min_failures: int = attrs.field(default=3, validator=_positive_int)


@attrs.frozen(kw_only=True)
class WrongBottleneckParams:
    """Item 4. Of the last ``recent`` attempts, at least ``min_share`` (and at least
    ``min_experiments``) aimed at compute on a memory-bound kernel, or at memory on a
    compute-bound one. ``memory_bound_dram_pct`` / ``compute_bound_tc_pct`` (percentages
    from 0 to 100) classify a kernel from metrics when no profile states its bottleneck.
    An attempt that set a new best by ``min_gain`` or more (the local-minimum threshold by
    default) is not counted: its change fit the kernel."""

    recent: int = attrs.field(default=6, validator=_positive_int)
    min_experiments: int = attrs.field(default=2, validator=_positive_int)
    min_share: float = attrs.field(default=0.5, validator=_fraction)
    memory_bound_dram_pct: float = attrs.field(default=60.0, validator=_percent)
    compute_bound_tc_pct: float = attrs.field(default=60.0, validator=_percent)
    min_gain: float = attrs.field(default=0.05, validator=_fraction)


@attrs.frozen(kw_only=True)
class MissingFundamentalParams:
    """Item 5. Catalog entries fundamental for the kernel's family that no experiment names
    and the kernel source does not contain. ``family`` overrides the inferred family."""

    family: str | None = attrs.field(default=None, validator=_optional_family)


@attrs.frozen(kw_only=True)
class OverEngineeringParams:
    """Item 6. Complexity of the snapshotted kernels grew while gains shrank: lines up by
    ``min_line_growth`` (fraction), or ``min_new_constexprs`` more compile-time knobs, or
    ``min_new_branches`` more branches, or autotune configs multiplied by
    ``min_config_growth`` — across attempts that gained less than ``min_gain`` in total;
    or an autotune space of ``max_autotune_configs`` or more.

    ``min_new_branches`` defaults to 6, twice the knob threshold: a compile-time knob
    usually brings a branch or two of its own (``if EVEN_K:`` ... ``else:``), so this
    catches special cases piling up at runtime and ``elif`` chains, not the branches
    that come with the knobs counted already."""

    min_line_growth: float = attrs.field(default=0.5, validator=_non_negative)
    min_new_constexprs: int = attrs.field(default=3, validator=_positive_int)
    min_new_branches: int = attrs.field(default=6, validator=_positive_int)
    min_config_growth: float = attrs.field(default=4.0, validator=_non_negative)
    max_autotune_configs: int = attrs.field(default=1000, validator=_positive_int)
    min_gain: float = attrs.field(default=0.05, validator=_fraction)


@attrs.frozen(kw_only=True)
class IgnoredPriorResearchParams:
    """Item 7. A recommendation from a plan or research note that none of at least
    ``min_later_experiments`` later attempts acted on. A later experiment acts on it when
    it names the same catalog entry, or shares ``min_overlap`` of the recommendation's
    distinctive terms."""

    min_later_experiments: int = attrs.field(default=3, validator=_positive_int)
    min_overlap: float = attrs.field(default=0.5, validator=_fraction)


@attrs.frozen(kw_only=True)
class BufferPersistenceParams:
    """Item 8. Host launcher code allocating outputs or workspaces on every call
    (``torch.empty``/``zeros``/``full``/``*_like``) with no persistent buffer or ``out=``;
    ``min_allocations`` such calls are needed."""

    min_allocations: int = attrs.field(default=1, validator=_positive_int)


@attrs.frozen(kw_only=True)
class OverlookedShortcutParams:
    """Item 9. A shortcut the workload profile allows (a size-1 axis, a dominant shape)
    used by at least ``min_call_share`` of calls, with no special path in the kernel."""

    min_call_share: float = attrs.field(default=0.5, validator=_fraction)


@attrs.frozen(kw_only=True)
class DiagnoseParams:
    """The parameters of all nine detectors (defaults from the seed's checklist)."""

    repetition_loop: RepetitionLoopParams = attrs.field(
        factory=RepetitionLoopParams, validator=_of(RepetitionLoopParams)
    )
    local_minimum: LocalMinimumParams = attrs.field(
        factory=LocalMinimumParams, validator=_of(LocalMinimumParams)
    )
    correctness_wall: CorrectnessWallParams = attrs.field(
        factory=CorrectnessWallParams, validator=_of(CorrectnessWallParams)
    )
    wrong_bottleneck: WrongBottleneckParams = attrs.field(
        factory=WrongBottleneckParams, validator=_of(WrongBottleneckParams)
    )
    missing_fundamental: MissingFundamentalParams = attrs.field(
        factory=MissingFundamentalParams, validator=_of(MissingFundamentalParams)
    )
    over_engineering: OverEngineeringParams = attrs.field(
        factory=OverEngineeringParams, validator=_of(OverEngineeringParams)
    )
    ignored_prior_research: IgnoredPriorResearchParams = attrs.field(
        factory=IgnoredPriorResearchParams, validator=_of(IgnoredPriorResearchParams)
    )
    buffer_persistence: BufferPersistenceParams = attrs.field(
        factory=BufferPersistenceParams, validator=_of(BufferPersistenceParams)
    )
    overlooked_shortcut: OverlookedShortcutParams = attrs.field(
        factory=OverlookedShortcutParams, validator=_of(OverlookedShortcutParams)
    )

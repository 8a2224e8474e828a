"""The nine detectors of the plateau checklist, one module each, in the seed's order.

Each module exposes ``detect(ctx, params) -> Outcome``: its checklist answer (checked or
not, a sentence, the data it lacked) and, when checked, a :class:`~kernelopt.diagnose.Finding`.
:data:`DETECTORS` is the registry :func:`kernelopt.diagnose.diagnose` runs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs

from kernelopt.diagnose.detectors import (
    buffer_persistence,
    correctness_wall,
    ignored_prior_research,
    local_minimum,
    missing_fundamental,
    over_engineering,
    overlooked_shortcut,
    repetition_loop,
    wrong_bottleneck,
)
from kernelopt.diagnose.detectors._base import Outcome
from kernelopt.diagnose.model import Pathology

__all__ = ["DETECTORS", "Detector", "Outcome"]


@attrs.frozen(kw_only=True)
class Detector:
    """One registered detector: its pathology, its function, its parameters' field name."""

    pathology: Pathology
    detect: Callable[[Any, Any], Outcome]

    @property
    def params_field(self) -> str:
        """The :class:`~kernelopt.diagnose.DiagnoseParams` field holding its parameters."""
        return self.pathology.value


DETECTORS: tuple[Detector, ...] = (
    Detector(pathology=Pathology.REPETITION_LOOP, detect=repetition_loop.detect),
    Detector(pathology=Pathology.LOCAL_MINIMUM, detect=local_minimum.detect),
    Detector(pathology=Pathology.CORRECTNESS_WALL, detect=correctness_wall.detect),
    Detector(pathology=Pathology.WRONG_BOTTLENECK, detect=wrong_bottleneck.detect),
    Detector(pathology=Pathology.MISSING_FUNDAMENTAL, detect=missing_fundamental.detect),
    Detector(pathology=Pathology.OVER_ENGINEERING, detect=over_engineering.detect),
    Detector(pathology=Pathology.IGNORED_PRIOR_RESEARCH, detect=ignored_prior_research.detect),
    Detector(pathology=Pathology.BUFFER_PERSISTENCE, detect=buffer_persistence.detect),
    Detector(pathology=Pathology.OVERLOOKED_SHORTCUT, detect=overlooked_shortcut.detect),
)

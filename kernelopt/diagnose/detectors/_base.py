"""What a detector returns: its checklist answer, and a finding when it found something."""

from __future__ import annotations

from collections.abc import Iterable

import attrs

from kernelopt.diagnose.model import Check, Finding, Pathology

__all__ = ["Outcome", "found", "not_found"]


@attrs.frozen(kw_only=True)
class Outcome:
    """A detector's checklist answer and, when checked, its finding."""

    check: Check
    finding: Finding | None = None


def not_found(pathology: Pathology, sentence: str, missing: Iterable[str] = ()) -> Outcome:
    """An unchecked item with its sentence and the data that was missing."""
    return Outcome(
        check=Check(pathology=pathology, checked=False, sentence=sentence, missing=tuple(missing))
    )


def found(finding: Finding) -> Outcome:
    """A checked item whose sentence is the finding's summary."""
    return Outcome(
        check=Check(
            pathology=finding.pathology,
            checked=True,
            sentence=finding.summary,
            missing=finding.missing,
        ),
        finding=finding,
    )

"""Problems found while loading or linting a knowledge tree."""

from __future__ import annotations

import attrs

from kernelopt._enum import TextEnum

__all__ = ["Problem", "Severity"]


class Severity(TextEnum):
    """Errors make ``lint`` fail and a strict load raise; warnings are advice."""

    ERROR = "error"
    WARNING = "warning"


@attrs.frozen(kw_only=True)
class Problem:
    """One problem in one file.

    Parameters
    ----------
    path : str
        The file (or folder) concerned.
    line : int, optional
        1-based line, when the problem has one.
    severity : Severity
        Error or warning.
    message : str
        ``Expected X, got Y`` text.
    section : str, optional
        The template section concerned (``"Performance Evidence"``, ``"metadata"``).
    """

    path: str
    line: int | None
    severity: Severity = attrs.field(converter=Severity)
    message: str
    section: str | None = None

    @property
    def is_error(self) -> bool:
        """Whether this problem fails lint."""
        return self.severity is Severity.ERROR

    def __str__(self) -> str:
        where = self.path if self.line is None else f"{self.path}:{self.line}"
        label = "" if self.is_error else "warning: "
        section = f"[{self.section}] " if self.section else ""
        return f"{where}: {label}{section}{self.message}"

    def to_dict(self) -> dict[str, object]:
        """Plain data for ``--json`` output."""
        return {
            "path": self.path,
            "line": self.line,
            "severity": self.severity.value,
            "section": self.section,
            "message": self.message,
        }

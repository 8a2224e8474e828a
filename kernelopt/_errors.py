"""The one exception hierarchy of kernelopt.

Every error kernelopt raises on purpose derives from :class:`KernelOptError`, and its
message reads ``Expected X, got Y`` (optionally prefixed by where the problem is), so a
user can act on it without reading the source.
"""

from __future__ import annotations

from pathlib import Path

__all__ = [
    "CatalogError",
    "DeviceError",
    "FormatError",
    "InputError",
    "KernelOptError",
    "expected",
]


def expected(what: str, got: object, *, where: str | None = None) -> str:
    """Build the standard message ``[where: ]Expected <what>, got <got>``.

    Parameters
    ----------
    what : str
        What the caller should have passed, in words (``"head dim 576"``).
    got : object
        What came instead; strings are shown as written, other values with ``repr``.
    where : str, optional
        A location prefix such as an argument name or ``file:line``.
    """
    shown = got if isinstance(got, str) else repr(got)
    message = f"Expected {what}, got {shown}"
    return f"{where}: {message}" if where else message


class KernelOptError(Exception):
    """Base class of every error kernelopt raises on purpose."""


class InputError(KernelOptError, ValueError):
    """An argument has the wrong shape, dtype, device, type or value."""


class FormatError(KernelOptError, ValueError):
    """A file kernelopt reads is malformed; the message names file, line and section."""

    def __init__(
        self,
        message: str,
        *,
        path: str | Path | None = None,
        line: int | None = None,
        section: str | None = None,
    ) -> None:
        self.path = None if path is None else str(path)
        self.line = line
        self.section = section
        where = ""
        if self.path is not None:
            where = self.path if line is None else f"{self.path}:{line}"
        elif line is not None:
            # Text given without a file (parse_entry(text), a JSON string): the line still
            # tells where to look.
            where = f"line {line}"
        if section:
            where = f"{where} [{section}]" if where else f"[{section}]"
        super().__init__(f"{where}: {message}" if where else message)
        self.message = message


class CatalogError(KernelOptError):
    """The knowledge base is inconsistent: duplicate or unknown ids, broken links."""


class DeviceError(KernelOptError, RuntimeError):
    """The operation needs a device, or a device feature, that is not present."""

"""An exception as one line of text that loses nothing a user needs.

A trial or a tuned config that fails keeps why as one line (a record field, a table
cell, a log line). Its first line alone drops what matters most in a check's failure:
``torch.testing.assert_close`` says "Tensor-likes are not close!" first, and the count of
mismatched elements, the greatest difference and its index on the lines after.
"""

from __future__ import annotations

import os
from collections.abc import Callable

__all__ = ["LINE_SEPARATOR", "MAX_ERROR_CHARS", "check_said", "one_line"]

LINE_SEPARATOR = "; "
"""What stands for a line break: a semicolon means nothing in markdown, where a ``|``
would split a table cell."""

MAX_ERROR_CHARS = 2000
"""The longest text kept: an assertion's message is a few hundred characters, while one
that prints whole tensors can be megabytes."""


def one_line(error: BaseException, *, limit: int = MAX_ERROR_CHARS) -> str:
    """``"<ExceptionType>: <message>"`` on one line, its lines joined by ``"; "``.

    Parameters
    ----------
    error : BaseException
        The exception.
    limit : int
        Characters kept: of a longer text its first three quarters and its last quarter,
        with how many characters were cut between them.

    Returns
    -------
    str
        The type and every non-blank line of the message, stripped, in order (the type
        alone for an exception without a message).

    Examples
    --------
    >>> one_line(AssertionError("Tensor-likes are not close!\\n\\nMismatched elements: 1 / 4"))
    'AssertionError: Tensor-likes are not close!; Mismatched elements: 1 / 4'
    """
    lines = (line.strip() for line in str(error).splitlines())
    message = LINE_SEPARATOR.join(line for line in lines if line)
    text = f"{type(error).__name__}: {message}" if message else type(error).__name__
    if len(text) <= limit:
        return text
    # Both ends: a compiler's or a tool's message often says where first and what went
    # wrong last.
    head = limit - limit // 4
    tail = limit - head
    cut = len(text) - limit
    return f"{text[:head]} ... ({cut} characters cut) ... {text[len(text) - tail :]}"


def check_said(check: Callable[..., object], verdict: object) -> str:
    """``check is_close (bench.py:12) returned False``: a check's false verdict, naming
    the check and where it is defined, since a bare ``False`` says nothing of what was
    compared (nor whether the check itself is what is wrong).

    Parameters
    ----------
    check : callable
        The check that returned ``verdict``.
    verdict : object
        Its false return value.

    Returns
    -------
    str
        ``check NAME (FILE:LINE) returned VERDICT``; the name or the place is left out
        where the check has none (a ``functools.partial`` is named by its function).
    """
    target = getattr(check, "func", check)  # functools.partial: the function it calls
    name = getattr(target, "__name__", None) or type(target).__name__
    code = getattr(target, "__code__", None)
    where = "" if code is None else f" ({os.path.basename(code.co_filename)}:{code.co_firstlineno})"
    return f"check {name}{where} returned {verdict!r}"

"""An exception as one line of text that loses nothing a user needs.

A trial or a tuned config that fails keeps why as one line (a record field, a table
cell, a log line). Its first line alone drops what matters most in a check's failure:
``torch.testing.assert_close`` says "Tensor-likes are not close!" first, and the count of
mismatched elements, the greatest difference and its index on the lines after.
"""

from __future__ import annotations

__all__ = ["LINE_SEPARATOR", "MAX_ERROR_CHARS", "one_line"]

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

"""Read whichever hand-off a text holds: profile, optimization task or new version."""

from __future__ import annotations

import os
import re
from typing import Union

from kernelopt._errors import FormatError, expected
from kernelopt.bench.report import ProfileReport
from kernelopt.workflow._fields import path_label, require_text
from kernelopt.workflow._markdown import BOM
from kernelopt.workflow.profile import parse_profile
from kernelopt.workflow.task import OptimizationTask, parse_task
from kernelopt.workflow.version import NewVersion, parse_version

__all__ = ["Handoff", "parse_handoff"]

Handoff = Union[ProfileReport, OptimizationTask, NewVersion]  # noqa: UP007 - a runtime alias

_FIRST = re.compile(
    r"^ {0,3}##\s+(Profile|Optimization Task|New Version):", re.IGNORECASE | re.MULTILINE
)


def parse_handoff(text: str, *, path: str | os.PathLike[str] | None = None) -> Handoff:
    """Parse the first hand-off in ``text``, whichever of the three contracts it follows.

    Parameters
    ----------
    text : str
        Markdown holding a profile, optimization task or new-version hand-off.
    path : path-like, optional
        Where ``text`` came from, named in errors.

    Returns
    -------
    ProfileReport, OptimizationTask or NewVersion
        The record of the contract its heading names.

    Raises
    ------
    InputError
        When ``text`` is not a str.
    FormatError
        When ``text`` holds none, or the one it holds is malformed.

    Examples
    --------
    >>> from kernelopt.workflow import parse_handoff
    >>> text = "## New Version: k v2\\n### Changes Applied:\\n- fuse\\n### Files:\\n- none\\n" \\
    ...        "### Correctness: PASS\\n### Trial Configurations Checked\\n" \\
    ...        "1. [32, 1, 4096] -- decode\\n### Devlog Entry Written: none\\n"
    >>> type(parse_handoff(text)).__name__
    'NewVersion'
    """
    require_text(text)
    where = path_label(path)
    # The parsers take a lone CR for a line end too; so must the search for the heading.
    found = _FIRST.search(text.removeprefix(BOM).replace("\r\n", "\n").replace("\r", "\n"))
    if found is None:
        raise FormatError(
            expected(
                "a '## Profile:', '## Optimization Task:' or '## New Version:' heading", "none"
            ),
            path=where,
        )
    kind = found.group(1).lower()
    if kind == "profile":
        return parse_profile(text, path=path)
    if kind == "optimization task":
        return parse_task(text, path=path)
    return parse_version(text, path=path)

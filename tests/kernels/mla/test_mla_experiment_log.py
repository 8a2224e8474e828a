"""The MLA decode effort's own log reads whole: every result is a canonical record.

``docs/kernels/mla_decode/experiments/`` is the log ``kernelopt diagnose`` is run on
between attempts. A result.md the canonical reader refuses falls back to a looser reading
that loses its trial point, so the diagnosis would judge the effort without it.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kernelopt.experiments import parse_result, read_log

LOG = Path(__file__).resolve().parents[3] / "docs" / "kernels" / "mla_decode"
RESULTS = sorted(
    (LOG / "experiments").glob("exp_*/result.md"),
    key=lambda p: int(p.parent.name.removeprefix("exp_")),
)


def test_the_log_has_results() -> None:
    # Guards the parametrization below against an empty glob.
    assert len(RESULTS) >= 39


@pytest.mark.parametrize("path", RESULTS, ids=lambda p: p.parent.name)
def test_every_result_is_a_canonical_record(path: Path) -> None:
    record = parse_result(path.read_text(encoding="utf-8"), path=path)
    assert f"exp_{record.experiment}" == path.parent.name


def test_the_summary_agrees_with_every_result() -> None:
    # The first measured row is the headline the summary repeats; a log that disagrees
    # with itself makes the reader pick one and warn.
    log = read_log(LOG)
    assert log.warnings == ()
    summary = (LOG / "experiments" / "summary.md").read_text(encoding="utf-8")
    numbered = {int(m) for m in re.findall(r"^\| (\d+) \|", summary, re.M)}
    assert numbered == {int(p.parent.name.removeprefix("exp_")) for p in RESULTS}

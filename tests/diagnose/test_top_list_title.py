"""The ignored-prior-research item names a profile's ranked list as its heading does: the
seed's "Top 3", or "Top 5" for a profile that ranked five opportunities."""

from __future__ import annotations

from pathlib import Path

import pytest

from kernelopt.diagnose import Pathology, diagnose
from tests.conftest import write_files

_HEADER = (
    "| Exp | Description | Latency | Unit | Correct | Status | Tags |\n"
    "|---|---|---|---|---|---|---|\n"
)
# Attempts after the profile that share no words with its opportunities.
_UNRELATED = ["hoist reciprocal", "reorder argument checks", "narrower masks", "fewer asserts"]


def _summary() -> str:
    rows = ["| 1 | torch eager baseline | 100 | us | PASS | BASELINE |  |\n"]
    rows += [
        f"| {n} | {title} | {100 - n} | us | PASS | KEPT |  |\n"
        for n, title in enumerate(_UNRELATED, start=2)
    ]
    return _HEADER + "".join(rows)


def _profile(ranked: int) -> str:
    rows = "".join(
        f"| {n} | Opportunity number {n} | `entry-{n}` |\n" for n in range(1, ranked + 1)
    )
    return (
        "## Profile: mla_decode exp 1 | b=32\n"
        f"### Top {ranked} Opportunities\n"
        "| Rank | Opportunity | Entry |\n|---|---|---|\n" + rows
    )


@pytest.mark.parametrize("ranked", [3, 5])
def test_the_finding_names_the_list_as_the_profile_ranked_it(tmp_path: Path, ranked: int) -> None:
    root = write_files(
        tmp_path,
        {"experiments/summary.md": _summary(), "experiments/profile.md": _profile(ranked)},
    )
    finding = diagnose(root).finding(Pathology.IGNORED_PRIOR_RESEARCH)
    assert finding is not None
    assert f"The Top {ranked} Opportunities list of" in finding.summary
    last = [a.text for a in finding.actions if a.catalog_id == f"entry-{ranked}"]
    assert len(last) == 1
    assert f"ranked {ranked} of the profile's Top {ranked} (" in last[0]
    assert "Top 3" not in finding.summary or ranked == 3

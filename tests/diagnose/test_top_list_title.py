"""The ignored-prior-research item names a profile's ranked list as its heading does: the
seed's "Top 3", or "Top 5" for a profile that ranked five opportunities."""

from __future__ import annotations

from pathlib import Path

import pytest

from kernelopt.diagnose import Pathology, diagnose
from tests.conftest import UNRELATED_TITLES, summary_table, write_files

# Attempts after the profile that share no words with its opportunities.
_ATTEMPTS = [*UNRELATED_TITLES, "fewer asserts"]


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
        {
            "experiments/summary.md": summary_table(_ATTEMPTS),
            "experiments/profile.md": _profile(ranked),
        },
    )
    finding = diagnose(root).finding(Pathology.IGNORED_PRIOR_RESEARCH)
    assert finding is not None
    assert f"The Top {ranked} Opportunities list of" in finding.summary
    last = [a.text for a in finding.actions if a.catalog_id == f"entry-{ranked}"]
    assert len(last) == 1
    assert f"ranked {ranked} of the profile's Top {ranked} (" in last[0]
    assert "Top 3" not in finding.summary or ranked == 3

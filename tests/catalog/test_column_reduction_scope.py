"""The two-stage column reduction is offered where a kernel sums over its rows (a
normalization backward, a column reduction), not to a row reduction such as a per-token
fp8 quantizer, whose memory-bound metrics fire the same trigger."""

from __future__ import annotations

import pytest

from kernelopt import cli
from kernelopt.catalog import Catalog, family_ancestors

CATALOG = Catalog.builtin()
ENTRY = "two-stage-column-reduction"
# A per-token fp8 quantizer's metrics, from a CPU-interpreter user's profile.
ROW_REDUCTION = {"arith_intensity": 1.33, "ridge": 223.0, "dram_pct": 5.83}


def test_a_row_reduction_is_not_offered_the_column_reduction() -> None:
    answered = [m.id for m in CATALOG.query(metrics=ROW_REDUCTION, family="reduction")]
    assert answered and ENTRY not in answered


@pytest.mark.parametrize("family", ["column-reduction", "column_sum", "normalization"])
def test_a_column_reduction_or_normalization_still_is(family: str) -> None:
    matches = CATALOG.query(metrics=ROW_REDUCTION, family=family)
    assert matches[0].id == ENTRY


def test_the_column_reduction_family_sits_under_reduction() -> None:
    assert family_ancestors("column-reduction") == ("column-reduction", "reduction", "any")
    # What every reduction needs is still found for a column reduction.
    shared = {m.id for m in CATALOG.query(family="reduction")}
    assert shared <= {m.id for m in CATALOG.query(family="column-reduction")}


def test_match_for_a_reduction_with_a_low_bandwidth_share_leaves_it_out(
    capsys: pytest.CaptureFixture[str],
) -> None:
    args = ["--metric", "dram_pct=5.6", "--metric", "arith_intensity=1.33", "--metric", "ridge=223"]
    assert cli.main(["catalog", "match", "--family", "reduction", *args]) == 0
    captured = capsys.readouterr()
    assert ENTRY not in captured.out and ENTRY not in captured.err

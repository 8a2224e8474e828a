"""Rows of a launch's host time (mode "host", backend "host-perf-counter") in the profile
hand-off: they are host-clock rows, reported as such, not refused as unknown modes."""

from __future__ import annotations

import attrs

from kernelopt.workflow import profile_from_rows

from .conftest import anchor_row
from .test_from_rows import H200, FixedCatalog


def test_a_host_time_row_with_samples_gives_a_host_clock_report() -> None:
    row = anchor_row("splits8", samples=30)
    host = attrs.evolve(row, mode="host", backend="host-perf-counter")
    assert host.host_clock
    [report] = profile_from_rows(
        [host], kernel="mla_decode", version="splits8", ceilings=H200, catalog=FixedCatalog()
    )
    assert report.root_cause.startswith("Timed with the host clock (CPU)")

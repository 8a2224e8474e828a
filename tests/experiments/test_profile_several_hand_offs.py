"""A profile.md of several hand-offs (``kernelopt report profile --rows`` writes one per
trial point) is one profile: every hand-off's Top 3 is its ranked list, none of it loose
advice, and a Top 3 that says there is none recommends nothing.

The second hand-off's Top 3 was read as advice of no date, which counted against every
attempt of the log; "(none: no catalog trigger fired ...)" was quoted as research ignored.
"""

from __future__ import annotations

from pathlib import Path

from kernelopt.bench import Bottleneck, Opportunity, ProfileReport, Stage
from kernelopt.experiments import read_log

from ..conftest import write_files

SUMMARY = """# Experiments Summary

| Exp | Date | Description | Latency | Unit | Speedup | Correct | Status | Tags |
|---|---|---|---|---|---|---|---|---|
| 1 | 2026-12-07 | torch eager baseline | 118.2 | us |  | PASS | BASELINE |  |
| 2 | 2026-12-07 | v3: four tokens per program | 39.87 | us | 2.96 | PASS | KEPT |  |
"""


def _hand_off(version: str, tokens: int, *ids: str) -> str:
    return ProfileReport(
        kernel="fp8_quant",
        version=version,
        point={"b": 32, "s": 1, "t": tokens},
        stages=[Stage(name="fp8_quant", duration=3.9, tc_pct=0.04, dram_pct=5.8)],
        bottleneck=Bottleneck.LATENCY,
        root_cause="Latency.",
        opportunities=[
            Opportunity(name=i.title(), entry_id=i, gain_pct=50.0, trigger="dram_pct=5.8")
            for i in ids
        ],
    ).render()


def _log(tmp_path: Path, *hand_offs: str) -> object:
    write_files(
        tmp_path,
        {
            "experiments/summary.md": SUMMARY,
            "experiments/profile.md": "\n".join(hand_offs),
        },
    )
    return read_log(tmp_path, catalog=())


def test_every_hand_off_of_the_version_joins_the_first_ones_top_3(tmp_path: Path) -> None:
    log = _log(
        tmp_path,
        _hand_off("v3", 4096, "kernel-fusion"),
        _hand_off("v3", 32, "software-pipelining", "kernel-fusion"),
    )
    profile = log.profile  # type: ignore[attr-defined]
    assert [o.catalog_ids for o in profile.opportunities] == [
        ("kernel-fusion",),
        ("software-pipelining",),
    ]
    assert profile.version == "v3"
    assert log.recommendations == ()  # type: ignore[attr-defined]


def test_a_hand_off_of_another_version_gives_no_advice_and_says_so(tmp_path: Path) -> None:
    log = _log(
        tmp_path,
        _hand_off("v3", 4096, "kernel-fusion"),
        _hand_off("v4", 4096, "software-pipelining"),
    )
    profile = log.profile  # type: ignore[attr-defined]
    assert [o.catalog_ids for o in profile.opportunities] == [("kernel-fusion",)]
    assert log.recommendations == ()  # type: ignore[attr-defined]
    assert any(
        "the Top 3 of a hand-off of 'fp8_quant v4'" in warning
        for warning in log.warnings  # type: ignore[attr-defined]
    )


def test_a_top_3_that_states_none_recommends_nothing(tmp_path: Path) -> None:
    log = _log(tmp_path, _hand_off("v3", 4096), _hand_off("v3", 32))
    assert log.profile.opportunities == ()  # type: ignore[attr-defined]
    assert log.recommendations == ()  # type: ignore[attr-defined]

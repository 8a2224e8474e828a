"""The example logs shipped in examples/logs/ diagnose as they were written to."""

from __future__ import annotations

from pathlib import Path

import pytest

from kernelopt.diagnose import Pathology, diagnose

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "logs"
P = Pathology


def _found(name: str, **kwargs: object) -> dict[Pathology, object]:
    diagnosis = diagnose(EXAMPLES / name, **kwargs)  # type: ignore[arg-type]
    assert len(diagnosis.checks) == 9 and not diagnosis.unread
    assert all("internal error" not in c.sentence for c in diagnosis.checks)
    return {f.pathology: f for f in diagnosis.findings}


def test_mla_decode_plateau() -> None:
    diagnosis = diagnose(EXAMPLES / "mla-decode-plateau")
    found = {f.pathology: f for f in diagnosis.findings}
    assert set(found) == {
        P.REPETITION_LOOP,
        P.LOCAL_MINIMUM,
        P.MISSING_FUNDAMENTAL,
        P.IGNORED_PRIOR_RESEARCH,
        P.BUFFER_PERSISTENCE,
        P.OVERLOOKED_SHORTCUT,
    }
    loop = found[P.REPETITION_LOOP]
    assert "BLOCK_N" in loop.summary and {5, 8, 10} <= set(loop.experiments)
    assert found[P.LOCAL_MINIMUM].experiments == (4, 5, 6, 7, 8, 9, 10)
    missing = [a.catalog_id for a in found[P.MISSING_FUNDAMENTAL].actions]
    assert "split-kv-flash-decoding" in missing and "online-softmax" not in missing
    assert [e.source for e in found[P.BUFFER_PERSISTENCE].evidence] == [
        "kernels/mla_decode.py:73",
        "kernels/mla_decode.py:74",
    ]
    assert "s_q = 1" in found[P.OVERLOOKED_SHORTCUT].summary
    assert (
        found[P.IGNORED_PRIOR_RESEARCH].evidence[0].source.startswith("experiments/exp_5/plan.md:")
    )
    # The design gap is the root cause; the plateau is its symptom.
    assert diagnosis.root_causes[0].startswith("Missing fundamental")
    assert any("symptom" in s for s in diagnosis.root_causes)
    summary = diagnosis.summary
    assert (summary.family, summary.best.experiment, summary.best.value) == ("mla-decode", 7, 56.4)  # type: ignore[union-attr]
    assert summary.stall == (4, 5, 6, 7, 8, 9, 10)


def test_mla_decode_plateau_before_the_plateau() -> None:
    found = _found("mla-decode-plateau", until=5)
    assert P.LOCAL_MINIMUM not in found and P.REPETITION_LOOP not in found
    assert P.MISSING_FUNDAMENTAL in found  # the design gap was there from the start


def test_healthy_run_has_no_finding() -> None:
    assert _found("healthy-run") == {}


def test_repetition_loop() -> None:
    found = _found("repetition-loop")
    assert set(found) == {P.REPETITION_LOOP, P.LOCAL_MINIMUM}
    assert "num_warps" in found[P.REPETITION_LOOP].summary  # type: ignore[attr-defined]
    assert found[P.REPETITION_LOOP].experiments == (3, 4, 5, 6, 7)  # type: ignore[attr-defined]


def test_correctness_wall() -> None:
    found = _found("correctness-wall")
    assert set(found) == {P.CORRECTNESS_WALL}
    wall = found[P.CORRECTNESS_WALL]
    assert wall.experiments == (3, 4, 5, 6)  # type: ignore[attr-defined]
    for suspect in ("dot input precision", "LSE base", "softmax masking"):
        assert suspect in wall.summary  # type: ignore[attr-defined]
    assert "bf16 accumulation" not in wall.summary  # type: ignore[attr-defined]


def test_over_engineering() -> None:
    found = _found("over-engineering")
    assert set(found) == {P.OVER_ENGINEERING, P.LOCAL_MINIMUM}
    assert "10,000 autotune configurations" in found[P.OVER_ENGINEERING].summary  # type: ignore[attr-defined]


def test_wrong_bottleneck() -> None:
    found = _found("wrong-bottleneck")
    assert set(found) == {P.WRONG_BOTTLENECK}
    assert found[P.WRONG_BOTTLENECK].experiments == (3, 4, 5, 6)  # type: ignore[attr-defined]


@pytest.mark.parametrize("name", sorted(p.name for p in EXAMPLES.iterdir() if p.is_dir()))
def test_every_example_is_documented(name: str) -> None:
    assert f"`{name}`" in (EXAMPLES / "README.md").read_text()

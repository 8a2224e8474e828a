"""Orchestrator → Designer hand-off: exact text, round trips, catalog links."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings

from kernelopt import CatalogError, FormatError, InputError
from kernelopt.bench import Bottleneck, ProfileReport, Stage
from kernelopt.catalog import Catalog
from kernelopt.workflow import Change, Constraints, OptimizationTask, parse_change, parse_task

from .strategies import changes, tasks

CATALOG = Catalog.builtin()
TASK = OptimizationTask(
    kernel="mla_decode",
    current="v2",
    new_version="v3",
    bottleneck="Memory-bound -- 54% of the roofline floor",
    optimizations=[
        Change.of(
            CATALOG.get("split-kv-flash-decoding"),
            "split the KV axis into 8 chunks",
            rationale="waves=0.24 < 1: a quarter of the SMs idle",
        ),
        Change.of(CATALOG.get("dot-input-precision"), "keep tf32x3 off the PV product"),
        Change(what="fuse the LSE combine into the last split", rationale="saves a launch"),
    ],
    constraints=Constraints(
        language="triton",
        control_level="tile-level (Triton)",
        register_budget=128,
        target_occupancy_pct=37.5,
        other=("keep the public signature",),
    ),
)

TEXT = """## Optimization Task: mla_decode v2 -> v3
### Current Bottleneck: Memory-bound -- 54% of the roofline floor
### Optimizations to Apply:
1. [split-kv-flash-decoding](docs/knowledge/optimizations/split-kv-flash-decoding.md) -- split the KV axis into 8 chunks -- rationale: waves=0.24 < 1: a quarter of the SMs idle
2. [dot-input-precision](docs/knowledge/languages/triton/optimizations/dot-input-precision.md) -- keep tf32x3 off the PV product
3. fuse the LSE combine into the last split -- rationale: saves a launch

### Constraints
- Language: triton
- Control level: tile-level (Triton)
- Register budget: 128 registers per thread
- Target occupancy: 37.5%
- keep the public signature
"""  # noqa: E501


def test_render_is_the_contract_text() -> None:
    assert TASK.render() == TEXT


def test_round_trip() -> None:
    assert parse_task(TEXT) == TASK


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow])
@given(tasks)
def test_round_trip_property(task: OptimizationTask) -> None:
    assert parse_task(task.render()) == task


@settings(max_examples=150)
@given(changes())
def test_change_round_trip_property(change: Change) -> None:
    assert parse_change(change.render()) == change


def test_empty_constraints_render_none_and_read_back() -> None:
    task = OptimizationTask(
        kernel="k", current="a", new_version="b", bottleneck="x", optimizations=[Change(what="y")]
    )
    assert task.render().endswith("### Constraints\n- none\n")
    assert parse_task(task.render()) == task


def test_prose_around_and_between_sections_is_ignored() -> None:
    text = (
        "Plan for the next iteration.\n\n"
        + TEXT.replace(
            "### Constraints", "These constraints come from the profile:\n\n### Constraints"
        )
        + "\n## Next steps\n1. not an optimization\n"
    )
    assert parse_task(text.replace("\n", "\r\n")) == TASK


def test_hand_written_links_and_arrows_read() -> None:
    text = (
        "## Optimization Task: mla decode v2 → v3\n"
        "### Current Bottleneck:   Latency-bound,   few CTAs\n"
        "### Optimizations to Apply:\n"
        "1. [cuda-graphs](docs/knowledge/optimizations/cuda-graphs.md): capture the step\n"
    )
    task = parse_task(text)
    assert (task.kernel, task.current, task.new_version) == ("mla decode", "v2", "v3")
    assert task.bottleneck == "Latency-bound, few CTAs"
    assert task.optimizations[0].entry_id == "cuda-graphs"
    assert task.optimizations[0].what == "capture the step"
    assert task.constraints == Constraints()


def test_validate_lists_unknown_ids_and_stale_links() -> None:
    TASK.validate(CATALOG)
    stale = Change(
        what="x", entry_id="cuda-graphs", link="docs/knowledge/anti-patterns/cuda-graphs.md"
    )
    bad = OptimizationTask(
        kernel="k",
        current="a",
        new_version="b",
        bottleneck="x",
        optimizations=[Change(what="y", entry_id="no-such-trick", link="a.md"), stale],
    )
    with pytest.raises(CatalogError) as caught:
        bad.validate(CATALOG)
    assert "unknown entry id 'no-such-trick'" in str(caught.value)
    assert "optimizations/cuda-graphs.md" in str(caught.value)
    assert len(bad.problems(CATALOG)) == 2


def test_from_profile() -> None:
    report = ProfileReport(
        kernel="mla_decode",
        version="v2",
        point={"b": 32, "s": 1, "t": 4096},
        stages=[Stage(name="all", duration=66.5)],
        bottleneck=Bottleneck.MEMORY,
        root_cause="Bytes set the floor.\nIt reaches 54%.",
    )
    task = OptimizationTask.from_profile(report, new_version="v3", optimizations=[Change(what="z")])
    assert task.bottleneck == "Memory-bound -- Bytes set the floor. It reaches 54%."
    assert (task.kernel, task.current) == ("mla_decode", "v2")


@pytest.mark.parametrize(
    ("text", "section"),
    [
        (
            "## Optimization Task: k a -> b\n### Optimizations to Apply:\n1. x\n",
            "Current Bottleneck",
        ),
        ("## Optimization Task: k a -> b\n### Current Bottleneck: m\n", "Optimizations to Apply"),
        (
            "## Optimization Task: k a -> b\n### Current Bottleneck: m\n"
            "### Optimizations to Apply:\n",
            "Optimizations to Apply",
        ),
        ("## Optimization Task: k a b\n### Current Bottleneck: m\n", "Optimization Task"),
        (
            "## Optimization Task: k a -> b\n### Current Bottleneck: m\n"
            "### Optimizations to Apply:\n1. x\n### Constraints\n- Register budget: many\n",
            "Constraints",
        ),
    ],
)
def test_malformed_tasks_name_the_section(text: str, section: str) -> None:
    with pytest.raises(FormatError) as caught:
        parse_task("preamble\n" + text, path="task.md")
    assert caught.value.section == section
    assert caught.value.line is not None and caught.value.path == "task.md"


def test_invalid_values_are_refused() -> None:
    with pytest.raises(InputError, match="version name"):
        OptimizationTask(
            kernel="k",
            current="v 1",
            new_version="b",
            bottleneck="x",
            optimizations=[Change(what="y")],
        )
    with pytest.raises(InputError, match="at least one optimization"):
        OptimizationTask(kernel="k", current="a", new_version="b", bottleneck="x", optimizations=[])
    with pytest.raises(InputError, match="typed label"):
        Constraints(other=("Language: cuda",))
    with pytest.raises(InputError, match="link exactly when"):
        Change(what="x", entry_id="cuda-graphs")
    with pytest.raises(InputError, match="description"):
        Change(what="x -- rationale: y")

"""Orchestrator → Designer hand-off: exact text, round trips, catalog links."""

from __future__ import annotations

import warnings
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from kernelopt import CatalogError, FormatError, InputError
from kernelopt.bench import Bottleneck, ProfileReport, Stage
from kernelopt.catalog import Catalog
from kernelopt.workflow import (
    Change,
    Constraints,
    HandoffWarning,
    OptimizationTask,
    parse_change,
    parse_task,
)

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
    with warnings.catch_warnings():
        # A lead line that introduces the next heading holds nothing to warn of.
        warnings.simplefilter("error", HandoffWarning)
        assert parse_task(text.replace("\n", "\r\n")) == TASK


@pytest.mark.parametrize(
    ("body", "warned"),
    [
        ("The designer keeps to:\n- Language: triton\n", False),
        ("Keep registers low.\n- Language: triton\n", True),
        ("The designer keeps to:\nregisters low\n- Language: triton\n", True),
    ],
)
def test_a_lead_line_opening_the_list_is_not_warned_of(body: str, warned: bool) -> None:
    text = TEXT.split("### Constraints")[0] + "### Constraints\n" + body
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        parse_task(text)
    assert any(issubclass(w.category, HandoffWarning) for w in caught) is warned


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


SPLIT_KV = "docs/knowledge/optimizations/split-kv-flash-decoding.md"


@pytest.mark.parametrize(
    ("item", "what", "rationale"),
    [
        # The contract's order: optimization + rationale + link to the knowledge file.
        (
            f"split the KV axis -- fills the SMs -- {SPLIT_KV}",
            "split the KV axis -- fills the SMs",
            "",
        ),
        (f"split the KV axis (see {SPLIT_KV})", "split the KV axis", ""),
        (
            f"split the KV axis -- rationale: fills the SMs; {SPLIT_KV}.",
            "split the KV axis",
            "fills the SMs",
        ),
        (
            f"split the KV axis + fills the SMs + [Split-KV]({SPLIT_KV})",
            "split the KV axis + fills the SMs",
            "",
        ),
        (f"[Split-KV Flash Decoding]({SPLIT_KV}) -- split the KV axis", "split the KV axis", ""),
    ],
)
def test_a_knowledge_link_anywhere_in_a_hand_written_item_names_the_entry(
    item: str, what: str, rationale: str
) -> None:
    change = parse_change(item)
    assert change == Change(
        what=what, entry_id="split-kv-flash-decoding", link=SPLIT_KV, rationale=rationale
    )
    assert parse_change(change.render()) == change
    assert change.problems(CATALOG) == []


def test_a_path_that_is_no_knowledge_file_stays_text() -> None:
    assert parse_change("edit kernels/notes.md").entry_id is None
    # No file name to read an id from: the link's text must be one.
    with pytest.raises(InputError, match="kebab-case"):
        parse_change("[Cuda Graphs](docs/knowledge/optimizations/cuda-graphs) -- replay")


def test_an_unlinked_change_ending_in_a_knowledge_link_is_refused() -> None:
    # It would read back as linked: the entry belongs in entry_id and link.
    with pytest.raises(InputError, match="entry_id"):
        Change(what=f"split the KV axis -- {SPLIT_KV}")
    with pytest.raises(InputError, match="entry_id"):
        Change(what="split the KV axis", rationale=f"see [x]({SPLIT_KV})")


def test_the_contracts_required_control_level_reads_as_the_control_level() -> None:
    # The contract lists "required control level" among the constraints.
    text = TASK.render().replace(
        "- Control level: tile-level (Triton)", "- Required control level: warp-level MMA"
    )
    assert parse_task(text).constraints.control_level == "warp-level MMA"
    with pytest.raises(InputError, match="typed label"):
        Constraints(other=("Required control level: warp-level MMA",))


@pytest.mark.parametrize(
    ("budget", "occupancy"),
    [("<= 128", ">= 25%"), ("≤ 128 regs/thread", "≥ 25 %"), ("at most 128", "at least 25%")],
)
def test_a_bound_written_before_a_typed_value_reads(budget: str, occupancy: str) -> None:
    # A budget is a maximum and a target occupancy a minimum: "<= 128" says what "128" says.
    text = TASK.render().replace("128 registers per thread", budget).replace("37.5%", occupancy)
    constraints = parse_task(text).constraints
    assert (constraints.register_budget, constraints.target_occupancy_pct) == (128, 25.0)


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


def test_the_contracts_one_line_constraints_fill_every_field() -> None:
    # The contract lists "register budget, target occupancy, required control level, and
    # language-specific constraints" in one bullet; filled in place, no value may be lost.
    one_line = (
        "- register budget: 96, target occupancy: 50%, required control level: warp-level; "
        "language: cuda"
    )
    text = TASK.render().split("### Constraints")[0] + "### Constraints\n" + one_line + "\n"
    assert parse_task(text).constraints == Constraints(
        language="cuda",
        control_level="warp-level",
        register_budget=96,
        target_occupancy_pct=50,
    )


@pytest.mark.parametrize(
    "fields",
    [
        {"other": ("keep the public signature, language: cuda",)},
        {"language": "triton; register budget: 64"},
        {"control_level": "tile-level, Target occupancy: 25%"},
    ],
)
def test_a_typed_label_inside_another_constraint_is_refused(fields: dict[str, Any]) -> None:
    # Rendered, it would read back as a second constraint.
    with pytest.raises(InputError, match="typed label"):
        Constraints(**fields)


@pytest.mark.parametrize(
    "item",
    [
        f"[split the KV axis -- rationale: fills the grid -- {SPLIT_KV}]",
        f"[split the KV axis -- rationale: fills the grid (see {SPLIT_KV})]",
    ],
)
def test_the_contracts_item_placeholder_filled_in_place_reads(item: str) -> None:
    # "1. [specific optimization + rationale + link to the ... knowledge file]": the link
    # inside the brackets was missed, and the change read as "[split the KV axis".
    assert parse_change(item) == Change(
        what="split the KV axis",
        entry_id="split-kv-flash-decoding",
        link=SPLIT_KV,
        rationale="fills the grid",
    )
    assert parse_change("[fuse the combine]") == Change(what="fuse the combine")


@pytest.mark.parametrize(("what", "rationale"), [("[fuse the combine]", ""), ("[fuse", "x]")])
def test_a_change_in_the_templates_brackets_is_refused(what: str, rationale: str) -> None:
    # It would read back without them.
    with pytest.raises(InputError, match="brackets"):
        Change(what=what, rationale=rationale)


def test_optimizations_written_as_bullets_read() -> None:
    text = (
        TEXT.replace("\n1. [", "\n- [").replace("\n2. [", "\n- [").replace("\n3. fuse", "\n* fuse")
    )
    assert text != TEXT
    assert parse_task(text) == TASK


def test_details_nested_under_a_numbered_optimization_are_prose() -> None:
    text = TEXT.replace("chunks -- rationale", "chunks -- rationale").replace(
        "\n2. [", "\n   - 8 splits of 512 tokens\n2. ["
    )
    assert text != TEXT
    assert parse_task(text) == TASK

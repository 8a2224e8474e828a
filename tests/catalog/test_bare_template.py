"""Files written to the bare knowledge-base template: no metadata, no Source line, free text.

Such a file has only the template's title and sections. It loads with id, kind and scope
read from its place in the tree, each inference a lint warning, and the first update
rewrites it in the canonical form in the same folder.
"""

from __future__ import annotations

from pathlib import Path

import attrs
import pytest

from kernelopt import FormatError
from kernelopt.catalog import (
    Catalog,
    EvidenceRow,
    Kind,
    KnowledgeTree,
    lint_tree,
    load_tree,
    parse_entry,
    render_entry,
)
from kernelopt.catalog.markdown import parse_entry_with_warnings

from .conftest import make_entry

# The template's structure exactly: title, the eight sections in order, a 'Source type:'
# line straight above the table, free-text Interactions bullets.
BARE = """# Warp-Specialized KV Loading

## When to Apply
- Any decode-attention kernel whose KV loads and MMAs serialize in one warp group
- MLA decode kernels with a 576-wide head dimension
- DRAM throughput below 60% while Tensor Core utilization is also low
- Occupancy limited to one CTA per SM by shared memory

## Mechanism
A producer warp issues the loads of the next KV tile while consumer warps run the MMAs
on the current one, so memory latency hides behind compute.

## Affected Metrics
- DRAM throughput
- Tensor Core utilization
- registers/thread

## Implementation
```python
# Code snippet
for t in range(n_tiles):
    load(kv[t + 1], buf[(t + 1) % 2])
    mma(q, buf[t % 2])
```

## Performance Evidence
Source type: local experiment
| Config | Before | After | Change |
|--------|--------|--------|--------|
| b=32, s=1, t=4096 | 41.0 us | 33.5 us | -18.3% |
| b=32, s=16, t=4096 | 88.2 us | 75.9 us | -13.9% |

## Generalization
Split loads and compute across warps once one warp group cannot keep both units busy.

## Pitfalls
- Too few pipeline stages leave the consumers waiting on the producer
- The register split must be aligned to warp groups

## Interactions
- Combines well with split-KV: each split runs its own pipeline
- Conflicts with very large tiles, which leave no shared memory for a second stage
"""

BARE_PATH = "languages/cutile-dsl/optimizations/warp-specialized-kv-loading.md"


def _bare_tree(root: Path) -> Path:
    path = root / BARE_PATH
    path.parent.mkdir(parents=True)
    path.write_text(BARE, encoding="utf-8")
    trap = BARE.replace("# Warp-Specialized KV Loading", "# Serialized KV Loading")
    shared = root / "anti-patterns" / "serialized-kv-loading.md"
    shared.parent.mkdir(parents=True)
    shared.write_text(trap, encoding="utf-8")
    return path


def test_bare_template_file_parses_with_id_kind_scope_from_its_path(tmp_path: Path) -> None:
    path = tmp_path / "knowledge" / BARE_PATH
    entry, _ = parse_entry_with_warnings(BARE, path=path)
    assert entry.id == "warp-specialized-kv-loading"
    assert entry.name == "Warp-Specialized KV Loading"
    assert entry.kind is Kind.OPTIMIZATION
    assert entry.scope == "cutile"
    assert entry.families == ("any",)
    assert len(entry.contexts) == 4
    (block,) = entry.evidence
    assert block.source == "" and [r.change for r in block.rows] == ["-18.3%", "-13.9%"]
    assert entry.interactions == ()
    assert entry.interaction_notes == (
        "Combines well with split-KV: each split runs its own pipeline",
        "Conflicts with very large tiles, which leave no shared memory for a second stage",
    )
    assert parse_entry(BARE, path=path) == entry


def test_each_inferred_or_missing_item_is_one_located_warning(tmp_path: Path) -> None:
    path = tmp_path / "knowledge" / BARE_PATH
    _, warnings = parse_entry_with_warnings(BARE, path=path)
    lines = BARE.split("\n")
    found = [(w.section, w.line) for w in warnings]
    assert found == [
        ("metadata", 1),
        ("metadata", 1),
        ("metadata", 1),
        ("metadata", 1),
        ("Performance Evidence", lines.index("Source type: local experiment") + 1),
        (
            "Interactions",
            lines.index("- Combines well with split-KV: each split runs its own pipeline") + 1,
        ),
        ("Interactions", len(lines) - 1),
    ]
    assert all(not w.is_error and w.path == str(path) for w in warnings)
    messages = [w.message for w in warnings]
    assert all(m.startswith("Expected ") and ", got " in m for m in messages)
    assert "'warp-specialized-kv-loading' from the file name" in messages[0]
    assert "'optimization' from the optimizations/ folder" in messages[1]
    assert "'cutile' from languages/cutile-dsl/" in messages[2]
    assert "'any'" in messages[3]
    assert "'Source:" in messages[4]
    assert "kept as a note" in messages[5]


def test_bare_template_tree_loads_and_lints_without_errors(tmp_path: Path) -> None:
    root = tmp_path / "knowledge"
    _bare_tree(root)
    tree = load_tree(root, strict=True)
    assert [e.id for e in tree.entries] == ["serialized-kv-loading", "warp-specialized-kv-loading"]
    trap = tree.entries[0]
    assert trap.kind is Kind.ANTI_PATTERN and trap.scope == "shared"
    assert tree.errors == ()
    problems = lint_tree(root)
    assert [p for p in problems if p.is_error] == []
    sections = [p.section for p in problems if p.path.endswith("warp-specialized-kv-loading.md")]
    assert sections.count("metadata") >= 4 and sections.count("Interactions") == 2
    catalog = Catalog.load(root)
    assert "warp-specialized-kv-loading" in catalog
    assert "warp-specialized-kv-loading" in [m.id for m in catalog.query(language="cutile-dsl")]


def test_update_rewrites_a_bare_file_canonically_in_its_folder(tmp_path: Path) -> None:
    root = tmp_path / "knowledge"
    path = _bare_tree(root)
    tree = KnowledgeTree(root)
    tree.write_index()
    row = EvidenceRow(config="b=8, s=1, t=8192", before="20.0 us", after="17.1 us", change="-14.5%")
    updated = tree.record_evidence(
        "warp-specialized-kv-loading",
        row,
        source_type="local experiment",
        source="experiments/exp_9/result.md",
    )
    assert path.is_file() and not (root / "languages" / "cutile").exists()
    text = path.read_text(encoding="utf-8")
    assert text == render_entry(updated)
    assert "- id: warp-specialized-kv-loading\n- kind: optimization\n- scope: cutile\n" in text
    # Nothing the person wrote is lost: the first block keeps its rows, the notes stay.
    assert updated.evidence[0].rows == parse_entry(BARE, path=path).evidence[0].rows
    assert len(updated.interaction_notes) == 2
    _, warnings = parse_entry_with_warnings(text, path=path)
    assert {w.section for w in warnings} == {"Performance Evidence", "Interactions"}
    index = (root / "index.md").read_text(encoding="utf-8")
    assert f"]({BARE_PATH})" in index
    assert [p for p in lint_tree(root) if p.is_error] == []
    assert not any("stale index" in p.message for p in lint_tree(root))


def test_flip_keeps_the_language_folder_spelling(tmp_path: Path) -> None:
    root = tmp_path / "knowledge"
    _bare_tree(root)
    KnowledgeTree(root).flip("warp-specialized-kv-loading", reason="Slower at s=16 (exp_10).")
    moved = root / "languages/cutile-dsl/anti-patterns/warp-specialized-kv-loading.md"
    assert moved.is_file() and not (root / BARE_PATH).exists()


def test_without_metadata_the_path_must_say_id_and_kind() -> None:
    with pytest.raises(FormatError, match="Expected a metadata block under the title") as raised:
        parse_entry(BARE)
    assert raised.value.section == "metadata" and raised.value.line == 1
    with pytest.raises(FormatError, match="kebab-case id"):
        parse_entry(BARE, path="knowledge/optimizations/Warp_Spec.md")
    with pytest.raises(FormatError, match="cutile-dsl"):
        parse_entry(BARE, path="knowledge/languages/rust/optimizations/x.md")


def test_a_partial_metadata_block_is_still_an_error() -> None:
    text = render_entry(make_entry()).replace("- families: decode-attention\n", "")
    with pytest.raises(FormatError, match=r"'- families: \.\.\.'"):
        parse_entry(text, path="knowledge/optimizations/demo-trick.md")


def test_interaction_notes_round_trip_and_cannot_pose_as_links() -> None:
    entry = make_entry(interaction_notes=("Pairs well with any prefetching scheme.",))
    text = render_entry(entry)
    assert text.endswith(
        "- `cuda-graphs` (complements): Both help.\n- Pairs well with any prefetching scheme.\n"
    )
    assert parse_entry(text) == entry
    with pytest.raises(ValueError, match=r"Entry\.interaction_notes: Expected free text"):
        make_entry(interaction_notes=("`other-id` (requires): a link",))
    with pytest.raises(ValueError, match=r"Entry\.interaction_notes"):
        make_entry(interaction_notes=("None",))


@pytest.mark.parametrize("none", ["- None", "- None yet.", "None"])
def test_a_free_text_none_reads_as_no_interactions(none: str) -> None:
    text = render_entry(make_entry(interactions=())).replace("None recorded.", none)
    assert parse_entry(text).interaction_notes == ()


def test_evidence_without_a_source_renders_without_a_source_line() -> None:
    entry = make_entry()
    block = entry.evidence[0]
    bare = attrs.evolve(entry, evidence=(attrs.evolve(block, source=""),))
    text = render_entry(bare)
    assert "Source type: local experiment\n\n| Config" in text and "Source:" not in text
    assert parse_entry(text) == bare


@pytest.mark.parametrize("bullet", ["dram_pct > 60", "`arith_intensity < ridge`"])
def test_a_plain_bullet_holding_a_condition_warns_that_it_is_no_trigger(
    tmp_path: Path, bullet: str
) -> None:
    # The template's "[Metric condition 1]" written as a bare comparison: code reads it as
    # a context, so a lint warning says how to make it a trigger.
    text = BARE.replace("- Occupancy limited to one CTA per SM by shared memory", f"- {bullet}")
    entry, warnings = parse_entry_with_warnings(text, path=tmp_path / "knowledge" / BARE_PATH)
    assert entry.triggers == () and bullet in entry.contexts
    found = [w for w in warnings if w.section == "When to Apply"]
    assert len(found) == 1 and found[0].line == text.split("\n").index(f"- {bullet}") + 1
    assert found[0].message.startswith("Expected 'Metric: `")
    assert "kept as a context" in found[0].message


def test_prose_metric_conditions_do_not_warn(tmp_path: Path) -> None:
    _, warnings = parse_entry_with_warnings(BARE, path=tmp_path / "knowledge" / BARE_PATH)
    assert [w for w in warnings if w.section == "When to Apply"] == []

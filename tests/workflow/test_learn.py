"""LEARN on a temporary knowledge tree: the three outcomes of the protocol."""

from __future__ import annotations

import re
from pathlib import Path

import attrs
import pytest

from kernelopt import CatalogError, InputError
from kernelopt.bench import Comparison, Verdict
from kernelopt.catalog import BUILTIN_ROOT, Catalog, Kind, SourceType, lint_tree, parse_entry
from kernelopt.workflow import (
    Action,
    Observation,
    derive_anti_pattern,
    evidence_row,
    learn,
    observe_files,
    observe_rows,
)

from .conftest import anchor_row, bench_row, snapshot, write_rows


def observed(before: str, after: str, *, samples: int = 0) -> Observation:
    return observe_rows(
        anchor_row(before, samples=samples, seed=1),
        anchor_row(after, samples=samples, seed=2),
        source=f"runs/{before}.jsonl vs runs/{after}.jsonl",
    )


def test_fast_adds_a_local_evidence_row_to_the_applied_entry(knowledge: Path) -> None:
    file = knowledge / "optimizations" / "split-kv-flash-decoding.md"
    before = parse_entry(file.read_text(encoding="utf-8"))
    outcome = learn(
        observed("splits16", "splits8", samples=60),
        entry_id="split-kv-flash-decoding",
        knowledge=knowledge,
        kernel="mla_decode",
        language="triton",
    )
    assert outcome.action is Action.EVIDENCE and outcome.verdict is Verdict.FAST
    assert outcome.entry_id == "split-kv-flash-decoding" and outcome.path == file
    after = parse_entry(file.read_text(encoding="utf-8"))
    block = after.evidence[-1]
    assert block.source_type is SourceType.LOCAL_EXPERIMENT
    assert block.source == "runs/splits16.jsonl vs runs/splits8.jsonl"
    assert block.rows == (outcome.row,)
    assert outcome.row is not None
    assert outcome.row.config == (
        "mla_decode (triton) b=32 s=1 t=4096 h=16, splits16 -> splits8, NVIDIA H200, 2026-12-02"
    )
    assert (outcome.row.before, outcome.row.after) == ("74.08 µs", "66.53 µs")
    assert outcome.row.change == "-10.2 % (FAST)"
    assert "unpaired bootstrap of 60 before and 60 after samples" in block.notes
    assert "dram_pct 48.3 -> 53.8" in block.notes
    # Local evidence only: everything else, the generalization included, is as it was.
    assert after.evidence[:-1] == before.evidence
    assert after.generalization == before.generalization
    assert (knowledge / "index.md").is_file()
    assert not [p for p in lint_tree(knowledge) if p.is_error]
    assert (
        "Recorded a local-experiment evidence row in `split-kv-flash-decoding`" in outcome.summary()
    )


def test_slow_creates_an_anti_pattern_from_the_applied_context(knowledge: Path) -> None:
    outcome = learn(
        observed("splits8", "splits32"),
        entry_id="split-kv-flash-decoding",
        knowledge=knowledge,
        family="mla-decode",
        kernel="mla_decode",
    )
    assert outcome.action is Action.NEW_ANTI_PATTERN and outcome.verdict is Verdict.SLOW
    path = knowledge / "anti-patterns" / "split-kv-flash-decoding-regression.md"
    assert outcome.path == path and outcome.entry_id == "split-kv-flash-decoding-regression"
    entry = parse_entry(path.read_text(encoding="utf-8"))
    assert entry == outcome.created
    assert entry.kind is Kind.ANTI_PATTERN and entry.scope == "shared"
    assert entry.families == ("mla-decode",)
    assert "applied to a mla-decode kernel: slower at b=32 s=1 t=4096 h=16" in entry.contexts[0]
    assert any("(dram_pct): 53.8 -> 39.2" in m for m in entry.affected_metrics)
    assert entry.evidence[0].rows[0].change == "+37.1 % (SLOW)"
    assert entry.generalization.startswith("Not generalized yet")
    assert [i.target for i in entry.interactions] == ["split-kv-flash-decoding"]
    assert outcome.related == ("too-many-kv-splits",)
    catalog = Catalog.load(knowledge)
    assert catalog.get(entry.id).kind is Kind.ANTI_PATTERN
    assert not [p for p in lint_tree(knowledge) if p.is_error]
    index = (knowledge / "index.md").read_text(encoding="utf-8")
    assert "split-kv-flash-decoding-regression" in index

    # A second regression extends the same anti-pattern instead of making another.
    again = learn(
        observe_rows(anchor_row("splits8"), anchor_row("splits16"), source="runs/b.jsonl"),
        entry_id="split-kv-flash-decoding",
        knowledge=knowledge,
    )
    assert again.action is Action.EVIDENCE and again.entry_id == entry.id
    extended = parse_entry(path.read_text(encoding="utf-8"))
    assert len(extended.evidence_rows) == 2


def test_slow_on_an_existing_anti_pattern_extends_it(knowledge: Path) -> None:
    file = knowledge / "anti-patterns" / "too-many-kv-splits.md"
    rows_before = len(parse_entry(file.read_text(encoding="utf-8")).evidence_rows)
    outcome = learn(
        observed("splits8", "splits32"),
        entry_id="split-kv-flash-decoding",
        knowledge=knowledge,
        anti_pattern="too-many-kv-splits",
    )
    assert outcome.action is Action.EVIDENCE and outcome.path == file
    assert len(parse_entry(file.read_text(encoding="utf-8")).evidence_rows) == rows_before + 1
    with pytest.raises(InputError, match="anti-pattern id"):
        learn(
            observed("splits8", "splits32"),
            entry_id="split-kv-flash-decoding",
            knowledge=knowledge,
            anti_pattern="online-softmax",
        )
    # The applied entry itself an anti-pattern: the after version is its fix (fewer
    # splits), so FAST confirms it and SLOW goes against it.
    confirm = learn(
        observed("splits32", "splits8"), entry_id="too-many-kv-splits", knowledge=knowledge
    )
    assert confirm.action is Action.EVIDENCE and not confirm.contradicts and confirm.fix
    assert "It confirms `too-many-kv-splits`" in confirm.summary()
    against = learn(
        observed("splits8", "splits32"), entry_id="too-many-kv-splits", knowledge=knowledge
    )
    assert against.action is Action.EVIDENCE and against.contradicts
    assert "refine its When to Apply or flip it" in against.summary()


@pytest.mark.parametrize(
    ("after", "spread", "verdict"), [(66.7, 0.004, "SAME"), (64.0, 0.09, "UNCLEAR")]
)
def test_within_noise_nothing_is_recorded(
    knowledge: Path, after: float, spread: float, verdict: str
) -> None:
    before_files = snapshot(knowledge)
    seen = observe_rows(
        bench_row("splits8", 66.53, spread=spread),
        bench_row("v2", after, spread=spread),
        source="x",
    )
    outcome = learn(seen, entry_id="split-kv-flash-decoding", knowledge=knowledge)
    assert outcome.action is Action.NONE and outcome.verdict.value == verdict
    assert outcome.path is None and outcome.row is None
    assert snapshot(knowledge) == before_files
    assert "Nothing recorded" in outcome.summary() or "nothing recorded" in outcome.summary()


def test_language_specific_entries_stay_language_specific(knowledge: Path) -> None:
    outcome = learn(
        observe_rows(bench_row("ieee", 100.0), bench_row("tf32", 130.0), source="runs/p.jsonl"),
        entry_id="dot-input-precision",
        knowledge=knowledge,
        language="triton",
    )
    assert (
        outcome.path
        == knowledge / "languages/triton/anti-patterns/dot-input-precision-regression.md"
    )
    assert outcome.created is not None and outcome.created.scope == "triton"
    fast = learn(
        observe_rows(bench_row("ieee", 100.0), bench_row("tf32", 80.0), source="runs/p.jsonl"),
        entry_id="dot-input-precision",
        knowledge=knowledge,
    )
    assert fast.path == knowledge / "languages/triton/optimizations/dot-input-precision.md"


def test_built_in_entries_are_written_into_the_user_tree(tmp_path: Path) -> None:
    root = tmp_path / "knowledge"
    shipped = snapshot(BUILTIN_ROOT)
    outcome = learn(observed("splits16", "splits8"), entry_id="cuda-graphs", knowledge=root)
    assert outcome.path == root / "optimizations" / "cuda-graphs.md" and outcome.path.is_file()
    assert snapshot(BUILTIN_ROOT) == shipped
    assert outcome.row in [row for _, row in Catalog.load(root).get("cuda-graphs").evidence_rows]


def test_dry_run_writes_nothing(knowledge: Path) -> None:
    files = snapshot(knowledge)
    fast = learn(
        observed("splits16", "splits8"),
        entry_id="split-kv-flash-decoding",
        knowledge=knowledge,
        dry_run=True,
    )
    slow = learn(
        observed("splits8", "splits32"),
        entry_id="split-kv-flash-decoding",
        knowledge=knowledge,
        dry_run=True,
    )
    assert fast.action is Action.EVIDENCE and fast.summary().count("Would record") == 1
    assert slow.action is Action.NEW_ANTI_PATTERN and "Would create" in slow.summary()
    assert slow.path is not None and not slow.path.exists()
    assert snapshot(knowledge) == files


def test_refusals(knowledge: Path) -> None:
    with pytest.raises(InputError, match="built-in"):
        learn(observed("splits16", "splits8"), entry_id="cuda-graphs", knowledge=BUILTIN_ROOT)
    with pytest.raises(InputError, match="built-in"):
        learn(
            observed("splits16", "splits8"),
            entry_id="cuda-graphs",
            knowledge=BUILTIN_ROOT / "optimizations",
        )
    with pytest.raises(CatalogError, match="no-such-entry"):
        learn(observed("splits16", "splits8"), entry_id="no-such-entry", knowledge=knowledge)
    with pytest.raises(InputError, match="family"):
        learn(
            observed("splits16", "splits8"), entry_id="cuda-graphs", knowledge=knowledge, family="x"
        )
    with pytest.raises(InputError, match="language"):
        learn(
            observed("splits16", "splits8"),
            entry_id="cuda-graphs",
            knowledge=knowledge,
            language="fortran",
        )


def test_rows_and_entries_are_built_from_the_observation() -> None:
    seen = Observation(
        comparison=Comparison(
            verdict="SLOW", ratio=1.2, ratio_low=1.2, ratio_high=1.2, noise=0.0, threshold=0.01
        ),
        before=10.0,
        after=12.0,
        unit="ms",
        point="b=1 s=1 t=1",
        source="x.jsonl",
    )
    row = evidence_row(seen)
    assert (row.config, row.before, row.after, row.change) == (
        "b=1 s=1 t=1",
        "10 ms",
        "12 ms",
        "+20.0 % (SLOW)",
    )
    entry = derive_anti_pattern(Catalog.builtin().get("online-softmax"), seen, entry_id="my-trap")
    assert entry.id == "my-trap" and entry.name == "Regression from Online Softmax"
    assert "No roofline metrics were recorded" in entry.mechanism
    assert entry.evidence[0].source == "x.jsonl"


def test_long_times_are_written_out_not_in_exponent_form() -> None:
    # A 12 ms call measured in us: "1.235e+04 µs" is no way to write a table cell.
    seen = Observation(
        comparison=Comparison(
            verdict="FAST",
            ratio=0.829,
            ratio_low=0.829,
            ratio_high=0.829,
            noise=0.0,
            threshold=0.01,
        ),
        before=12345.6,
        after=10234.2,
        point="b=1 s=1 t=1",
        source="x.jsonl",
    )
    row = evidence_row(seen)
    assert (row.before, row.after, row.change) == ("12346 µs", "10234 µs", "-17.1 % (FAST)")
    assert evidence_row(attrs.evolve(seen, before=74.183, after=0.00012)).after == "0.00012 µs"


def test_host_clock_timings_are_not_recorded_unless_asked(knowledge: Path) -> None:
    # Two rows timed on the CPU (the interpreter): 50 us against 80 us says nothing about a
    # GPU, and evidence in the knowledge base reads as GPU measurements.
    seen = observe_rows(
        bench_row("splits8", 50.0, mode="cpu"),
        bench_row("splits16", 80.0, mode="cpu"),
        source="runs/cpu.jsonl",
    )
    assert seen.host_clock and seen.verdict is Verdict.SLOW
    before = snapshot(knowledge)
    with pytest.raises(InputError, match=r"Expected GPU timings \(CUDA events\)"):
        learn(seen, entry_id="split-kv-flash-decoding", knowledge=knowledge)
    assert snapshot(knowledge) == before
    # A dry run says what the real run would do: it refuses the same timings.
    with pytest.raises(InputError, match=r"Expected GPU timings \(CUDA events\)"):
        learn(seen, entry_id="split-kv-flash-decoding", knowledge=knowledge, dry_run=True)
    dry = learn(
        seen,
        entry_id="split-kv-flash-decoding",
        knowledge=knowledge,
        dry_run=True,
        allow_host_clock=True,
    )
    assert dry.action is Action.NEW_ANTI_PATTERN and snapshot(knowledge) == before
    done = learn(
        seen, entry_id="split-kv-flash-decoding", knowledge=knowledge, allow_host_clock=True
    )
    assert done.action is Action.NEW_ANTI_PATTERN and done.path is not None
    # Given the flag, the summary warns about the clock without asking for the flag.
    for outcome in (dry, done):
        summary = outcome.summary()
        assert "Timed with the host clock (CPU), as allowed" in summary
        assert "needs allow_host_clock" not in summary
    assert not observed("splits8", "splits16").host_clock  # CUDA-event rows
    # What row_from_measurement writes for a CPU timing: mode "cold", the host-clock backend.
    cold_cpu = observe_rows(
        bench_row("splits8", 50.0, backend="cpu-perf-counter"),
        bench_row("splits16", 80.0, backend="cpu-perf-counter"),
        source="runs/cpu.jsonl",
    )
    assert cold_cpu.host_clock
    with pytest.raises(InputError, match=r"Expected GPU timings \(CUDA events\)"):
        learn(cold_cpu, entry_id="split-kv-flash-decoding", knowledge=knowledge)


def test_rows_timed_different_ways_are_not_compared() -> None:
    # A cold time against a graph replay of the same kernel moves by the method alone.
    with pytest.raises(InputError, match="Expected rows timed the same way \\(same mode\\)"):
        observe_rows(
            bench_row("v1", 74.0, mode="cold"), bench_row("v1", 66.0, mode="graph"), source="x"
        )
    with pytest.raises(InputError, match="same cache"):
        observe_rows(
            bench_row("v1", 74.0, cache="flush"), bench_row("v2", 66.0, cache="none"), source="x"
        )


def test_the_seeds_language_name_is_the_catalogs(knowledge: Path) -> None:
    # The seed writes "cutile-dsl"; the catalog calls the same language "cutile".
    outcome = learn(
        observed("splits16", "splits8", samples=60),
        entry_id="split-kv-flash-decoding",
        knowledge=knowledge,
        kernel="mla_decode",
        language="cutile-dsl",
        dry_run=True,
    )
    assert outcome.row is not None and outcome.row.config.startswith("mla_decode (cutile) ")


_HAND_WRITTEN = """\
# Split Into Pieces

## When to Apply
- Decode with long caches
  and few sequences.

## Mechanism
Each piece streams part of the cache.<hard break>
A second paragraph, with `code` and a trailing tab.\t

## Affected Metrics
- SM occupancy

## Implementation
```python
# keep this comment
pieces = 4
```

## Performance Evidence
Source type: local experiment
Source: runs/old.jsonl

| Config | Before | After | Change |
|--------|--------|-------|--------|
| b=8 | 90 us | 60 us | -33 % |

Measured by hand; the clock was locked.

## Generalization
Split until the grid fills the GPU once.

## Pitfalls
- Too many pieces cost a merge.

## Interactions
Works with CUDA graphs.
"""


def test_learning_into_a_hand_written_entry_keeps_its_text(knowledge: Path) -> None:
    file = knowledge / "optimizations" / "split-into-pieces.md"
    # Two spaces: a markdown line break, kept; a tab after the last character, dropped.
    text = _HAND_WRITTEN.replace("<hard break>", "  ").replace("\n", "\r\n")
    file.write_text(text, encoding="utf-8")
    outcome = learn(
        observed("splits16", "splits8", samples=60),
        entry_id="split-into-pieces",
        knowledge=knowledge,
        kernel="mla_decode",
    )
    assert outcome.action is Action.EVIDENCE and outcome.path == file
    written = file.read_text(encoding="utf-8")
    for kept in (
        "- Decode with long caches and few sequences.",
        "Each piece streams part of the cache.  \nA second paragraph, with `code` and a "
        "trailing tab.\n",
        "```python\n# keep this comment\npieces = 4\n```",
        "| b=8 | 90 us | 60 us | -33 % |\n\nMeasured by hand; the clock was locked.",
        "Split until the grid fills the GPU once.",
        "- Too many pieces cost a merge.",
        "- Works with CUDA graphs.",
    ):
        assert kept in written
    entry = parse_entry(written)
    assert [b.source for b in entry.evidence] == [
        "runs/old.jsonl",
        "runs/splits16.jsonl vs runs/splits8.jsonl",
    ]


@pytest.mark.parametrize(("before", "after"), [("splits16", "splits8"), ("splits8", "splits32")])
def test_learning_the_same_measurement_twice_records_it_once(
    knowledge: Path, before: str, after: str
) -> None:
    # A re-run LEARN step (a script run again) once wrote the same row a second time: one
    # measurement then read as two.
    seen = observed(before, after)
    first = learn(seen, entry_id="split-kv-flash-decoding", knowledge=knowledge)
    assert first.path is not None
    written = first.path.read_bytes()
    again = learn(seen, entry_id="split-kv-flash-decoding", knowledge=knowledge)
    assert first.path.read_bytes() == written
    assert (again.action, again.entry_id, again.path) == (
        Action.EVIDENCE,
        first.entry_id,
        first.path,
    )
    assert "already recorded" in again.summary()
    dry = learn(seen, entry_id="split-kv-flash-decoding", knowledge=knowledge, dry_run=True)
    assert "already recorded" in dry.summary()


EXP_12 = Path(__file__).resolve().parents[2] / "docs/kernels/mla_decode/experiments/exp_12"


@pytest.mark.parametrize("point", ["b=32 s=1 t=4096 h=16", "b=128 s=1 t=~4096 h=16"])
def test_the_shipped_evidence_of_exp_12_is_the_row_learn_writes(point: str) -> None:
    observation = observe_files(
        EXP_12 / "seesaw_before.jsonl", EXP_12 / "seesaw_after.jsonl", point=point, mode="graph"
    )
    row = evidence_row(observation, kernel="mla_decode", language="triton")
    entry = Catalog.builtin().get("head-grouping-mma-tile")
    shipped = [r for block in entry.evidence for r in block.rows]
    assert row in shipped, (row, [r.config for r in shipped])


def test_a_derived_anti_pattern_keeps_the_applied_entrys_families() -> None:
    # A row softmax slowed by online-softmax (families: attention, softmax) was filed under
    # attention alone, "applied to a attention kernel", out of reach of a softmax query.
    seen = Observation(
        comparison=Comparison(
            verdict="SLOW", ratio=1.2, ratio_low=1.2, ratio_high=1.2, noise=0.0, threshold=0.01
        ),
        before=10.0,
        after=12.0,
        unit="ms",
        point="b=4 n=4096",
        source="x.jsonl",
    )
    applied = Catalog.builtin().get("online-softmax")
    assert applied.families == ("attention", "softmax")
    entry = derive_anti_pattern(applied, seen)
    assert entry.families == ("attention", "softmax")
    assert "applied to an attention or softmax kernel: slower" in entry.contexts[0]
    one = derive_anti_pattern(applied, seen, family="softmax")
    assert one.families == ("softmax",) and "applied to a softmax kernel" in one.contexts[0]
    general = derive_anti_pattern(Catalog.builtin().get("cuda-graphs"), seen)
    assert "applied to a kernel: slower" in general.contexts[0]


@pytest.mark.parametrize(("before", "after"), [("splits16", "splits8"), ("splits8", "splits32")])
def test_a_dry_run_refuses_a_folder_that_is_not_a_knowledge_tree(
    knowledge: Path, before: str, after: str
) -> None:
    # A project's own docs/knowledge/index.md page: the real run refuses to write there
    # (the tree's next index would replace it), and a dry run once said "Would record".
    (knowledge / "index.md").write_text("# Our knowledge pages\n", encoding="utf-8")
    files = snapshot(knowledge)
    seen = observed(before, after)
    for dry_run in (False, True):
        with pytest.raises(CatalogError, match="Expected a knowledge tree at"):
            learn(seen, entry_id="split-kv-flash-decoding", knowledge=knowledge, dry_run=dry_run)
    assert snapshot(knowledge) == files
    # Where the real run writes nothing (within noise), the dry run refuses nothing either.
    same = observe_rows(anchor_row("splits8"), bench_row("v2b", 66.6), source="runs/same.jsonl")
    for dry_run in (False, True):
        outcome = learn(
            same, entry_id="split-kv-flash-decoding", knowledge=knowledge, dry_run=dry_run
        )
        assert outcome.action is Action.NONE
    assert snapshot(knowledge) == files


def test_host_clock_rows_that_name_no_device_are_recorded_as_cpu(knowledge: Path) -> None:
    # Rows written by hand for an interpreter run: mode "cpu", no gpu field.
    seen = observe_rows(
        bench_row("splits16", 80.0, mode="cpu", gpu=""),
        bench_row("splits8", 50.0, mode="cpu", gpu=""),
        source="runs/cpu.jsonl",
    )
    assert seen.host_clock and seen.gpu == "cpu"
    outcome = learn(
        seen, entry_id="split-kv-flash-decoding", knowledge=knowledge, allow_host_clock=True
    )
    assert outcome.row is not None and outcome.row.config.endswith(", cpu, 2026-12-02")
    assert outcome.to_dict()["gpu"] == "cpu" and " on cpu: " in outcome.summary()
    # A row that names its device keeps it; GPU rows naming none stay unnamed.
    named = observe_rows(
        bench_row("splits16", 80.0, mode="cpu", gpu="Intel Xeon"),
        bench_row("splits8", 50.0, mode="cpu", gpu=""),
        source="runs/cpu.jsonl",
    )
    assert named.gpu == "Intel Xeon"
    unnamed = observe_rows(
        anchor_row("splits16", gpu=""), anchor_row("splits8", gpu=""), source="x"
    )
    assert not unnamed.host_clock and unnamed.gpu == ""


def test_a_folder_given_for_a_rows_file_is_named_as_one(tmp_path: Path) -> None:
    rows = write_rows(tmp_path / "v1.jsonl", anchor_row("splits16"))
    with pytest.raises(InputError, match=f"got a directory at {re.escape(str(tmp_path))}$"):
        observe_files(tmp_path, rows)
    with pytest.raises(InputError, match=r"got no file at .*missing\.jsonl$"):
        observe_files(rows, tmp_path / "missing.jsonl")

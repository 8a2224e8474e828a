"""The one markdown template: lossless round-trips and located errors for malformed files."""

from __future__ import annotations

from pathlib import Path

import attrs
import pytest
from hypothesis import HealthCheck, given, settings

from kernelopt import FormatError, InputError
from kernelopt.catalog import (
    BUILTIN_ROOT,
    SECTIONS,
    Entry,
    parse_entry,
    parse_entry_with_warnings,
    render_entry,
)
from kernelopt.catalog.layout import iter_markdown
from kernelopt.catalog.markdown import find_placeholders

from .conftest import make_entry
from .strategies import entries

BUILTIN_FILES = [p for p in iter_markdown(BUILTIN_ROOT) if p.name != "index.md"]


@pytest.mark.parametrize("path", BUILTIN_FILES, ids=lambda p: p.stem)
def test_every_builtin_file_round_trips_byte_for_byte(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert render_entry(parse_entry(text, path=path)) == text


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(entries())
def test_generated_entries_round_trip(entry: Entry) -> None:
    text = render_entry(entry)
    parsed = parse_entry(text)
    assert parsed == entry
    assert render_entry(parsed) == text


def test_layout_has_metadata_under_title_and_sections_in_template_order(entry: Entry) -> None:
    text = render_entry(entry)
    lines = text.split("\n")
    assert lines[0] == "# Demo Trick"
    assert lines[2:8] == [
        "- id: demo-trick",
        "- kind: optimization",
        "- scope: shared",
        "- families: decode-attention",
        "- fundamental_for: none",
        "- keywords: demo trick, demo_knob",
    ]
    headings = [line[3:] for line in lines if line.startswith("## ")]
    assert headings == list(SECTIONS)
    assert "- Metric: `dram_pct > 60` — bandwidth-bound" in lines
    assert "- Shape: `s_q == 1`" in lines
    assert "- `cuda-graphs` (complements): Both help." in lines
    assert "| Config | Before | After | Change |" in lines
    evidence = (
        "## Performance Evidence\nSource type: local experiment\n"
        "Source: experiments/exp_1/result.md\n\n| Config | Before | After | Change |\n"
        "|--------|--------|-------|--------|\n| b=32 s=1 | 10 us | 8 us | -20 % |\n\n"
        "## Generalization\n"
    )
    assert evidence in text
    assert text.endswith("## Interactions\n- `cuda-graphs` (complements): Both help.\n")


def test_reader_tolerates_hand_written_variations(entry: Entry) -> None:
    text = render_entry(entry)
    loose = (
        text.replace(
            "- Decode attention with long KV caches.", "- Decode attention with long\n  KV caches."
        )
        .replace("— bandwidth-bound", "- bandwidth-bound")
        .replace("\n- It can fail.", "\n\n- It can fail.")
        .replace("\n", "\r\n")
    )
    assert parse_entry(loose) == entry


@pytest.mark.parametrize("spelling", ["(Complements)", "(COMPLEMENTS)", "( complements )"])
def test_a_known_relation_is_read_in_any_case_and_spacing(entry: Entry, spelling: str) -> None:
    # A hand edit that capitalized the relation turned the link into a free-text note: the
    # entry no longer linked cuda-graphs, and the note moved below the links when written.
    text = render_entry(entry).replace("(complements)", spelling)
    entry_read, warnings = parse_entry_with_warnings(text)
    assert entry_read == entry and warnings == ()
    # An unknown word stays free text in any spelling but the template's, refused as before.
    note = render_entry(entry).replace("(complements)", "(Optional)")
    assert parse_entry(note).interaction_notes == ("`cuda-graphs` (Optional): Both help.",)
    with pytest.raises(FormatError, match="Expected a relation in requires"):
        parse_entry(render_entry(entry).replace("(complements)", "(optional)"))
    # So a note that would be read back as a link is refused as a note.
    with pytest.raises(InputError, match="free text that is not a link"):
        make_entry(interaction_notes=(f"`cuda-graphs` {spelling}: Both help.",))


@pytest.mark.parametrize(("metric", "shape"), [("metric:", "shape:"), ("METRIC :", "Shape :")])
def test_a_condition_tag_is_read_in_any_case(entry: Entry, metric: str, shape: str) -> None:
    # "- metric: `dram_pct > 60`" was kept as a context: no query matched it, and being
    # canonical text already, lint said nothing.
    text = render_entry(entry).replace("- Metric:", f"- {metric}").replace("- Shape:", f"- {shape}")
    assert parse_entry(text) == entry
    with pytest.raises(FormatError, match="Expected 'Metric: `name op value` — note'"):
        parse_entry(render_entry(entry).replace("- Metric: `", "- metric: no backticks `"))
    with pytest.raises(InputError, match="a context not starting 'Metric:' or 'Shape:'"):
        make_entry(contexts=(f"{metric} `dram_pct > 60`",))


def test_no_interactions_is_written_and_read_as_none_recorded(entry: Entry) -> None:
    bare = make_entry(interactions=())
    text = render_entry(bare)
    assert "## Interactions\nNone recorded.\n" in text
    assert parse_entry(text) == bare


def _break(text: str, old: str, new: str) -> str:
    assert old in text, old
    return text.replace(old, new, 1)


def _line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.split("\n"), 1) if needle in line)


@pytest.mark.parametrize(
    ("old", "new", "section", "message", "needle"),
    [
        ("## Mechanism", "## Mechanics", "Mechanics", "Expected a section in", "## Mechanics"),
        (
            "## Pitfalls\n- It can fail.\n\n",
            "",
            "Pitfalls",
            "Expected a '## Pitfalls' section",
            None,
        ),
        (
            "- Metric: `dram_pct > 60`",
            "- Metric: `dram_pct >> 60`",
            "When to Apply",
            "Expected a comparison",
            "dram_pct >> 60",
        ),
        (
            "| Config | Before | After | Change |",
            "| Config | Before | After |",
            "Performance Evidence",
            "4 cells",
            "| Config | Before | After |",
        ),
        (
            "| b=32 s=1 | 10 us | 8 us | -20 % |",
            "| b=32 s=1 | 10 us | 8 us |",
            "Performance Evidence",
            "4 cells",
            "| b=32 s=1 | 10 us | 8 us |",
        ),
        (
            "Source type: local experiment",
            "Source type: hunch",
            "Performance Evidence",
            "Source type: local experiment",
            "Source type: hunch",
        ),
        ("- It can fail.", "It can fail.", "Pitfalls", "Expected a bullet", "It can fail."),
        (
            "- `cuda-graphs` (complements)",
            "- `cuda-graphs` (friends)",
            "Interactions",
            "Expected a relation in",
            "(friends)",
        ),
        (
            "- kind: optimization",
            "- kind: trick",
            "metadata",
            "kind 'optimization' or 'anti-pattern'",
            "- kind: trick",
        ),
        ("- id: demo-trick", "- id: Demo_Trick", "metadata", "kebab-case", "- id: Demo_Trick"),
        ("- scope: shared", "- scope: rust", "metadata", "Expected a scope in", "- scope: rust"),
        (
            "- keywords: demo trick, demo_knob",
            "- keywords: Demo Trick",
            "metadata",
            "lower-case keywords",
            "- keywords: Demo Trick",
        ),
        (
            "- scope: shared",
            "- scope: shared\n- colour: blue",
            "metadata",
            "Expected a metadata key",
            "- colour: blue",
        ),
        ("- id: demo-trick\n", "", "metadata", "- id: ...", "- keywords"),
        ("# Demo Trick", "Demo Trick", "title", "Expected a title line", "Demo Trick"),
        (
            "```python\nx = 1\n```",
            "x = 1",
            "Implementation",
            "fenced code block",
            "## Implementation",
        ),
        (
            "It works because of reasons.",
            "### It works",
            "Mechanism",
            "section heading",
            "### It works",
        ),
        (
            "It works because of reasons.",
            "<FILL: why it works>",
            "Mechanism",
            "placeholder filled in",
            "<FILL",
        ),
    ],
)
def test_malformed_files_raise_format_error_with_file_line_section(
    entry: Entry, old: str, new: str, section: str, message: str, needle: str | None
) -> None:
    broken = _break(render_entry(entry), old, new)
    with pytest.raises(FormatError) as raised:
        parse_entry(broken, path="knowledge/optimizations/demo-trick.md")
    error = raised.value
    assert error.path == "knowledge/optimizations/demo-trick.md"
    assert error.section == section
    assert message in str(error)
    assert error.line is not None
    if needle is not None:
        assert error.line == _line_of(broken, needle)
    assert str(error).startswith(
        f"knowledge/optimizations/demo-trick.md:{error.line} [{section}]: "
    )


def test_sections_out_of_order_and_repeated(entry: Entry) -> None:
    text = render_entry(entry)
    start, end = text.index("## Affected Metrics"), text.index("## Implementation")
    moved = text[:start] + text[end:].replace("## Pitfalls", text[start:end] + "## Pitfalls", 1)
    with pytest.raises(FormatError, match="template order"):
        parse_entry(moved)
    repeated = text + "\n## Pitfalls\n- Again.\n"
    with pytest.raises(FormatError, match="one '## Pitfalls' section"):
        parse_entry(repeated)


def test_empty_file_and_empty_section_are_format_errors(entry: Entry) -> None:
    with pytest.raises(FormatError, match="an empty file"):
        parse_entry("\n\n", path="x.md")
    empty_mechanism = _break(render_entry(entry), "It works because of reasons.\n", "")
    with pytest.raises(FormatError, match="empty section") as raised:
        parse_entry(empty_mechanism)
    assert raised.value.section == "Mechanism"


def test_heading_inside_code_block_is_not_a_section() -> None:
    entry = make_entry(implementation="```python\n## not a section\n# comment\n```")
    assert parse_entry(render_entry(entry)) == entry


def test_find_placeholders_lists_every_one_with_line_and_section() -> None:
    text = "# <FILL: name>\n\n- id: x\n\n## Mechanism\n<FILL: a> and <FILL: b>\n"
    assert find_placeholders(text) == [
        (1, "title", "<FILL: name>"),
        (6, "Mechanism", "<FILL: a>"),
        (6, "Mechanism", "<FILL: b>"),
    ]


def test_byte_order_mark_is_ignored(entry: Entry) -> None:
    assert parse_entry("\ufeff" + render_entry(entry)) == entry


@pytest.mark.parametrize("blank", ["  ", "\t", " \t "])
def test_trailing_blanks_after_a_section_text_are_not_part_of_it(blank: str) -> None:
    # An editor shows nothing at the end of a paragraph's last line; a file saved with
    # blanks there still reads, as the entry without them.
    noted = make_entry(evidence=(attrs.evolve(make_entry().evidence[0], notes="Measured twice."),))
    text = render_entry(noted)
    loose = (
        text.replace("because of reasons.\n", f"because of reasons.{blank}\n")
        .replace("x = 1\n```\n", f"x = 1\n```{blank}\n")
        .replace("Measured twice.\n", f"Measured twice.{blank}\n")
        .replace("when it applies.\n", f"when it applies.{blank}\n")
    )
    assert loose.count(blank) >= 4
    assert parse_entry(loose) == noted
    assert render_entry(parse_entry(loose)) == text


def test_old_mac_line_endings_read_like_newlines(entry: Entry) -> None:
    text = render_entry(entry)
    assert parse_entry(text.replace("\n", "\r")) == entry
    assert parse_entry(text.replace("\n", "\r\n")) == entry

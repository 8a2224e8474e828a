"""Designer → Orchestrator hand-off: exact text, round trips, checks."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from kernelopt import CatalogError, FormatError, InputError
from kernelopt.bench import TrialPoint
from kernelopt.catalog import Catalog
from kernelopt.experiments import Correctness
from kernelopt.workflow import (
    Change,
    NewVersion,
    OptimizationTask,
    TrialCheck,
    parse_handoff,
    parse_version,
)

from .strategies import new_versions

CATALOG = Catalog.builtin()
VERSION = NewVersion(
    kernel="mla_decode",
    version="v3",
    changes=[
        Change.of(CATALOG.get("split-kv-flash-decoding"), "split the KV axis into 8 chunks"),
        Change(what="combine kernel reads fp32 partials"),
    ],
    created=["kernels/mla_decode_v3.py"],
    modified=["kernels/__init__.py", "tests/test_mla.py"],
    correctness="PASS",
    correctness_detail="rel err 1.8e-3 against the float64 reference",
    trials=[
        TrialCheck(
            point=TrialPoint(name="decode", b=32, s=1, t=4096, extra={"h": 16}),
            why="decode-like: one query token, memory-bound",
        ),
        TrialCheck(point=TrialPoint(b=32, s=16, t=4096), why="speculative decoding"),
    ],
    devlog="docs/kernels/mla_decode.md",
)

TEXT = """## New Version: mla_decode v3
### Changes Applied:
- [split-kv-flash-decoding](docs/knowledge/optimizations/split-kv-flash-decoding.md) -- split the KV axis into 8 chunks
- combine kernel reads fp32 partials
### Files:
- Created: kernels/mla_decode_v3.py
- Modified: kernels/__init__.py
- Modified: tests/test_mla.py
### Correctness: PASS -- rel err 1.8e-3 against the float64 reference

### Trial Configurations Checked
1. decode [b=32, s=1, t=4096, h=16] -- decode-like: one query token, memory-bound
2. [b=32, s=16, t=4096] -- speculative decoding

### Devlog Entry Written: docs/kernels/mla_decode.md
"""  # noqa: E501


def test_render_is_the_contract_text() -> None:
    assert VERSION.render() == TEXT


def test_round_trip() -> None:
    assert parse_version(TEXT) == VERSION
    assert VERSION.entry_ids == ("split-kv-flash-decoding",)


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow])
@given(new_versions)
def test_round_trip_property(version: NewVersion) -> None:
    assert parse_version(version.render()) == version


def test_the_contracts_own_shapes_read() -> None:
    text = """Done. Summary:

## New Version: mla_decode v4
### Changes Applied: exp2 with the scale folded in; persistent buffers
### Files: Created kernels/v4.py, kernels/v4_combine.py
### Correctness: **FAIL** (LSE off by ln 2)

### Trial Configurations Checked
1. [32, 1, 4096] -- decode point

### Devlog Entry Written: `docs/kernels/mla_decode.md`
"""
    version = parse_version(text)
    assert [c.what for c in version.changes] == [
        "exp2 with the scale folded in",
        "persistent buffers",
    ]
    assert version.created == ("kernels/v4.py", "kernels/v4_combine.py")
    assert version.correctness.value == "FAIL"
    assert version.correctness_detail == "(LSE off by ln 2)"
    assert version.trials[0].point == TrialPoint(b=32, s=1, t=4096)
    assert version.devlog == "docs/kernels/mla_decode.md"


def test_the_contracts_bracketed_list_reads() -> None:
    # "### Changes Applied: [list]", the placeholder filled in place.
    text = TEXT.split("### Changes Applied:")[0] + (
        "### Changes Applied: [exp2 with the scale folded in; persistent buffers]\n### Files:"
        + TEXT.split("### Files:", 1)[1]
    )
    assert [c.what for c in parse_version(text).changes] == [
        "exp2 with the scale folded in",
        "persistent buffers",
    ]


@pytest.mark.parametrize(
    ("files", "created", "modified"),
    [
        # The contract's own placeholder: new or changed, so modified.
        ("Created/Modified k/v3.py", (), ("k/v3.py",)),
        ("Created a.py, Modified b.py", ("a.py",), ("b.py",)),
        ("Created: a, Modified: b; c", ("a",), ("b", "c")),
        ("Created: a.py, b.py", ("a.py", "b.py"), ()),
        # "Created/Modified [paths]", the placeholder filled in place: no path keeps a bracket.
        ("Created/Modified [k/v3.py, k/__init__.py]", (), ("k/v3.py", "k/__init__.py")),
        ("Created [a.py]; Modified [b.py, c.py]", ("a.py",), ("b.py", "c.py")),
        ("Created: app/[id]/page.py", ("app/[id]/page.py",), ()),
    ],
)
def test_every_label_on_a_files_line_counts(files: str, created, modified) -> None:
    text = TEXT.replace("### Files:\n", f"### Files: {files}\n").replace(
        "- Created: kernels/mla_decode_v3.py\n- Modified: kernels/__init__.py\n"
        "- Modified: tests/test_mla.py\n",
        "",
    )
    version = parse_version(text)
    assert (version.created, version.modified) == (created, modified)


def test_problems_and_validate(tmp_path: Path) -> None:
    assert VERSION.problems(CATALOG) == []
    (tmp_path / "kernels").mkdir()
    (tmp_path / "kernels" / "mla_decode_v3.py").write_text("")
    found = VERSION.problems(CATALOG, root=tmp_path)
    assert found == [
        "modified file kernels/__init__.py does not exist",
        "modified file tests/test_mla.py does not exist",
        "devlog docs/kernels/mla_decode.md does not exist",
    ]
    failing = NewVersion(
        kernel="k",
        version="v2",
        changes=[
            Change(what="x", entry_id="made-up", link="docs/knowledge/optimizations/made-up.md")
        ],
        correctness="FAIL",
    )
    assert failing.problems(CATALOG) == [
        "unknown entry id 'made-up'",
        "correctness is FAIL, not PASS",
        "no trial configuration checked",
    ]
    with pytest.raises(CatalogError, match="made-up"):
        failing.validate(CATALOG)
    assert parse_version(failing.render()) == failing


@pytest.mark.parametrize(
    ("drop", "section"),
    [
        ("### Files:\n", "Files"),
        ("### Correctness: PASS -- rel err 1.8e-3 against the float64 reference\n", "Correctness"),
        ("### Trial Configurations Checked\n", "Trial Configurations Checked"),
        ("### Devlog Entry Written: docs/kernels/mla_decode.md\n", "Devlog Entry Written"),
    ],
)
def test_missing_sections_are_named(drop: str, section: str) -> None:
    with pytest.raises(FormatError) as caught:
        parse_version(TEXT.replace(drop, ""), path="v3.md")
    assert caught.value.section == section
    assert caught.value.path == "v3.md" and caught.value.line is not None


def test_unreadable_items_name_their_line() -> None:
    with pytest.raises(FormatError) as caught:
        parse_version(TEXT.replace("1. decode [b=32, s=1, t=4096, h=16]", "1. decode point"))
    assert caught.value.line == 12 and caught.value.section == "Trial Configurations Checked"
    with pytest.raises(FormatError, match="why"):
        parse_version(TEXT.replace(" -- speculative decoding", ""))
    with pytest.raises(FormatError, match="PASS"):
        parse_version(TEXT.replace("### Correctness: PASS", "### Correctness: maybe"))
    with pytest.raises(FormatError, match="Created"):
        parse_version(TEXT.replace("- Created: kernels", "- Wrote: kernels"))


def test_parse_handoff_dispatches() -> None:
    task = OptimizationTask(
        kernel="k", current="a", new_version="b", bottleneck="x", optimizations=[Change(what="y")]
    )
    assert parse_handoff("hello\n" + task.render()) == task
    assert parse_handoff(TEXT) == VERSION
    with pytest.raises(FormatError, match="New Version"):
        parse_handoff("## Something else\n")


def test_heading_text_ending_in_a_hash_is_refused() -> None:
    # "### Correctness: PASS see issue #" reads back without its '#' (markdown drops a
    # heading's closing #s), so the record refuses what it could not give back.
    from kernelopt import InputError
    from kernelopt.workflow import Change, NewVersion

    change = Change(what="tiles of 64")
    with pytest.raises(InputError, match="correctness_detail: Expected text not ending in '#'"):
        NewVersion(kernel="k", version="v2", changes=[change], correctness_detail="see issue #")


def test_the_contracts_placeholders_filled_in_place_read() -> None:
    # "### Correctness: [PASS/FAIL]" and "### Devlog Entry Written: [path]", filled in place.
    text = TEXT.replace("### Correctness: PASS", "### Correctness: [PASS]").replace(
        "### Devlog Entry Written: docs/kernels/mla_decode.md",
        "### Devlog Entry Written: [docs/kernels/mla_decode.md]",
    )
    assert parse_version(text) == parse_version(TEXT)
    verdict = re.compile(r"^### Correctness: .*$", re.M)
    failed = parse_version(verdict.sub("### Correctness: [FAIL] -- NaN at s=16", text))
    assert (failed.correctness, failed.correctness_detail) == (Correctness.FAIL, "NaN at s=16")
    for unfilled in ("[PASS/FAIL]", "PASS/FAIL", "PASS / FAIL -- 3 of 4 points"):
        with pytest.raises(FormatError, match="Correctness"):
            parse_version(verdict.sub(f"### Correctness: {unfilled}", text))


@pytest.mark.parametrize("field", ["created", "modified", "devlog"])
@pytest.mark.parametrize("path", ["[a.py]", "[a.py", "a.py]"])
def test_a_path_in_the_templates_brackets_is_refused(field: str, path: str) -> None:
    # It would read back without them.
    value = path if field == "devlog" else [path]
    with pytest.raises(InputError, match="bracket"):
        NewVersion(kernel="k", version="v", changes=[Change(what="x")], **{field: value})


def test_trial_configurations_written_as_bullets_read() -> None:
    # "- [32, 1, 4096] -- why" was skipped as prose: the version read as checking no point.
    text = TEXT.replace("1. decode [", "- decode [").replace("2. [b=32, s=16", "* [b=32, s=16")
    assert text != TEXT
    assert parse_version(text).trials == parse_version(TEXT).trials
    with pytest.raises(FormatError, match="Trial Configurations Checked"):
        parse_version(text.replace("- decode [b=32, s=1, t=4096, h=16]", "- decode [b=32, s=x]"))


def test_details_nested_under_a_numbered_trial_are_prose() -> None:
    text = TEXT.replace(
        "memory-bound\n", "memory-bound\n   - 47.08 us against 48.98 us\n   - graph replay\n"
    )
    assert text != TEXT
    assert parse_version(text).trials == parse_version(TEXT).trials


def test_an_unreadable_trial_point_says_expected_once() -> None:
    # The point's own message was nested: "Expected a trial point, got Expected a ...".
    text = TEXT.replace("[b=32, s=16, t=4096]", "[b=4, n=4096, b=2]")
    with pytest.raises(FormatError) as caught:
        parse_version(text)
    assert str(caught.value).count("Expected") == 1
    assert "got 'b=4, n=4096, b=2' (b twice)" in str(caught.value)
    assert caught.value.line == 13 and caught.value.section == "Trial Configurations Checked"

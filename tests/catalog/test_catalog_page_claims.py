"""What docs/catalog.md promises a user, checked as a user meets it.

A kind in any case for ``new_entry_file``, lint's canonical-form warning quoting the
departing line, search reasons a searched plan does not bury, the page's JSON form of a
condition, and updates from two processes at once beside a malformed entry file.
"""

from __future__ import annotations

import json
import multiprocessing
import re
from pathlib import Path

import pytest

from kernelopt._errors import CatalogError, InputError
from kernelopt.catalog import (
    Catalog,
    EvidenceRow,
    KnowledgeTree,
    entry_from_dict,
    entry_to_dict,
    lint_tree,
    new_entry_file,
    parse_entry,
    render_entry,
)

from .conftest import make_entry, write_entry

DOC = Path(__file__).resolve().parents[2] / "docs" / "catalog.md"


# --- new_entry_file reads a kind in any case, as the page says -------------------------------


def test_new_entry_file_reads_a_kind_in_any_case(tmp_path: Path) -> None:
    # Kind("Anti-Pattern") was called on the raw argument after the root and its lock
    # were made: an InputError, though scaffold_entry and --kind read it.
    root = tmp_path / "kb"
    path = new_entry_file(root, "Split Cache Thrash", kind="Anti-Pattern", language="Triton")
    assert path == root / "languages" / "triton" / "anti-patterns" / "split-cache-thrash.md"
    assert "- kind: anti-pattern\n- scope: triton\n" in path.read_text(encoding="utf-8")


# --- lint's canonical-form warning shows what departs ----------------------------------------


def _canonical_warning(root: Path) -> str:
    found = [p for p in lint_tree(root) if "canonical form" in p.message]
    assert len(found) == 1, found
    return str(found[0])


@pytest.fixture
def entry_file(tmp_path: Path) -> Path:
    return write_entry(tmp_path / "kb", make_entry(interactions=()))


def test_a_hand_written_line_is_quoted_beside_the_canonical_one(entry_file: Path) -> None:
    # The warning said only "got a difference at line 3": nothing to act on without
    # diffing the file against `kernelopt catalog show`.
    text = entry_file.read_text(encoding="utf-8")
    entry_file.write_text(text.replace("- kind: ", "-\tkind: ", 1), encoding="utf-8")
    warning = _canonical_warning(entry_file.parents[1])
    assert warning.endswith(
        ":4: warning: Expected the canonical form kernelopt writes (update operations will "
        "rewrite it), got '-\\tkind: optimization' at line 4, where kernelopt writes "
        "'- kind: optimization'"
    )


def test_trailing_blanks_are_shown_in_the_quoted_line(entry_file: Path) -> None:
    text = entry_file.read_text(encoding="utf-8")
    entry_file.write_text(text.replace("- It can fail.", "- It can fail.  "), encoding="utf-8")
    line = text.split("\n").index("- It can fail.") + 1
    assert _canonical_warning(entry_file.parents[1]).endswith(
        f"got '- It can fail.  ' at line {line}, where kernelopt writes '- It can fail.'"
    )


def test_a_missing_final_newline_is_named(entry_file: Path) -> None:
    text = entry_file.read_text(encoding="utf-8")
    entry_file.write_text(text.rstrip("\n"), encoding="utf-8")
    last = len(text.split("\n")) - 1
    assert _canonical_warning(entry_file.parents[1]).endswith(
        f":{last}: warning: Expected the canonical form kernelopt writes (update operations "
        f"will rewrite it), got no newline at the end of line {last}, the file's last"
    )


def test_blank_lines_after_the_end_are_counted(entry_file: Path) -> None:
    text = entry_file.read_text(encoding="utf-8")
    entry_file.write_text(text + "\n\n", encoding="utf-8")
    first_extra = len(text.split("\n"))
    assert _canonical_warning(entry_file.parents[1]).endswith(
        f"got 2 blank lines more at the end of the file, from line {first_extra}"
    )


def test_text_after_the_last_line_is_quoted(entry_file: Path) -> None:
    text = entry_file.read_text(encoding="utf-8")
    entry_file.write_text(text + " \t", encoding="utf-8")
    line = len(text.split("\n"))
    assert _canonical_warning(entry_file.parents[1]).endswith(
        f"got ' \\t' at line {line}, after the last line kernelopt writes"
    )


def test_a_long_departing_line_is_quoted_by_its_start(entry_file: Path) -> None:
    text = entry_file.read_text(encoding="utf-8")
    entry_file.write_text(
        text.replace("- It can fail.", "-  It can fail." + " and fail" * 500), encoding="utf-8"
    )
    warning = _canonical_warning(entry_file.parents[1])
    assert "got '-  It can fail. and fail" in warning and len(warning) < 400


# --- a searched plan does not bury the reason ------------------------------------------------


def test_a_reason_names_the_strongest_words_first_and_counts_the_rest() -> None:
    # A searched plan shares dozens of common words with an entry: the reason listed each
    # one, sorted by spelling, so the words in the entry's name came wherever they fell.
    filler = [f"word{letter}" for letter in "abcdefghijkl"]
    catalog = Catalog(
        [
            make_entry(
                id="zebra-swizzle",
                name="Zebra Swizzle",
                keywords=("zebra swizzle",),
                mechanism=" ".join(filler),
                interactions=(),
            )
        ]
    )
    (match,) = catalog.search(" ".join(["swizzle", "zebra", *filler]))
    (mentions,) = [r for r in match.reasons if r.startswith("mentions ")]
    assert mentions == (
        "mentions swizzle (in its name or keywords; 3 times in all), "
        "zebra (in its name or keywords; 3 times in all), "
        + ", ".join(f"{w} (in its text only; 1 time in all)" for w in filler[:6])
        + ", and 6 more words"
    )


# --- the page's JSON form of a condition -----------------------------------------------------


def test_the_condition_json_the_page_shows_is_read() -> None:
    # The page showed a comparison ({"name", "op", "value", "other"}) as a condition,
    # which entry_from_dict refuses: "Extra fields in constructor for Condition".
    page = DOC.read_text(encoding="utf-8")
    section = page[page.index("## JSON") :]
    shown = re.search(r'`(\{"comparisons".*?\})`', section, re.S)
    assert shown is not None, "the page shows no condition object"
    condition = json.loads(shown.group(1))
    data = entry_to_dict(make_entry())
    data["triggers"] = [condition]
    entry = entry_from_dict(data)
    assert [str(c) for c in entry.triggers] == ["dram_pct > 60"]
    assert entry.triggers[0].note == condition["note"]


# --- updates from two processes at once, beside a malformed entry file -----------------------


def _record(root: str, writer: int, rows: int) -> None:
    tree = KnowledgeTree(root)
    for row in range(rows):
        tree.record_evidence(
            "demo-trick",
            EvidenceRow(
                config=f"writer {writer} row {row}", before="1 us", after="2 us", change="+100 %"
            ),
            source_type="local experiment",
            source=f"experiments/exp_{writer}/result.md",
        )


def _flip(root: str) -> None:
    KnowledgeTree(root).flip(
        "demo-trick", reason="Regressed in both writers' runs.", to="anti-pattern"
    )


def test_two_processes_update_beside_a_malformed_file_and_lose_nothing(tmp_path: Path) -> None:
    root = tmp_path / "kb"
    write_entry(root, make_entry())
    broken = root / "optimizations" / "half-written.md"
    broken.write_text("# Half Written\n\nnothing yet\n", encoding="utf-8")
    KnowledgeTree(root).write_index()
    context = multiprocessing.get_context("spawn")
    writers = [context.Process(target=_record, args=(str(root), writer, 6)) for writer in (1, 2)]
    writers.append(context.Process(target=_flip, args=(str(root),)))
    for process in writers:
        process.start()
    for process in writers:
        process.join(120)
    assert [p.exitcode for p in writers] == [0, 0, 0]

    catalog = Catalog.load(root, strict=False)
    entry = catalog.get("demo-trick")
    recorded = {r.config for block in entry.evidence for r in block.rows}
    assert {f"writer {w} row {r}" for w in (1, 2) for r in range(6)} <= recorded
    assert entry.kind.value == "anti-pattern"
    assert not (root / "optimizations" / "demo-trick.md").exists()
    # The malformed file is left as it was, reported, and kept out of the index.
    assert broken.read_text(encoding="utf-8") == "# Half Written\n\nnothing yet\n"
    assert [Path(p.path).name for p in catalog.problems if p.is_error] == ["half-written.md"]
    index = (root / "index.md").read_text(encoding="utf-8")
    assert "anti-patterns/demo-trick.md" in index and "half-written" not in index
    # What was written reads back to the same entry, byte for byte.
    written = (root / "anti-patterns" / "demo-trick.md").read_text(encoding="utf-8")
    assert render_entry(parse_entry(written)) == written


# --- an unknown id names only where it was looked for ---------------------------------------


def test_a_tree_without_the_builtins_does_not_say_it_searched_them(tmp_path: Path) -> None:
    # The error said "present in <root> or the built-ins" though with_builtin=False never
    # looks there: a built-in id then read as missing from the built-ins too.
    tree = KnowledgeTree(tmp_path / "kb", with_builtin=False)
    with pytest.raises(CatalogError) as raised:
        tree.flip("online-softmax", reason="Regressed.")
    assert str(raised.value) == (
        f"Expected an entry id present in {tmp_path / 'kb'}, got 'online-softmax', a built-in "
        "id (with_builtin=False)"
    )
    with pytest.raises(CatalogError) as raised:
        tree.flip("no-such-trick", reason="Regressed.")
    assert str(raised.value) == (
        f"Expected an entry id present in {tmp_path / 'kb'}, got 'no-such-trick'"
    )
    with pytest.raises(CatalogError, match=r"or the built-ins, got 'no-such-trick'$"):
        KnowledgeTree(tmp_path / "kb").flip("no-such-trick", reason="Regressed.")


# --- JSON that is not the shape of an entry says so in its words ----------------------------


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        # A condition written as the markdown says it, not as the JSON form.
        (
            "triggers",
            ["dram_pct > 60"],
            "triggers[0]: Expected a JSON object of Condition fields, got 'dram_pct > 60'",
        ),
        ("interactions", [None], "interactions[0]: Expected a JSON object of Interaction fields"),
        # One condition where the list goes: read a character at a time, it was twelve
        # errors of "'str' object has no attribute 'keys'".
        (
            "triggers",
            "dram_pct > 60",
            "got triggers: Expected a list of Condition objects, got 'dram_pct > 60'",
        ),
        ("evidence", {"source": "x"}, "evidence: Expected a list of Evidence objects, got {"),
        ("shape_conditions", 5, "shape_conditions: Expected a list of Condition objects, got 5"),
    ],
)
def test_json_of_the_wrong_shape_names_what_was_expected(
    key: str, value: object, message: str
) -> None:
    data = entry_to_dict(make_entry())
    data[key] = value
    with pytest.raises(InputError) as raised:
        entry_from_dict(data)
    assert message in str(raised.value)
    assert "has no attribute" not in str(raised.value)
    assert str(raised.value).count("Expected") == 2


def test_a_row_written_as_a_table_line_is_named_at_its_place() -> None:
    data = entry_to_dict(make_entry())
    data["evidence"][0]["rows"] = ["| b=1 | 1 us | 2 us | +100 % |"]
    with pytest.raises(InputError, match=r"evidence\[0\]\.rows\[0\]: Expected a JSON object of "):
        entry_from_dict(data)

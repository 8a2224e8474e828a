"""LEARN: citations in one spelling, dry runs on trees that cannot be written, and entry
files that keep their line ends and byte-order mark."""

from __future__ import annotations

import os
import re
import shutil
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from kernelopt import CatalogError, InputError
from kernelopt.catalog import BUILTIN_ROOT, parse_entry, render_entry
from kernelopt.cli import main
from kernelopt.workflow import Action, learn, observe_files, observe_rows

from .conftest import anchor_row, snapshot, write_rows

ENTRY = "split-kv-flash-decoding"
ENTRY_FILE = Path("optimizations") / f"{ENTRY}.md"


@pytest.fixture
def runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project folder, made the working directory, with a FAST pair under ``runs/``."""
    monkeypatch.chdir(tmp_path)
    write_rows(tmp_path / "runs" / "v1.jsonl", anchor_row("splits16", samples=40, seed=1))
    write_rows(tmp_path / "runs" / "v2.jsonl", anchor_row("splits8", samples=40, seed=2))
    return tmp_path / "runs"


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ("{runs}/v1.jsonl", "{runs}/v2.jsonl"),  # absolute
        ("runs/../runs/v1.jsonl", "./runs//v2.jsonl"),
        ("./runs/v1.jsonl", "runs/v2.jsonl"),
    ],
)
def test_a_measurement_given_in_another_spelling_is_recorded_once(
    runs: Path, knowledge: Path, before: str, after: str
) -> None:
    # The same two files named once as typed in a shell and once another way were recorded
    # twice: one measurement then read as two.
    first = learn(
        observe_files("runs/v1.jsonl", "runs/v2.jsonl"), entry_id=ENTRY, knowledge=knowledge
    )
    assert first.action is Action.EVIDENCE and not first.recorded_before
    assert first.path is not None
    # Cited from the tree's folder (docs/knowledge), where a run in any folder reads it.
    assert parse_entry(first.path.read_text("utf-8")).evidence[-1].source == (
        "../../runs/v1.jsonl vs ../../runs/v2.jsonl"
    )
    written = first.path.read_bytes()
    again = observe_files(before.format(runs=runs), after.format(runs=runs))
    assert again.source == "runs/v1.jsonl vs runs/v2.jsonl"
    for dry_run in (True, False):
        outcome = learn(again, entry_id=ENTRY, knowledge=knowledge, dry_run=dry_run)
        assert outcome.recorded_before and "already recorded" in outcome.summary()
    assert first.path.read_bytes() == written


def test_a_row_cited_in_an_older_spelling_is_found(runs: Path, knowledge: Path) -> None:
    # A row recorded with an absolute citation (given so, or written before citations took
    # one form) is the same measurement as the relative one of today's run.
    seen = observe_files("runs/v1.jsonl", "runs/v2.jsonl")
    cited = f"{runs / 'v1.jsonl'} vs {runs}/./v2.jsonl"
    older = observe_rows(
        anchor_row("splits16", samples=40, seed=1),
        anchor_row("splits8", samples=40, seed=2),
        source=cited,
    )
    first = learn(older, entry_id=ENTRY, knowledge=knowledge)
    assert first.path is not None and first.row is not None
    written = first.path.read_bytes()
    again = learn(seen, entry_id=ENTRY, knowledge=knowledge)
    assert again.recorded_before and again.row == first.row
    assert first.path.read_bytes() == written
    # Another file is another measurement, whatever its rows hold.
    shutil.copyfile(runs / "v2.jsonl", runs / "v2-copy.jsonl")
    other = learn(
        observe_files("runs/v1.jsonl", "runs/v2-copy.jsonl"), entry_id=ENTRY, knowledge=knowledge
    )
    assert not other.recorded_before and first.path.read_bytes() != written


@pytest.mark.parametrize(
    ("entry_id", "before", "after"),
    [
        ("cuda-graphs", "splits16", "splits8"),  # FAST: a row in a built-in entry's copy
        (ENTRY, "splits8", "splits32"),  # SLOW: a new anti-pattern
    ],
)
def test_a_dry_run_refuses_a_tree_the_real_run_cannot_write(
    tmp_path: Path, entry_id: str, before: str, after: str
) -> None:
    # A tree under a regular file: no user, root included, can create it. The dry run said
    # "Would record" (or "Would create") where the real run then failed.
    (tmp_path / "notes.txt").write_text("not a folder\n", encoding="utf-8")
    root = tmp_path / "notes.txt" / "knowledge"
    seen = observe_rows(anchor_row(before), anchor_row(after), source="runs/x.jsonl")
    errors = []
    for dry_run in (True, False):
        with pytest.raises((InputError, CatalogError)) as caught:
            learn(seen, entry_id=entry_id, knowledge=root, dry_run=dry_run)
        errors.append(caught.value)
    dry, real = errors
    # The dry run says what the real run says, in its words.
    assert type(dry) is type(real) and str(dry) == str(real)
    assert str(dry).startswith("Expected a") and "notes.txt" in str(dry)
    assert (tmp_path / "notes.txt").read_text(encoding="utf-8") == "not a folder\n"


@pytest.fixture
def read_only(knowledge: Path) -> Iterator[Path]:
    """The ``knowledge`` tree and the folder holding it (where its locks go) made
    read-only; the modes are given back after the test."""
    places = [knowledge.parent, knowledge, *(p for p in knowledge.rglob("*") if p.is_dir())]
    places += [p for p in knowledge.parent.glob("*.lock")]
    modes = {place: place.stat().st_mode for place in places}
    for place in places:
        place.chmod(stat.S_IMODE(modes[place]) & ~0o222)
    try:
        yield knowledge
    finally:
        for place, mode in modes.items():
            place.chmod(stat.S_IMODE(mode))


def test_a_dry_run_on_a_read_only_tree_says_what_the_real_run_does(
    capsys: pytest.CaptureFixture[str], runs: Path, read_only: Path
) -> None:
    argv = [
        "learn",
        "--before",
        str(runs / "v1.jsonl"),
        "--after",
        str(runs / "v2.jsonl"),
        "--entry",
        ENTRY,
        "--knowledge",
        str(read_only),
    ]
    files = snapshot(read_only)
    folder = read_only / ENTRY_FILE.parent
    # Root may write in a folder whatever its mode: the tree is then writable, and the dry
    # run must not refuse it.
    writable = os.access(folder, os.W_OK) and os.access(read_only.parent, os.W_OK)
    code = main([*argv, "--dry-run"])
    out, err = capsys.readouterr()
    assert snapshot(read_only) == files
    if writable:
        assert code == 0 and "Would record" in out, err
        assert main(argv) == 0 and "Recorded" in capsys.readouterr().out
    else:
        assert code == 2 and out == "" and "Would record" not in err
        assert re.search(r"Expected a (lock file|folder) .*Permission denied", err), err
        assert main(argv) == 2
        real = capsys.readouterr().err
        assert real == err  # the same refusal, in the same words
        assert snapshot(read_only) == files


@pytest.mark.parametrize(
    ("line_end", "mark"), [("\r\n", ""), ("\n", "\ufeff")], ids=["crlf", "lf-bom"]
)
def test_an_entry_saved_otherwise_is_written_back_in_the_canonical_form(
    knowledge: Path, line_end: str, mark: str
) -> None:
    # The catalog has one form (LF, no byte-order mark); lint names a file saved otherwise,
    # and an update writes it back in that form with the row added.
    file = knowledge / ENTRY_FILE
    text = (BUILTIN_ROOT / ENTRY_FILE).read_text(encoding="utf-8")
    file.write_bytes((mark + text.replace("\n", line_end)).encode("utf-8"))
    seen = observe_rows(
        anchor_row("splits16", samples=40, seed=1),
        anchor_row("splits8", samples=40, seed=2),
        source="runs/v1.jsonl vs runs/v2.jsonl",
    )
    outcome = learn(seen, entry_id=ENTRY, knowledge=knowledge)
    written = file.read_bytes().decode("utf-8")
    assert "\r" not in written and not written.startswith("\ufeff")
    assert written == render_entry(parse_entry(written))
    assert parse_entry(written).evidence[-1].rows == (outcome.row,)


def test_rows_with_unequal_sample_counts_are_judged_on_all_their_samples() -> None:
    from kernelopt.workflow import observe_rows

    from .conftest import anchor_row

    before = anchor_row("splits16", samples=60, seed=1)
    after = anchor_row("splits8", samples=45, seed=2)
    seen = observe_rows(before, after, source="a vs b")
    assert seen.comparison.pairs == 0 and seen.verdict.value == "FAST"
    assert seen.method.startswith("unpaired bootstrap of 60 before and 45 after samples")

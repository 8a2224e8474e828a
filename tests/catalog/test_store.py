"""Update operations of the knowledge-base protocol: atomic, locked, index refreshed."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
import threading
from pathlib import Path
from unittest import mock

import attrs
import pytest

from kernelopt import CatalogError, FormatError, InputError
from kernelopt._fileio import locked
from kernelopt.catalog import (
    Catalog,
    EvidenceRow,
    Interaction,
    Kind,
    KnowledgeTree,
    SourceType,
    load_tree,
    new_entry_file,
    parse_entry,
    render_entry,
    render_index,
)

from .conftest import make_entry

REPO = Path(__file__).resolve().parents[2]


def _row(tag: str) -> EvidenceRow:
    return EvidenceRow(config=tag, before="10 us", after="9 us", change="-10 %")


def _index_is_fresh(root: Path) -> bool:
    return (root / "index.md").read_text(encoding="utf-8") == render_index(load_tree(root).entries)


def test_add_optimization_and_anti_pattern_place_files_and_refresh_index(tmp_path: Path) -> None:
    tree = KnowledgeTree(tmp_path / "knowledge")
    path = tree.add_optimization(make_entry())
    assert path == tmp_path / "knowledge" / "optimizations" / "demo-trick.md"
    trap = make_entry(
        id="demo-trap", name="Demo Trap", kind=Kind.ANTI_PATTERN, scope="triton", interactions=()
    )
    assert (
        tree.add_anti_pattern(trap)
        == tmp_path / "knowledge/languages/triton/anti-patterns/demo-trap.md"
    )
    assert _index_is_fresh(tree.root)
    assert (
        "[Demo Trap](languages/triton/anti-patterns/demo-trap.md)"
        in (tree.root / "index.md").read_text()
    )
    assert tree.catalog().get("demo-trap") == trap


def test_add_rejects_existing_ids_wrong_kind_and_broken_links(tmp_path: Path) -> None:
    tree = KnowledgeTree(tmp_path / "knowledge")
    tree.add(make_entry())
    with pytest.raises(CatalogError, match="Expected a new entry id, got 'demo-trick', already in"):
        tree.add(make_entry(name="Again"))
    with pytest.raises(CatalogError, match="a built-in entry"):
        tree.add(make_entry(id="cuda-graphs", interactions=()))
    with pytest.raises(InputError, match="kind anti-pattern"):
        tree.add_anti_pattern(make_entry(id="other"))
    broken = make_entry(
        id="other", interactions=(Interaction(target="nowhere", relation="related", note="x"),)
    )
    with pytest.raises(CatalogError, match="interactions linking known entry ids, got nowhere"):
        tree.add(broken)
    assert not (tree.root / "optimizations" / "other.md").exists()


def test_refine_applicability_replaces_given_fields_only(tmp_path: Path) -> None:
    tree = KnowledgeTree(tmp_path / "knowledge")
    tree.add(make_entry())
    updated = tree.refine_applicability(
        "demo-trick",
        contexts=("Only for s_q of 1.",),
        triggers=["dram_pct > 75 and tc_pct < 10"],
        keywords=("demo",),
    )
    assert updated.contexts == ("Only for s_q of 1.",)
    assert str(updated.triggers[0]) == "dram_pct > 75 and tc_pct < 10"
    assert updated.mechanism == make_entry().mechanism
    on_disk = parse_entry(
        (tree.root / "optimizations" / "demo-trick.md").read_text(encoding="utf-8")
    )
    assert on_disk == updated
    assert _index_is_fresh(tree.root)
    with pytest.raises(InputError, match="at least one field"):
        tree.refine_applicability("demo-trick")
    with pytest.raises(InputError, match="valid change"):
        tree.refine_applicability("demo-trick", keywords=("UPPER",))
    with pytest.raises(CatalogError, match="got 'nope'"):
        tree.refine_applicability("nope", contexts=("x",))


def test_refine_rejects_a_string_where_a_sequence_goes_and_writes_nothing(
    tmp_path: Path,
) -> None:
    tree = KnowledgeTree(tmp_path / "knowledge")
    for field in ("families", "keywords", "contexts", "triggers"):
        with pytest.raises(InputError, match=r"Expected a sequence of .*, got 'any'"):
            tree.refine_applicability("cuda-graphs", **{field: "any"})
    assert not list(tree.root.rglob("cuda-graphs.md"))
    assert tree.catalog().get("cuda-graphs") == Catalog.builtin().get("cuda-graphs")


def test_writes_keep_the_file_mode_and_follow_the_umask(tmp_path: Path) -> None:
    tree = KnowledgeTree(tmp_path / "knowledge")
    tree.record_evidence("cuda-graphs", _row("a"), source_type="local experiment", source="x")
    path = tree.root / "optimizations" / "cuda-graphs.md"
    umask = os.umask(0o022)
    os.umask(umask)
    assert path.stat().st_mode & 0o777 == 0o666 & ~umask
    path.chmod(0o640)
    tree.record_evidence("cuda-graphs", _row("b"), source_type="local experiment", source="x")
    assert path.stat().st_mode & 0o777 == 0o640


def test_record_evidence_groups_rows_by_source(tmp_path: Path) -> None:
    tree = KnowledgeTree(tmp_path / "knowledge")
    tree.add(make_entry())
    tree.record_evidence(
        "demo-trick",
        _row("a"),
        source_type="local experiment",
        source="experiments/exp_1/result.md",
    )
    entry = tree.record_evidence(
        "demo-trick",
        _row("b"),
        source_type=SourceType.EXTERNAL_REPORT,
        source="https://example.org/x",
        notes="Why.",
    )
    assert [len(b.rows) for b in entry.evidence] == [2, 1]
    assert entry.evidence[1].notes == "Why."
    assert [r.config for _, r in entry.evidence_rows] == ["b=32 s=1", "a", "b"]


def test_record_evidence_keeps_a_note_that_is_only_part_of_an_earlier_one(
    tmp_path: Path,
) -> None:
    tree = KnowledgeTree(tmp_path / "knowledge")
    tree.add(make_entry())

    def record(tag: str, notes: str) -> str:
        entry = tree.record_evidence(
            "demo-trick", _row(tag), source_type="local experiment", source="exp_7", notes=notes
        )
        return entry.evidence[-1].notes

    assert record("a", "Warm L2. Cold L2 is 30 % slower.") == "Warm L2. Cold L2 is 30 % slower."
    # A note of its own, though its words appear in the earlier note.
    assert record("b", "Warm L2.") == "Warm L2. Cold L2 is 30 % slower.\n\nWarm L2."
    # The same note again, with a row of its own, is not written twice.
    assert record("c", "Warm L2.") == "Warm L2. Cold L2 is 30 % slower.\n\nWarm L2."
    assert record("d", "Warm L2. Cold L2 is 30 % slower.\n\nWarm L2.") == (
        "Warm L2. Cold L2 is 30 % slower.\n\nWarm L2."
    )


@pytest.mark.parametrize("notes", [5, None, ["Warm L2."]])
def test_record_evidence_refuses_notes_that_are_not_text(tmp_path: Path, notes: object) -> None:
    tree = KnowledgeTree(tmp_path / "knowledge")
    tree.add(make_entry())
    path = tmp_path / "knowledge" / "optimizations" / "demo-trick.md"
    before = path.read_bytes()
    # Joining an existing block (same source) as well as starting a new one.
    for source in ("experiments/exp_1/result.md", "exp_9"):
        with pytest.raises(InputError, match=r"notes: Expected notes \(str\)"):
            tree.record_evidence(
                "demo-trick",
                _row("z"),
                source_type="local experiment",
                source=source,
                notes=notes,  # type: ignore[arg-type]
            )
    assert path.read_bytes() == before


def test_an_update_of_a_file_that_is_not_utf8_says_so_and_writes_nothing(tmp_path: Path) -> None:
    tree = KnowledgeTree(tmp_path / "knowledge")
    path = tree.add(make_entry())
    # An editor that saved the file as Latin-1: "Naïve" is not UTF-8.
    path.write_bytes(path.read_bytes().replace(b"Demo Trick", "Naïve Trick".encode("latin-1")))
    before = path.read_bytes()
    with pytest.raises(FormatError) as raised:
        tree.record_evidence(
            "demo-trick", _row("z"), source_type="local experiment", source="exp_9"
        )
    assert "Expected a UTF-8 file" in str(raised.value)
    assert raised.value.path == str(path)
    assert path.read_bytes() == before


def test_operations_on_builtin_ids_copy_the_entry_into_the_tree(tmp_path: Path) -> None:
    tree = KnowledgeTree(tmp_path / "knowledge")
    entry = tree.record_evidence(
        "too-many-kv-splits",
        _row("b=8 s=1 h=16, 8 -> 16 splits"),
        source_type="local experiment",
        source="exp_3",
    )
    path = tmp_path / "knowledge" / "anti-patterns" / "too-many-kv-splits.md"
    assert path.is_file() and parse_entry(path.read_text(encoding="utf-8")) == entry
    builtin = Catalog.builtin().get("too-many-kv-splits")
    assert entry.evidence[:-1] == builtin.evidence and entry.evidence[-1].source == "exp_3"
    assert tree.catalog().get("too-many-kv-splits") == entry
    standalone = KnowledgeTree(tmp_path / "other", with_builtin=False)
    with pytest.raises(CatalogError, match="Expected an entry id present in"):
        standalone.record_evidence(
            "online-softmax", _row("x"), source_type="local experiment", source="s"
        )


def test_flip_moves_the_file_both_ways_and_keeps_the_reason(tmp_path: Path) -> None:
    tree = KnowledgeTree(tmp_path / "knowledge")
    tree.add(make_entry())
    flipped = tree.flip("demo-trick", reason="Slower on H200 at every batch size (exp_9).")
    assert flipped.kind is Kind.ANTI_PATTERN
    assert not (tree.root / "optimizations" / "demo-trick.md").exists()
    moved = tree.root / "anti-patterns" / "demo-trick.md"
    assert parse_entry(moved.read_text(encoding="utf-8")) == flipped
    assert flipped.generalization.endswith(
        "Reclassified from optimization to anti-pattern: "
        "Slower on H200 at every batch size (exp_9)."
    )
    assert _index_is_fresh(tree.root)
    back = tree.flip("demo-trick", reason="Fast again after the layout change (exp_12).")
    assert back.kind is Kind.OPTIMIZATION and not moved.exists()
    assert (tree.root / "optimizations" / "demo-trick.md").is_file()
    with pytest.raises(InputError, match="a reason for the flip"):
        tree.flip("demo-trick", reason=" ")
    # A built-in entry flipped in a user tree shadows the built-in with the other kind.
    user = tree.flip("hot-l2-timing", reason="Our production path really is L2-resident.")
    assert tree.catalog().get("hot-l2-timing").kind is Kind.OPTIMIZATION == user.kind


def test_text_with_windows_line_breaks_is_refused_naming_the_carriage_return(
    tmp_path: Path,
) -> None:
    # The error read "Expected non-empty text without leading or trailing blank space" and
    # showed the start of the entry's Generalization, which has neither.
    tree = KnowledgeTree(tmp_path / "knowledge")
    tree.add(make_entry())
    before = (tree.root / "optimizations" / "demo-trick.md").read_bytes()
    carriage = re.escape("Expected line breaks written as '\\n', got a carriage return in ")
    with pytest.raises(InputError, match="Entry.generalization: " + carriage) as raised:
        tree.flip("demo-trick", reason="Slower on H200 (exp_9).\r\nAt every batch size.")
    assert "(exp_9).\\r\\nAt" in str(raised.value)
    with pytest.raises(InputError, match="Evidence.notes: " + carriage):
        tree.record_evidence(
            "demo-trick", _row("b=1"), source_type="local experiment", source="x", notes="a\r\nb"
        )
    assert (tree.root / "optimizations" / "demo-trick.md").read_bytes() == before


@pytest.mark.parametrize("what", ["file", "link to nothing", "path below a file"])
def test_a_root_that_is_no_folder_is_a_catalog_error(tmp_path: Path, what: str) -> None:
    # Writes raised mkdir's FileExistsError or NotADirectoryError, and catalog() on a file
    # answered with the built-ins alone, as for a tree not made yet.
    (tmp_path / "a-file").write_text("not a tree\n", encoding="utf-8")
    (tmp_path / "gone").symlink_to(tmp_path / "nowhere")
    root = {
        "file": tmp_path / "a-file",
        "link to nothing": tmp_path / "gone",
        "path below a file": tmp_path / "a-file" / "knowledge",
    }[what]
    tree = KnowledgeTree(root)
    message = "Expected a knowledge folder"
    operations = [
        lambda: tree.record_evidence(
            "online-softmax", _row("x"), source_type="local experiment", source="x"
        ),
        tree.write_index,
        lambda: tree.add(make_entry()),
        lambda: tree.flip("online-softmax", reason="r"),
        lambda: new_entry_file(root, "My Trick", kind="optimization"),
    ]
    if what != "path below a file":  # that one does not exist: the built-ins answer alone
        operations.append(tree.catalog)
    for operation in operations:
        with pytest.raises(CatalogError, match=message):
            operation()
    assert (tmp_path / "a-file").read_text(encoding="utf-8") == "not a tree\n"
    assert not (tmp_path / "nowhere").exists()


def test_flip_to_a_kind_refuses_an_entry_another_writer_already_flipped(tmp_path: Path) -> None:
    # Two writers that both saw the optimization regress must not flip it there and back.
    tree = KnowledgeTree(tmp_path / "knowledge")
    tree.add(make_entry())
    first = tree.flip("demo-trick", reason="Slower (exp_9).", to=Kind.ANTI_PATTERN)
    path = tree.root / "anti-patterns" / "demo-trick.md"
    before = path.read_text(encoding="utf-8")
    with pytest.raises(CatalogError, match="already an anti-pattern"):
        tree.flip("demo-trick", reason="Slower here too (exp_10).", to="anti-pattern")
    assert path.read_text(encoding="utf-8") == before
    assert tree.catalog().get("demo-trick") == first
    with pytest.raises(InputError, match="to: Expected one of 'optimization', 'anti-pattern'"):
        tree.flip("demo-trick", reason="x", to="faster")
    assert tree.flip("demo-trick", reason="Fast again (exp_12).", to="optimization").kind is (
        Kind.OPTIMIZATION
    )


def test_record_interaction_replaces_same_target(tmp_path: Path) -> None:
    tree = KnowledgeTree(tmp_path / "knowledge")
    tree.add(make_entry())
    entry = tree.record_interaction(
        "demo-trick",
        Interaction(target="cuda-graphs", relation="requires", note="Measured in exp_4."),
    )
    assert [(i.target, i.relation.value) for i in entry.interactions] == [
        ("cuda-graphs", "requires")
    ]
    with pytest.raises(CatalogError, match="got nowhere"):
        tree.record_interaction(
            "demo-trick", Interaction(target="nowhere", relation="related", note="x")
        )


def test_write_index(tmp_path: Path) -> None:
    tree = KnowledgeTree(tmp_path / "knowledge")
    tree.add(make_entry())
    (tree.root / "index.md").unlink()
    assert tree.write_index() == tree.root / "index.md"
    assert _index_is_fresh(tree.root)


_WRITER = textwrap.dedent(
    """
    import sys
    from kernelopt.catalog import EvidenceRow, KnowledgeTree
    root, tag, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
    tree = KnowledgeTree(root)
    for i in range(count):
        row = EvidenceRow(config=f"{tag}-{i}", before="1 us", after="1 us", change="0 %")
        tree.record_evidence(
            "split-kv-lse-combine", row, source_type="local experiment", source="race"
        )
    """
)


def test_two_processes_updating_one_tree_lose_nothing(tmp_path: Path) -> None:
    root = tmp_path / "knowledge"
    count = 200
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _WRITER, str(root), tag, str(count)],
            cwd=REPO,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for tag in ("p1", "p2")
    ]
    for proc in procs:
        _out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
    entry = parse_entry(
        (root / "optimizations" / "split-kv-lse-combine.md").read_text(encoding="utf-8")
    )
    race = [b for b in entry.evidence if b.source == "race"]
    assert len(race) == 1
    configs = [r.config for r in race[0].rows]
    assert len(configs) == 2 * count
    assert set(configs) == {f"{tag}-{i}" for tag in ("p1", "p2") for i in range(count)}
    # Each writer's rows keep their order: updates serialized, none interleaved mid-write.
    for tag in ("p1", "p2"):
        mine = [c for c in configs if c.startswith(tag)]
        assert mine == [f"{tag}-{i}" for i in range(count)]
    assert _index_is_fresh(root)
    assert not list(root.rglob(".*.tmp"))


def test_writers_reaching_one_tree_by_different_paths_share_its_lock(tmp_path: Path) -> None:
    root = tmp_path / "knowledge"
    root.mkdir()
    (tmp_path / "link").symlink_to(root)
    count = 60
    paths = (root, tmp_path / "link", root / ".." / "knowledge")
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _WRITER, str(path), f"p{i}", str(count)],
            cwd=REPO,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i, path in enumerate(paths)
    ]
    for proc in procs:
        _out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
    entry = KnowledgeTree(root).catalog().get("split-kv-lse-combine")
    (race,) = [b for b in entry.evidence if b.source == "race"]
    assert len(race.rows) == 3 * count


def test_update_moves_a_misplaced_file_to_its_folder(tmp_path: Path) -> None:
    root = tmp_path / "knowledge"
    wrong = root / "anti-patterns" / "demo-trick.md"  # an optimization filed as anti-pattern
    wrong.parent.mkdir(parents=True)
    wrong.write_text(render_entry(make_entry()), encoding="utf-8")
    KnowledgeTree(root).refine_applicability("demo-trick", pitfalls=("Moved.",))
    assert not wrong.exists()
    assert (root / "optimizations" / "demo-trick.md").is_file()
    assert load_tree(root).problems == ()


def test_a_folder_whose_index_md_is_someone_elses_is_not_written(tmp_path: Path) -> None:
    root = tmp_path / "docs" / "knowledge"
    root.mkdir(parents=True)
    page = "# Built-in knowledge base\n\nA page of the project's own docs.\n"
    (root / "index.md").write_text(page, encoding="utf-8")
    tree = KnowledgeTree(root)
    for operation in (
        tree.write_index,
        lambda: tree.add(make_entry()),
        lambda: tree.record_evidence(
            "cuda-graphs", _row("a"), source_type="local experiment", source="x"
        ),
        # A scaffold there would be an entry the next `catalog index` refuses to list.
        lambda: new_entry_file(root, "My Trick", kind="optimization"),
    ):
        with pytest.raises(CatalogError, match=r"Expected a knowledge tree at .*, got another"):
            operation()
    assert (root / "index.md").read_text(encoding="utf-8") == page
    assert sorted(p.name for p in root.iterdir()) == ["index.md"]
    assert sorted(p.name for p in root.parent.iterdir()) == ["knowledge"]  # no lock file


def test_operations_refuse_wrong_types_before_writing(tmp_path: Path) -> None:
    tree = KnowledgeTree(tmp_path / "k")
    row = EvidenceRow(config="b=1", before="2 us", after="1 us", change="-50 %")
    calls = [
        (lambda: tree.add(5), "entry: Expected an Entry, got 5"),  # type: ignore[arg-type]
        (
            lambda: tree.record_evidence(
                "cuda-graphs", 5, source_type="local experiment", source="x"
            ),  # type: ignore[arg-type]
            "row: Expected an EvidenceRow",
        ),
        (
            lambda: tree.record_evidence(
                "cuda-graphs", row, source_type="local experiment", source=""
            ),
            "source: Expected a source",
        ),
        (
            lambda: tree.record_evidence("cuda-graphs", row, source_type="hunch", source="x"),
            "source_type: Expected one of 'local experiment'",
        ),
        (lambda: tree.record_interaction("cuda-graphs", 5), "interaction: Expected an Interaction"),  # type: ignore[arg-type]
        (lambda: tree.flip("cuda-graphs", reason=5), "reason: Expected a reason"),  # type: ignore[arg-type]
        (lambda: Catalog([1]), "Expected entries of type Entry, got 1"),  # type: ignore[list-item]
        (lambda: render_entry(5), "entry: Expected an Entry, got 5"),  # type: ignore[arg-type]
        (lambda: render_index([1]), "entries: Expected entries of type Entry"),  # type: ignore[list-item]
    ]
    for call, message in calls:
        with pytest.raises(InputError) as raised:
            call()
        assert message in str(raised.value)
    assert not (tmp_path / "k").exists()


def test_a_reader_through_a_symlink_waits_for_the_writer(tmp_path: Path) -> None:
    # A flip writes the new file before it removes the old one: a reader that did not
    # wait for the writer's lock could see the entry twice, or a file listed then gone.
    root = tmp_path / "knowledge"
    KnowledgeTree(root).add(make_entry())
    (tmp_path / "link").symlink_to(root)
    done = threading.Event()

    def read() -> None:
        load_tree(tmp_path / "link")
        done.set()

    with locked(root):
        reader = threading.Thread(target=read)
        reader.start()
        assert not done.wait(0.5), "the reader did not wait for the writer's lock"
    reader.join(10)
    assert done.is_set()


def _interrupt_flip(tree: KnowledgeTree) -> tuple[Path, Path]:
    """Both sides of a flip of demo-trick, as a crash between its two steps leaves them."""
    old = tree.root / "optimizations" / "demo-trick.md"
    kept = old.read_text(encoding="utf-8")
    tree.flip("demo-trick", reason="Slower (exp_9).")
    old.write_text(kept, encoding="utf-8")
    return old, tree.root / "anti-patterns" / "demo-trick.md"


def test_an_interrupted_flip_loads_as_the_flipped_entry_and_the_next_update_finishes_it(
    tmp_path: Path,
) -> None:
    tree = KnowledgeTree(tmp_path / "knowledge")
    tree.add(make_entry())
    old, new = _interrupt_flip(tree)
    loaded = load_tree(tree.root, strict=True)
    (entry,) = loaded.entries
    assert entry.kind is Kind.ANTI_PATTERN and entry.id == "demo-trick"
    (warning,) = [p for p in loaded.problems if "interrupted flip" in p.message]
    assert not warning.is_error and warning.path == str(old)
    entry = tree.record_evidence(
        "demo-trick", _row("after"), source_type="local experiment", source="exp_10"
    )
    assert entry.kind is Kind.ANTI_PATTERN and not old.exists() and new.is_file()
    assert "Reclassified from optimization to anti-pattern: Slower (exp_9)." in (
        parse_entry(new.read_text(encoding="utf-8")).generalization
    )
    assert not [p for p in load_tree(tree.root).problems if p.is_error]


def test_two_different_copies_of_an_id_are_still_a_repeat(tmp_path: Path) -> None:
    tree = KnowledgeTree(tmp_path / "knowledge")
    tree.add(make_entry())
    old, new = _interrupt_flip(tree)
    # Edited after the flip: no longer the two sides of one flip, so neither is dropped.
    edited = attrs.evolve(parse_entry(new.read_text(encoding="utf-8")), mechanism="Edited.")
    new.write_text(render_entry(edited), encoding="utf-8")
    with pytest.raises(CatalogError, match="a unique id"):
        load_tree(tree.root, strict=True)
    assert old.is_file() and new.is_file()


# A writer that records `count` rows, then dies (os._exit, no cleanup) in the middle of
# the next write while it holds the tree's lock: after its temp file is written, before
# the rename (`at=entry`), or after the entry's rename, before the index (`at=index`).
_KILLED_WRITER = textwrap.dedent(
    """
    import os, sys
    from unittest import mock
    import kernelopt._fileio as fileio
    from kernelopt.catalog import EvidenceRow, KnowledgeTree
    root, tag, count, at = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    tree = KnowledgeTree(root)

    def row(i):
        return EvidenceRow(config=f"{tag}-{i}", before="1 us", after="1 us", change="0 %")

    for i in range(count):
        tree.record_evidence("split-kv-lse-combine", row(i), source_type="local experiment",
                             source="race")
    real = os.replace

    def dying(src, dst):
        if at == "entry" or str(dst).endswith("index.md"):
            os._exit(3)
        real(src, dst)

    with mock.patch.object(fileio.os, "replace", dying):
        if at == "entry":
            tree.record_evidence("split-kv-lse-combine", row("killed"),
                                 source_type="local experiment", source="race")
        else:  # a new first context changes the entry's index row
            mark = "Killed mid-write."
            current = tree.catalog().get("split-kv-lse-combine").contexts
            tree.refine_applicability("split-kv-lse-combine",
                                      contexts=(mark, *(c for c in current if c != mark)))
    """
)


def _lock_is_free(root: Path) -> bool:
    """Whether another process can take the tree's lock within a few seconds."""
    code = "import sys; from kernelopt._fileio import locked\nwith locked(sys.argv[1]): pass"
    try:
        subprocess.run([sys.executable, "-c", code, str(root)], cwd=REPO, timeout=20, check=True)
    except subprocess.TimeoutExpired:
        return False
    return True


@pytest.mark.parametrize("at", ["entry", "index"])
def test_writers_killed_mid_write_cost_no_other_write(tmp_path: Path, at: str) -> None:
    root = tmp_path / "knowledge"
    count = 40
    # One writer killed before its index write: a second one's context change would
    # leave the index as the first left it, and nothing to kill it in.
    killers = ("k1", "k2") if at == "entry" else ("k1",)
    commands = [
        [sys.executable, "-c", _WRITER, str(root), "w1", str(count)],
        [sys.executable, "-c", _WRITER, str(root), "w2", str(count)],
        *(
            [sys.executable, "-c", _KILLED_WRITER, str(root), k, str(count // 2), at]
            for k in killers
        ),
    ]
    procs = [
        subprocess.Popen(c, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for c in commands
    ]
    codes = []
    for proc in procs:
        _out, err = proc.communicate(timeout=120)
        codes.append((proc.returncode, err))
    assert [c for c, _ in codes] == [0, 0, *(3 for _ in killers)], codes
    assert _lock_is_free(root)
    entry = KnowledgeTree(root).catalog().get("split-kv-lse-combine")
    (race,) = [b for b in entry.evidence if b.source == "race"]
    configs = [r.config for r in race.rows]
    done = {f"{t}-{i}" for t in ("w1", "w2") for i in range(count)}
    done |= {f"{t}-{i}" for t in killers for i in range(count // 2)}
    assert set(configs) == done and len(configs) == len(done)
    # A writer killed after its entry's rename has written the entry, not yet the index;
    # the next update writes the index again.
    assert ("Killed mid-write." in entry.contexts) == (at == "index")
    assert not [p for p in load_tree(root).problems if p.is_error]
    KnowledgeTree(root).record_evidence(
        "split-kv-lse-combine", _row("after"), source_type="local experiment", source="race"
    )
    assert _index_is_fresh(root)


def test_a_write_that_raises_releases_the_lock_and_keeps_the_tree(tmp_path: Path) -> None:
    tree = KnowledgeTree(tmp_path / "knowledge")
    tree.add(make_entry())
    before = (tree.root / "optimizations" / "demo-trick.md").read_text(encoding="utf-8")

    def failing(path: object, text: str) -> None:
        raise OSError("disk full")

    with (
        mock.patch("kernelopt.catalog.store.atomic_write_text", failing),
        pytest.raises(OSError, match="disk full"),
    ):
        tree.record_evidence("demo-trick", _row("lost"), source_type="local experiment", source="x")
    assert _lock_is_free(tree.root)
    assert (tree.root / "optimizations" / "demo-trick.md").read_text(encoding="utf-8") == before
    entry = tree.record_evidence(
        "demo-trick", _row("kept"), source_type="local experiment", source="x"
    )
    assert [r.config for b in entry.evidence for r in b.rows][-1] == "kept"
    assert _index_is_fresh(tree.root)


def test_the_next_update_removes_what_a_killed_writer_left(tmp_path: Path) -> None:
    root = tmp_path / "knowledge"
    proc = subprocess.run(
        [sys.executable, "-c", _KILLED_WRITER, str(root), "k1", "1", "entry"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 3, proc.stderr
    (left,) = root.rglob(".*.tmp")  # the temp file its rename never took
    assert left.name.startswith(".split-kv-lse-combine.md.")
    # Not a file of the tree's, so readers skip it. A user's own hidden file stays, and so
    # does a temp file beside a file the tree does not write (a devlog kept under the root,
    # whose writer holds another lock).
    own = root / "optimizations" / ".notes.tmp"
    own.write_text("mine", encoding="utf-8")
    other = root / "kernels" / ".mla_decode.md.abcd1234.tmp"
    other.parent.mkdir()
    other.write_text("a devlog being written", encoding="utf-8")
    assert not [p for p in load_tree(root).problems if p.is_error]
    KnowledgeTree(root).record_evidence(
        "split-kv-lse-combine", _row("next"), source_type="local experiment", source="race"
    )
    assert sorted(root.rglob(".*.tmp")) == sorted([own, other])

"""Paths that disagreed with their neighbours: a closed launcher run through
``call_with_scope``, ``catalog new`` making up a default tree that ``catalog index``
refuses, a LEARN dry run blind to the ``index.md`` the real run rewrites, and an MLA
flag shown unquoted."""

from __future__ import annotations

import importlib
import shutil
from pathlib import Path

import pytest
import torch

from kernelopt import CatalogError, InputError, cli
from kernelopt.buffers import (
    BufferPool,
    BufferScope,
    PersistentLauncher,
    capture_graph,
    persistent_buffers,
)
from kernelopt.catalog import BUILTIN_ROOT, KnowledgeTree
from kernelopt.catalog.index import INDEX_HEADER
from kernelopt.kernels.mla import get_mla_metadata
from kernelopt.workflow import Action, learn, observe_rows

from .workflow.conftest import SMALL_TREE, anchor_row

# The module, which the package's learn() shadows as an attribute.
learn_module = importlib.import_module("kernelopt.workflow.learn")

# --- call_with_scope of a closed launcher ---------------------------------------------


def make_counted(calls: list[str]) -> PersistentLauncher:  # type: ignore[type-arg]
    @persistent_buffers(pool=BufferPool(), name="consistency.counted")
    def counted(buffers: BufferScope, x: torch.Tensor) -> torch.Tensor:
        calls.append(buffers.name)
        return torch.mul(x, 2.0, out=buffers.resolve_out(None, x.shape, x.dtype, x.device))

    return counted


def _refusal(call: object) -> str:
    assert callable(call)
    with pytest.raises(InputError) as caught:
        call()
    return str(caught.value)


def test_call_with_scope_refuses_a_closed_launcher_as_a_plain_call_does() -> None:
    calls: list[str] = []
    counted = make_counted(calls)
    other = BufferScope("consistency.other", pool=BufferPool())
    assert counted.call_with_scope(other, torch.ones(2)).tolist() == [2.0, 2.0]
    assert calls == ["consistency.other"]  # an open launcher still runs on the scope given
    counted.close()
    plain = _refusal(lambda: counted(torch.ones(2)))
    assert plain == "Expected an open scope 'consistency.counted', got a scope closed by close()"
    # The other scope is open: the launcher ran there, close() notwithstanding.
    assert _refusal(lambda: counted.call_with_scope(other, torch.ones(2))) == plain
    assert calls == ["consistency.other"]  # refused before running anything


def test_a_bound_call_with_scope_refuses_a_closed_method_as_a_plain_call_does() -> None:
    class Layer:
        def __init__(self) -> None:
            self.calls = 0

        @persistent_buffers(pool=BufferPool(), name="consistency.layer")
        def forward(buffers: BufferScope, self: Layer, x: torch.Tensor) -> torch.Tensor:  # noqa: N805
            self.calls += 1
            return buffers.resolve_out(None, x.shape, x.dtype, x.device).copy_(x)

    layer = Layer()
    other = BufferScope("consistency.layer-other", pool=BufferPool())
    layer.forward.call_with_scope(other, torch.ones(2))
    assert layer.calls == 1
    Layer.forward.close()
    plain = _refusal(lambda: layer.forward(torch.ones(2)))
    assert plain == "Expected an open scope 'consistency.layer', got a scope closed by close()"
    assert _refusal(lambda: layer.forward.call_with_scope(other, torch.ones(2))) == plain
    assert layer.calls == 1


def test_capture_graph_still_refuses_a_closed_launcher_in_its_own_words() -> None:
    calls: list[str] = []
    counted = make_counted(calls)
    counted.close()
    # No CUDA here, and CPU inputs: the closed launcher is still what is reported.
    with pytest.raises(InputError) as caught:
        capture_graph(counted, torch.ones(2))
    assert str(caught.value) == (
        "launcher: Expected an open launcher to capture, got 'consistency.counted', "
        "closed by close()"
    )
    assert calls == []


# --- catalog new without a tree -------------------------------------------------------


def _catalog(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = cli.main(["catalog", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_catalog_new_refuses_a_missing_default_tree_as_index_does(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    code, out, err = _catalog(capsys, "index")
    assert code == 2 and out == "" and "docs/knowledge (no such folder)" in err
    code, out, err = _catalog(capsys, "new", "--kind", "optimization", "Ring Buffer")
    assert code == 2 and out == ""
    assert err == (
        "kernelopt catalog: error: Expected a knowledge folder, got docs/knowledge (no such "
        "folder here: pass --dir DIR, or create docs/knowledge first)\n"
    )
    assert list(tmp_path.iterdir()) == []  # no docs/knowledge made up here


def test_catalog_new_still_uses_an_existing_default_tree_and_creates_a_named_one(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "docs" / "knowledge").mkdir(parents=True)
    code, out, _ = _catalog(capsys, "new", "--kind", "optimization", "Ring Buffer")
    assert code == 0
    assert out == str(Path("docs") / "knowledge" / "optimizations" / "ring-buffer.md") + "\n"
    code, out, _ = _catalog(capsys, "new", "--kind", "optimization", "Ring", "--dir", "mine")
    assert code == 0 and (tmp_path / "mine" / "optimizations" / "ring.md").is_file()


# --- learn --dry-run and index.md -----------------------------------------------------

FAST = ("split-kv-flash-decoding", "splits16", "splits8")  # evidence in a tree entry
BUILTIN = ("cuda-graphs", "splits16", "splits8")  # evidence in a built-in entry's first copy
SLOW = ("split-kv-flash-decoding", "splits8", "splits32")  # a new anti-pattern


def _tree(base: Path) -> Path:
    root = base / "knowledge"
    for rel in SMALL_TREE:
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(BUILTIN_ROOT / rel, target)
    return root


def _files(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }


def _learn(case: tuple[str, str, str], root: Path, *, dry_run: bool) -> Exception:
    entry_id, before, after = case
    seen = observe_rows(anchor_row(before), anchor_row(after), source="runs/x.jsonl")
    with pytest.raises((InputError, CatalogError)) as caught:
        learn(seen, entry_id=entry_id, knowledge=root, dry_run=dry_run)
    return caught.value


@pytest.mark.parametrize("case", [FAST, BUILTIN, SLOW], ids=["evidence", "builtin", "new"])
def test_a_dry_run_refuses_a_folder_at_index_md_as_the_real_run_does(
    tmp_path: Path, case: tuple[str, str, str]
) -> None:
    root = _tree(tmp_path)
    (root / "index.md").mkdir()
    before = _files(tmp_path)
    dry = _learn(case, root, dry_run=True)
    assert _files(tmp_path) == before  # the dry run wrote nothing, not even a lock file
    real = _learn(case, root, dry_run=False)
    assert type(dry) is type(real) is CatalogError and str(dry) == str(real)
    assert str(dry).startswith(f"Expected a regular file at {root / 'index.md'}, got a folder")


@pytest.mark.parametrize("case", [FAST, BUILTIN, SLOW], ids=["evidence", "builtin", "new"])
def test_a_dry_run_refuses_an_index_md_the_real_run_cannot_rewrite(
    tmp_path: Path, case: tuple[str, str, str]
) -> None:
    # index.md links into a path under a regular file: no user, root included, can write
    # there. The real run saved the entry, then failed on the index; the dry run said
    # "Would record" (or "Would create").
    root = _tree(tmp_path)
    (tmp_path / "notes.txt").write_text("not a folder\n", encoding="utf-8")
    (root / "index.md").symlink_to(tmp_path / "notes.txt" / "index.md")
    before = _files(tmp_path)
    dry = _learn(case, root, dry_run=True)
    assert _files(tmp_path) == before  # the dry run wrote nothing
    real = _learn(case, root, dry_run=False)
    cause = f"Expected a folder that can be created, got {tmp_path / 'notes.txt'}, a file"
    head = f"Expected {root / 'index.md'} rewritten after the update, got {cause}; "
    assert type(dry) is type(real) is InputError
    assert str(real).startswith(head + "the update is saved in ")
    assert str(dry).startswith(head + "nothing was written")


def test_a_dry_run_checks_index_md_only_where_the_real_run_rewrites_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _tree(tmp_path)
    KnowledgeTree(root).write_index()  # current: evidence alone leaves it as it is
    real_may = learn_module._may
    # The root folder read-only, its entry folders writable (modes are no test as root).
    monkeypatch.setattr(
        learn_module, "_may", lambda path, mode: path != root.resolve() and real_may(path, mode)
    )
    entry_id, before, after = FAST
    seen = observe_rows(anchor_row(before), anchor_row(after), source="runs/x.jsonl")
    outcome = learn(seen, entry_id=entry_id, knowledge=root, dry_run=True)
    assert outcome.action is Action.EVIDENCE
    # A new entry adds a row to the index, written in the root folder.
    error = _learn(SLOW, root, dry_run=True)
    assert isinstance(error, InputError) and str(error).startswith(
        f"Expected {root / 'index.md'} rewritten after the update, got Expected a folder "
        f"kernelopt may write in, got {root.resolve()}: Permission denied; nothing was written"
    )
    # A stale index is rewritten after evidence too.
    (root / "index.md").write_text(INDEX_HEADER, encoding="utf-8")  # lists no entry
    with pytest.raises(InputError, match="rewritten after the update"):
        learn(seen, entry_id=entry_id, knowledge=root, dry_run=True)


# --- get_mla_metadata's is_fp8_kvcache ------------------------------------------------


@pytest.mark.parametrize("value", ["True", "yes"])
def test_is_fp8_kvcache_of_another_type_is_shown_quoted(value: object) -> None:
    seqlens = torch.tensor([130, 17], dtype=torch.int32)
    with pytest.raises(InputError) as caught:
        get_mla_metadata(seqlens, 6, 1, is_fp8_kvcache=value)  # type: ignore[arg-type]
    assert str(caught.value) == f"is_fp8_kvcache: Expected a bool, got {value!r}"

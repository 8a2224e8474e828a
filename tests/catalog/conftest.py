"""Shared builders for the catalog tests: a valid entry and small knowledge trees."""

from __future__ import annotations

import errno
import os
from pathlib import Path
from typing import Any

import attrs
import pytest

from kernelopt.catalog import (
    Entry,
    Evidence,
    EvidenceRow,
    Interaction,
    Kind,
    parse_condition,
    render_entry,
)


def make_entry(**overrides: Any) -> Entry:
    """A small valid entry; keyword arguments replace fields."""
    base = Entry(
        id="demo-trick",
        name="Demo Trick",
        kind=Kind.OPTIMIZATION,
        scope="shared",
        families=("decode-attention",),
        fundamental_for=(),
        keywords=("demo trick", "demo_knob"),
        contexts=("Decode attention with long KV caches.",),
        triggers=(parse_condition("dram_pct > 60", note="bandwidth-bound"),),
        shape_conditions=(parse_condition("s_q == 1"),),
        mechanism="It works because of reasons.",
        affected_metrics=("DRAM throughput",),
        implementation="```python\nx = 1\n```",
        evidence=(
            Evidence(
                source_type="local experiment",
                source="experiments/exp_1/result.md",
                rows=(
                    EvidenceRow(config="b=32 s=1", before="10 us", after="8 us", change="-20 %"),
                ),
            ),
        ),
        generalization="Do the thing when it applies.",
        pitfalls=("It can fail.",),
        interactions=(
            Interaction(target="cuda-graphs", relation="complements", note="Both help."),
        ),
    )
    return attrs.evolve(base, **overrides)


def write_entry(root: Path, entry: Entry) -> Path:
    """Write ``entry`` at its place in the tree at ``root``."""
    path = root / entry.relative_path
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render_entry(entry), encoding="utf-8")
    return path


def deny_listing(monkeypatch: pytest.MonkeyPatch, *folders: Path) -> None:
    """Make listing ``folders`` fail as it does for a folder of mode 000 for its non-owner.

    The tests may run as root, whom folder modes do not stop, so the refusal is made where
    every listing of a folder starts.
    """
    denied = {os.fspath(folder) for folder in folders}
    listing = os.scandir

    def scandir(path: Any = ".") -> Any:
        if os.fspath(path) in denied:
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), os.fspath(path))
        return listing(path)

    monkeypatch.setattr(os, "scandir", scandir)


@pytest.fixture
def entry() -> Entry:
    return make_entry()


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A knowledge tree holding one shared optimization and one triton anti-pattern."""
    root = tmp_path / "knowledge"
    write_entry(root, make_entry())
    write_entry(
        root,
        make_entry(
            id="demo-trap",
            name="Demo Trap",
            kind=Kind.ANTI_PATTERN,
            scope="triton",
            keywords=("demo trap",),
            interactions=(
                Interaction(target="demo-trick", relation="alternative", note="The fix."),
            ),
        ),
    )
    return root

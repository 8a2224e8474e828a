"""The docs cannot rot silently: links, anchors, API names and counts match the code.

Every relative link in README.md, docs/ (but the recorded experiment log under
docs/kernels/mla_decode/experiments/, kept as written), examples/ and benchmarks/ points to
a file that exists and, for a ``#anchor`` into markdown, to a heading there. Every
backticked ``kernelopt.…`` name resolves to a module or attribute, and the README's counts
of built-in catalog entries and detectors are the code's.
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
FROZEN = REPO / "docs" / "kernels" / "mla_decode" / "experiments"
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
NAME = re.compile(r"`(kernelopt(?:\.[A-Za-z_]\w*)+)(?:\([^`]*\))?`")
FENCE = re.compile(r"^```.*?^```", re.S | re.M)


def markdown_files() -> list[Path]:
    found = [REPO / "README.md"]
    for folder in ("docs", "examples", "benchmarks"):
        found += sorted((REPO / folder).rglob("*.md"))
    return [p for p in found if FROZEN not in p.parents and ".venv" not in p.parts]


def prose(path: Path) -> str:
    """The file's text with fenced code blocks blanked (their lines kept for numbering)."""
    text = path.read_text(encoding="utf-8")
    return FENCE.sub(lambda m: "\n" * m.group(0).count("\n"), text)


def anchors(path: Path) -> set[str]:
    """GitHub's anchors of the file's headings (lowercase, punctuation dropped, - for spaces)."""
    found: set[str] = set()
    for heading in re.findall(r"^#{1,6}\s+(.+?)\s*#*\s*$", prose(path), re.M):
        slug = re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        n = 1
        candidate = slug
        while candidate in found:
            candidate, n = f"{slug}-{n}", n + 1
        found.add(candidate)
    return found


def broken_links(path: Path) -> list[str]:
    text = prose(path)
    broken = []
    for match in LINK.finditer(text):
        target = match.group(1)
        if "://" in target or target.startswith("mailto:"):
            continue
        file_part, _, anchor = target.partition("#")
        resolved = (path.parent / file_part) if file_part else path
        line = text.count("\n", 0, match.start()) + 1
        shown = path.relative_to(REPO) if REPO in path.parents else path.name
        where = f"{shown}:{line}: {target}"
        if not resolved.exists():
            broken.append(f"{where} (no such file)")
        elif anchor and resolved.suffix == ".md" and anchor not in anchors(resolved):
            broken.append(f"{where} (no such heading)")
    return broken


def resolves(dotted: str) -> bool:
    parts = dotted.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj: object = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for part in parts[i:]:
            fields = getattr(obj, "__attrs_attrs__", None)
            if not hasattr(obj, part):
                # An attrs field without a default has no class attribute.
                return fields is not None and any(f.name == part for f in fields)
            obj = getattr(obj, part)
        return True
    return False


@pytest.mark.parametrize("path", markdown_files(), ids=lambda p: str(p.relative_to(REPO)))
def test_relative_links_and_anchors_resolve(path: Path) -> None:
    assert broken_links(path) == []


@pytest.mark.parametrize("path", markdown_files(), ids=lambda p: str(p.relative_to(REPO)))
def test_backticked_kernelopt_names_exist(path: Path) -> None:
    text = prose(path)
    missing = sorted({name for name in NAME.findall(text) if not resolves(name)})
    assert missing == []


def test_the_checks_catch_a_broken_link_and_a_missing_name(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "# Title\n\n[ok](#title) [gone](missing.md) [bad](#nowhere)\n", encoding="utf-8"
    )
    assert [b.split(": ", 1)[1] for b in broken_links(page)] == [
        "missing.md (no such file)",
        "#nowhere (no such heading)",
    ]
    assert resolves("kernelopt.bench.measure_ceilings")
    assert resolves("kernelopt.catalog.Catalog.query")
    assert not resolves("kernelopt.bench.measure_ceiling")


def test_readme_counts_match_the_code() -> None:
    from kernelopt.catalog import Catalog
    from kernelopt.diagnose import Pathology

    readme = (REPO / "README.md").read_text(encoding="utf-8")
    catalog_doc = (REPO / "docs" / "catalog.md").read_text(encoding="utf-8")
    entries = len(Catalog.builtin())
    assert f"{entries} built-in entries" in readme
    assert f"({entries} entries on" in catalog_doc
    words = {9: "nine"}
    assert f"the {words[len(Pathology)]} plateau detectors" in readme

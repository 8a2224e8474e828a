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


def pip_installs(text: str) -> list[str]:
    """Every ``pip install`` command of a markdown text, in code blocks or inline code,
    with its line breaks folded and anything after ``&&`` or ``#`` cut."""
    code = re.findall(r"^```[^\n]*\n(.*?)^```", text, re.S | re.M)
    lines = [line for block in code for line in block.splitlines()]
    lines += re.findall(r"`([^`]*pip install[^`]*)`", FENCE.sub("", text))
    commands = [" ".join(line.split("&&")[0].split("#")[0].split()) for line in lines]
    return [c for c in commands if "pip install" in c]


def test_pip_installs_finds_inline_and_fenced_commands() -> None:
    text = (
        '```bash\n$ pip install "torch==2.13.0" -e . && kernelopt x  # why\n```\n'
        "Or `python -m pip install torch==2.11.0\n  --extra-index-url U` first.\n"
    )
    assert pip_installs(text) == [
        '$ pip install "torch==2.13.0" -e .',
        "python -m pip install torch==2.11.0 --extra-index-url U",
    ]


def test_every_install_command_gets_a_torch_that_fits_the_pinned_triton() -> None:
    # PyPI's torch wheels for Linux are CUDA builds, and each series requires its own
    # Triton: only the series the README names for GPUs ships the Triton the dev extra
    # pins. A command pinning any other series resolves only with the CPU build's index.
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    pyproject = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    gpu = re.search(r"CUDA build of PyTorch (\d+\.\d+) first \(it ships Triton ([\d.]+)", readme)
    assert gpu is not None, "the README no longer says which torch to install on a GPU"
    assert f'"triton=={gpu[2]};' in pyproject
    unresolvable = [
        f"{page}: {command}"
        for page in ("README.md", "docs/guide.md")
        for command in pip_installs((REPO / page).read_text(encoding="utf-8"))
        for version in re.findall(r"torch==(\d+\.\d+)", command)
        if version != gpu[1] and "download.pytorch.org/whl/cpu" not in command
    ]
    assert unresolvable == []


def test_readme_names_every_command_of_the_tool() -> None:
    import argparse

    from kernelopt.cli import build_parser

    readme = " ".join((REPO / "README.md").read_text(encoding="utf-8").split())
    listed = re.search(r"The command-line tool: `kernelopt ([a-z|]+)`", readme)
    assert listed is not None, "the README no longer lists the commands"
    [commands] = [a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)]
    assert listed[1].split("|") == list(commands.choices)

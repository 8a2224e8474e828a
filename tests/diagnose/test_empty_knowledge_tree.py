"""A knowledge tree that holds no entries is said in the diagnosis' warnings: a mistyped
folder would otherwise answer with the built-in entries alone, without a word."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from kernelopt.diagnose import diagnose

REPO = Path(__file__).resolve().parents[2]
LOG = REPO / "examples" / "logs" / "mla-decode-plateau"


def test_an_empty_tree_is_warned_of_once(tmp_path: Path) -> None:
    (tmp_path / "stray.md").write_text("# notes\n")
    warnings = [w for w in diagnose(LOG, catalog=tmp_path).warnings if "holds no entries" in w]
    assert warnings == [
        f"knowledge tree {tmp_path} holds no entries (.md files in optimizations/, "
        "anti-patterns/ or languages/<language>/); the built-in entries answer alone"
    ]


def test_the_command_line_says_it_too(tmp_path: Path) -> None:
    command = [sys.executable, "-m", "kernelopt", "diagnose", str(LOG)]
    done = subprocess.run(
        [*command, "--knowledge", str(tmp_path), "--json"],
        capture_output=True,
        text=True,
        check=False,
    )
    warnings = json.loads(done.stdout)["warnings"]
    assert sum("holds no entries" in w for w in warnings) == 1


def test_the_built_in_catalog_gives_no_such_warning() -> None:
    assert not [w for w in diagnose(LOG).warnings if "holds no entries" in w]

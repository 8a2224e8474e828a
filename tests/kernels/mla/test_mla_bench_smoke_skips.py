"""``benchmarks/mla_decode.py --smoke`` names the strategies and peers it leaves out.

On the CPU the smoke run keeps the torch eager peer and the strategies Triton's interpreter
can run; ``--smoke --peers flashmla`` used to drop FlashMLA (and ``seesaw`` likewise)
without a word, while ``--kv fp8`` printed a "skipping" line for what it leaves out.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]


def test_smoke_names_what_it_skips() -> None:
    env = dict(os.environ, TRITON_INTERPRET="1", PYTHONPATH=str(REPO))
    argv = ["--smoke", "--strategies", "seesaw", "--peers", "flashmla,eager,compile"]
    done = subprocess.run(
        [sys.executable, "benchmarks/mla_decode.py", *argv],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.splitlines()
    skipping = [line for line in lines if line.startswith("--smoke: skipping ")]
    assert len(skipping) == 1, done.stdout
    named = skipping[0].removeprefix("--smoke: skipping ").split(" (")[0]
    assert named.split(", ") == ["seesaw", "flashmla", "compile"]
    assert any(line.startswith("| smoke s=1 h=16 | torch_eager |") for line in lines)

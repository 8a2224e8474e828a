"""Commands and names the MLA pages give work as written on this kernel's own files.

The devlog page's profile command left out ``--impl`` and ``--mode``, so on
``benchmarks/results/mla_decode.jsonl`` (six implementations, each timed cold and in CUDA
graphs) it stopped with a usage error; docs/mla.md named ``default_config`` as if
``kernelopt.kernels.mla`` exported it.
"""

from __future__ import annotations

import importlib
import inspect
import re
import shlex
from pathlib import Path

import pytest

from kernelopt import cli

REPO = Path(__file__).resolve().parents[3]
ROWS = REPO / "benchmarks" / "results" / "mla_decode.jsonl"


def _profile_command() -> list[str]:
    """The words of the profile command in docs/kernels/README.md's "Updating it"."""
    text = (REPO / "docs" / "kernels" / "README.md").read_text(encoding="utf-8")
    section = text[text.index("## Updating it") :]
    [command] = re.findall(r"`(kernelopt report profile --rows [^`]*)`", section, re.S)
    return shlex.split(" ".join(command.split()))


def _on_the_mla_rows(words: list[str], devlog: Path) -> list[str]:
    """``words`` with the page's placeholders filled for the split-KV rows of the MLA file."""
    values = {
        "FILE.jsonl": str(ROWS),
        "K": "mla_decode",
        "V": "split_kv",
        "IMPL": "kernelopt_split_kv",
        "docs/kernels/K.md": str(devlog),
    }
    return [values.get(word, word) for word in words[1:]]


def test_the_devlog_page_profile_command_runs_on_the_mla_rows(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    words = _profile_command()
    assert words[words.index("--mode") + 1] == "graph"  # the timing the tables hold
    devlog = tmp_path / "mla_decode.md"
    assert cli.main(_on_the_mla_rows(words, devlog)) == 0, capsys.readouterr().err
    table = devlog.read_text(encoding="utf-8")
    assert "### split_kv" in table
    assert "| split_kv | b=32 s=1 t=4096 h=16 |" in table


@pytest.mark.parametrize(
    ("left_out", "refusal"),
    [
        ("--impl", "(choose one with --impl)"),
        ("--mode", "(choose the mode with mode=, --mode on the command line)"),
    ],
)
def test_the_page_says_why_each_option_is_there(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], left_out: str, refusal: str
) -> None:
    words = _on_the_mla_rows(_profile_command(), tmp_path / "mla_decode.md")
    at = words.index(left_out)
    del words[at : at + 2]
    assert cli.main(words) == 2
    assert refusal in capsys.readouterr().err
    page = " ".join((REPO / "docs" / "kernels" / "README.md").read_text("utf-8").split())
    assert refusal in page


def test_mla_page_names_default_config_where_it_is() -> None:
    text = " ".join((REPO / "docs" / "mla.md").read_text(encoding="utf-8").split())
    named = re.findall(r"`([\w.]*default_config)\(([^)`]*)\)`", text)
    assert {name for name, _ in named} == {
        "kernelopt.kernels.mla.split_kv.default_config",
        "kernelopt.kernels.mla.seesaw.default_config",
    }
    for name, written in named:
        module, _, function = name.rpartition(".")
        signature = inspect.signature(getattr(importlib.import_module(module), function))
        params = [p.name if p.default is p.empty else f"{p.name}={p.default!r}" for p in
                  signature.parameters.values()]  # fmt: skip
        keyword = [p.kind is p.KEYWORD_ONLY for p in signature.parameters.values()]
        if any(keyword):
            params.insert(keyword.index(True), "*")
        assert written == ", ".join(params), name

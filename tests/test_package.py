"""The package's promises: cheap torch-free import, a complete __all__, the CLI, errors."""

from __future__ import annotations

import json
import pkgutil
import re
import subprocess
import sys
from pathlib import Path

import pytest

import kernelopt
from kernelopt import cli
from kernelopt._errors import FormatError, InputError, KernelOptError, expected

TORCH_FREE = (
    "kernelopt",
    "kernelopt.catalog",
    "kernelopt.diagnose",
    "kernelopt.workload",
    "kernelopt.experiments",
    "kernelopt.workflow",
)


@pytest.mark.parametrize("module", TORCH_FREE)
def test_core_imports_without_torch_or_triton(module: str) -> None:
    code = (
        f"import importlib, sys; importlib.import_module({module!r}); "
        "from kernelopt import diagnose, catalog; "
        "bad = [m for m in ('torch', 'triton', 'numpy') if m in sys.modules]; "
        "print(','.join(bad))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "", f"{module} imported {out.stdout.strip()}"


def test_all_is_complete_and_resolves() -> None:
    subpackages = {
        m.name
        for m in pkgutil.iter_modules(kernelopt.__path__)
        if not m.name.startswith("_") and m.name != "cli"
    }
    assert subpackages <= set(kernelopt.__all__)
    for name in kernelopt.__all__:
        assert getattr(kernelopt, name) is not None


def test_unknown_attribute_raises() -> None:
    with pytest.raises(AttributeError):
        _ = kernelopt.not_a_module  # type: ignore[attr-defined]


def test_error_messages_read_expected_got() -> None:
    assert expected("head dim 576", 512) == "Expected head dim 576, got 512"
    assert expected("x", "y", where="q") == "q: Expected x, got y"
    error = FormatError("Expected a table, got text", path="a.md", line=3, section="Evidence")
    assert str(error) == "a.md:3 [Evidence]: Expected a table, got text"
    assert isinstance(error, KernelOptError) and isinstance(error, ValueError)
    assert issubclass(InputError, ValueError)


def test_cli_help_lists_subcommands() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "kernelopt", "--help"], capture_output=True, text=True, check=True
    )
    for command in ("catalog", "diagnose", "inspect", "bench"):
        assert command in out.stdout


def test_cli_without_command_is_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main([]) == 2


def test_cli_unknown_option_exits_2() -> None:
    with pytest.raises(SystemExit) as raised:
        cli.main(["--no-such-flag"])
    assert raised.value.code == 2


def test_print_json_roundtrips(capsys: pytest.CaptureFixture[str]) -> None:
    from kernelopt._cli_util import print_json

    print_json({"a": [1, 2], "b": "µs"})
    assert json.loads(capsys.readouterr().out) == {"a": [1, 2], "b": "µs"}


def test_cli_says_what_a_file_did_to_a_reader_without_a_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    task = tmp_path / "task.md"
    task.write_bytes(b"## Optimization Task: k a -> b\n\xe9\n")
    assert cli.main(["report", "task", str(task)]) == 1  # a hand-off that did not parse
    err = capsys.readouterr().err
    assert "Expected UTF-8 text" in err and str(task) in err

    # Any other trouble a file gives (here a permission) is exit 2 with the file named.
    def refuse(path: str) -> str:
        raise PermissionError(13, "Permission denied", path)

    monkeypatch.setattr("kernelopt.workflow._cli._read", refuse)
    assert cli.main(["report", "task", str(task)]) == 2
    err = capsys.readouterr().err
    assert f"Expected a file kernelopt can read or write, got {task}: Permission denied" in err


REPO = Path(__file__).resolve().parents[1]


def shown_lines_match(shown: list[str], printed: list[str]) -> bool:
    """Whether ``printed`` starts as ``shown`` says: lines in order, where a line ``…``
    stands for any number of lines and ``…`` inside a line for any text."""
    at, skipping = 0, False
    for line in shown:
        if line == "…":
            skipping = True
            continue
        pattern = re.compile(".*".join(re.escape(part.strip()) for part in line.split("…")))
        while at < len(printed) and not pattern.fullmatch(printed[at].strip()):
            if not skipping:
                return False
            at += 1
        if at == len(printed):
            return False
        at, skipping = at + 1, False
    return True


def test_the_shown_lines_matcher_refuses_a_changed_line() -> None:
    printed = ["# Plan", "", "Best so far: 273.2 us (exp 5).", "a", "b", "- [x] 5. Missing X"]
    assert shown_lines_match(["# Plan", "", "Best so far: 273.2 us …", "…", "- [x] 5. …"], printed)
    assert not shown_lines_match(["# Plan", "", "Best so far: 270.0 us …"], printed)
    assert not shown_lines_match(["# Plan", "- [x] 5. …"], printed)  # a gap needs its …


def test_readme_quickstart_diagnosis_starts_as_shown(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    command = re.search(r"&& kernelopt (diagnose \S+)\n", readme)
    assert command is not None
    block = re.search(r"The diagnosis starts:\n\n```\n(.*?)```", readme, re.S)
    assert block is not None
    monkeypatch.chdir(REPO)  # the command runs from the checkout's root
    assert cli.main(command[1].split()) == 1  # findings
    printed = capsys.readouterr().out.splitlines()
    shown = block[1].rstrip("\n").split("\n")
    assert shown_lines_match(shown, printed), "\n".join(printed[:40])


FLASHMLA_ANCHORS = REPO.parent / "shared" / "anchors" / "h200-2026-12-02-flashmla.json"


def flashmla_figures(readme: str) -> list[float]:
    """The FlashMLA times the README compares ``seesaw`` with, where it says what they are."""
    text = " ".join(readme.split())
    found = re.search(
        r"FlashMLA's anchors [^:]*? are ([\d.]+), ([\d.]+), ([\d.]+) and ([\d.]+) µs, the "
        r"better of its L2-flushed and CUDA-graph medians",
        text,
    )
    assert found is not None, "the README no longer says what FlashMLA's figures are"
    return [float(v) for v in found.groups()]


def test_readme_flashmla_figures_are_the_better_of_its_two_anchor_medians() -> None:
    from .conftest import require_shared

    anchors = json.loads(
        require_shared(FLASHMLA_ANCHORS, "the H200 FlashMLA anchors").read_text("utf-8")
    )
    rows = {(r["s"], r["h"]): r for r in anchors["rows"] if r["impl"] == "flashmla"}
    points = ((1, 128), (1, 16), (16, 128), (16, 16))  # the README table's order
    best = [round(min(rows[p]["us_events"], rows[p]["us_graph"]), 1) for p in points]
    assert flashmla_figures((REPO / "README.md").read_text(encoding="utf-8")) == best

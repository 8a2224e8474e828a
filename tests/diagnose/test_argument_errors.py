"""Errors of diagnose's arguments name the argument (or the command-line option) and, for
a family, the aliases, as ``kernelopt catalog list --family`` does."""

from __future__ import annotations

from pathlib import Path

import pytest

from kernelopt._errors import InputError
from kernelopt.diagnose import diagnose
from kernelopt.diagnose.engine import diagnose_log

from .conftest import exp, log_of

_SUMMARY = (
    "# Experiments Summary\n\n| Exp | Description | Latency | Unit | Correct | Status |\n"
    "|---|---|---|---|---|---|\n| 1 | baseline | 10.0 | us | PASS | BASELINE |\n"
    "| 2 | fused | 5.0 | us | PASS | KEPT |\n"
)


def _log(root: Path) -> Path:
    (root / "experiments").mkdir(parents=True)
    (root / "experiments" / "summary.md").write_text(_SUMMARY, encoding="utf-8")
    return root


def test_an_unknown_family_names_the_argument_and_the_aliases(tmp_path: Path) -> None:
    with pytest.raises(InputError) as error:
        diagnose(_log(tmp_path / "log"), family="bogus")
    message = str(error.value)
    assert message.startswith("family: Expected a kernel family among any, attention, ")
    assert "(or matmul, mm, bmm" in message and message.endswith("got 'bogus'")
    # An alias reads as its family.
    assert diagnose(tmp_path / "log", family="matmul").summary.family == "gemm"


def test_catalog_and_params_errors_name_their_argument(tmp_path: Path) -> None:
    root = _log(tmp_path / "log")
    with pytest.raises(InputError, match=r"^catalog: Expected a knowledge directory"):
        diagnose(root, catalog=tmp_path / "nowhere")
    with pytest.raises(InputError, match=r"^params: Expected a DiagnoseParams, got dict"):
        diagnose(root, params={})  # type: ignore[arg-type]
    with pytest.raises(InputError, match=r"^params: Expected a DiagnoseParams, got dict"):
        diagnose_log(log_of([exp(1, 1.0)]), params={})  # type: ignore[arg-type]


def test_the_command_names_its_options(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from kernelopt import cli

    root = str(_log(tmp_path / "log"))
    assert cli.main(["diagnose", root, "--family", "bogus"]) != 0
    err = capsys.readouterr().err
    assert "error: --family: Expected a kernel family among any, " in err
    assert "(or matmul, mm, bmm" in err
    assert cli.main(["diagnose", root, "--knowledge", str(tmp_path / "nowhere")]) != 0
    assert "error: --knowledge: Expected a knowledge directory" in capsys.readouterr().err

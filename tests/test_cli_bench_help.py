"""`kernelopt bench --help` promises what its subcommands do, and points to the rest."""

from __future__ import annotations

import pytest

from kernelopt.cli import main


def test_bench_help_names_its_commands_and_the_python_api(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # It once said it would "place results on the roofline", which only the Python
    # API does: a user looked for a subcommand that is not there.
    with pytest.raises(SystemExit) as stopped:
        main(["bench", "--help"])
    assert stopped.value.code == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "ceilings" in text and "MLA decode" in text
    assert "kernelopt.bench: measure, Roofline, compare" in text


def test_top_level_help_describes_bench_as_its_commands(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "bench measure this GPU's ceilings and time kernelopt's MLA decode kernels" in text

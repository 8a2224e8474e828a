"""kernelopt.workflow: a complete curated __all__, a cheap import, both subcommands."""

from __future__ import annotations

import subprocess
import sys

import kernelopt.workflow as workflow
from kernelopt.cli import build_parser


def test_all_is_complete_and_resolves() -> None:
    public = {
        name
        for name, value in vars(workflow).items()
        if not name.startswith("_")
        and getattr(value, "__module__", "").startswith("kernelopt.")
        and not isinstance(value, type(sys))
    }
    assert public <= set(workflow.__all__)
    for name in workflow.__all__:
        assert getattr(workflow, name) is not None


def test_import_is_cheap() -> None:
    code = (
        "import sys, kernelopt.workflow; "
        "print(','.join(m for m in ('torch', 'triton', 'numpy') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_learn_and_report_are_registered() -> None:
    parser = build_parser()
    assert parser.parse_args(["learn", "--before", "a", "--after", "b", "--entry", "x"]).handler
    assert parser.parse_args(["report", "task", "t.md", "--check"]).check

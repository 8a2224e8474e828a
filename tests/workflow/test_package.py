"""kernelopt.workflow: a complete curated __all__, a lazy import, both subcommands."""

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
    # Every public name has a home module to load from, and nothing else does.
    assert set(workflow._HOMES) == set(workflow.__all__)
    assert set(dir(workflow)) >= set(workflow.__all__)


def _fresh(code: str) -> str:
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return out.stdout.strip()


def test_names_load_on_first_use() -> None:
    loaded = _fresh(
        "import sys, kernelopt.workflow; "
        "print(sorted(m for m in sys.modules if m.startswith('kernelopt.')))"
    )
    assert loaded == "['kernelopt._errors', 'kernelopt.workflow']"
    # Reading an optimization task needs no benchmark code, catalog or diagnosis rules.
    heavy = _fresh(
        "import sys; from kernelopt.workflow import parse_task; "
        "print([m for m in ('kernelopt.bench', 'kernelopt.catalog', 'kernelopt.diagnose') "
        "if m in sys.modules])"
    )
    assert heavy == "[]"


def test_the_learn_module_does_not_hide_the_learn_function() -> None:
    # Importing the submodule first binds it on the package under the function's name.
    kind = _fresh(
        "import kernelopt.workflow.learn; from kernelopt.workflow import learn; "
        "import kernelopt.workflow as w; print(type(learn).__name__, type(w.learn).__name__)"
    )
    assert kind == "function function"


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

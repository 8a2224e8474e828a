"""benchmarks/buffers_overhead.py replaces its --out only where it holds this script's rows:
any other file is refused before anything is timed, and left as it was."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
QUICK = ["--device", "cpu", "--calls", "2", "--repeats", "2"]


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "buffers_overhead", BENCHMARKS / "buffers_overhead.py"
    )
    assert spec is not None and spec.loader is not None
    if str(BENCHMARKS) not in sys.path:  # run as files, the scripts find _common beside them
        sys.path.append(str(BENCHMARKS))
    module = importlib.util.module_from_spec(spec)
    sys.modules["buffers_overhead"] = module  # attrs looks the module up for the class
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ('{"op": "mla_decode", "impl": "v1"}\n', "line 1 is no row of buffers_overhead.py"),
        ("notes\n", "line 1 is no JSON object"),
    ],
    ids=["bench-row", "text"],
)
def test_a_file_of_other_rows_is_refused_and_kept(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, why: str
) -> None:
    # It was replaced by the script's rows without a word.
    out = tmp_path / "rows.jsonl"
    out.write_text(text, encoding="utf-8")
    with pytest.raises(SystemExit) as stopped:
        _script().main([*QUICK, "--out", str(out)])
    assert stopped.value.code == 2
    err = capsys.readouterr().err
    assert "argument --out: Expected a new file, or a file of buffers_overhead.py's rows" in err
    assert why in err
    assert out.read_text(encoding="utf-8") == text


def test_its_own_rows_are_replaced(tmp_path: Path) -> None:
    out = tmp_path / "rows.jsonl"
    main = _script().main
    assert main([*QUICK, "--out", str(out)]) == 0
    assert main([*QUICK, "--out", str(out)]) == 0
    assert len(out.read_text(encoding="utf-8").splitlines()) == 15  # one run's rows
    assert _script().foreign_rows(BENCHMARKS / "results" / "buffers_overhead.jsonl") is None

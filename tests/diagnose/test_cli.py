"""`kernelopt diagnose`: exit codes, JSON, the written plan, --until/--family/--knowledge."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from kernelopt import cli

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "logs"
MLA = str(EXAMPLES / "mla-decode-plateau")
HEALTHY = str(EXAMPLES / "healthy-run")


def test_exit_codes(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert cli.main(["diagnose", HEALTHY]) == 0
    out = capsys.readouterr().out
    assert out.startswith("# Plan: healthy-run") and out.count("- [ ] ") == 9
    assert cli.main(["diagnose", MLA]) == 1
    assert "- [x] 1. Repetition loop" in capsys.readouterr().out
    assert cli.main(["diagnose", str(tmp_path / "missing")]) == 2
    err = capsys.readouterr().err
    assert "Expected an existing log directory" in err and "Traceback" not in err
    with pytest.raises(SystemExit) as negative:
        cli.main(["diagnose", MLA, "--until", "-1"])
    assert negative.value.code == 2
    assert "argument --until: Expected an int >= 0, got -1" in capsys.readouterr().err
    # An empty directory (or a mistyped one holding other files) is not a healthy effort.
    assert cli.main(["diagnose", str(tmp_path)]) == 2
    captured = capsys.readouterr()
    assert "no experiments found" in captured.out and "Nothing to judge" in captured.out
    assert "got no experiments" in captured.err and "No pathology found" not in captured.out
    with pytest.raises(SystemExit) as usage:
        cli.main(["diagnose", MLA, "--until", "x"])
    assert usage.value.code == 2


def test_json_shape(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["diagnose", MLA, "--json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert set(data) >= {"findings", "unread", "summary", "checks", "root_causes"}
    first = data["findings"][0]
    assert set(first) >= {
        "pathology",
        "experiments",
        "severity",
        "confidence",
        "evidence",
        "actions",
    }
    assert first["pathology"] == "missing_fundamental" and first["severity"] == "high"
    assert all(
        set(e) == {"quote", "source", "experiments"}
        for f in data["findings"]
        for e in f["evidence"]
    )
    assert data["summary"]["best"]["experiment"] == 5 and data["unread"] == []


def test_write_plan_until_family_knowledge(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    plan = tmp_path / "out" / "plan.md"
    assert cli.main(["diagnose", MLA, "--until", "5", "--write-plan", str(plan)]) == 1
    text = plan.read_text()
    printed = capsys.readouterr().out
    assert "as it stood before exp 5" in text
    # The file is the printed plan, its catalog links made to resolve from where it lies.
    links = re.findall(r"\]\(([^)]+\.md)\)", text)
    assert links and all((plan.parent / link).is_file() for link in links)
    assert re.sub(r"\]\([^)]+\)", "]()", text) == re.sub(r"\]\([^)]+\)", "]()", printed)
    # Printed, the links resolve from the working folder, where the user stands.
    shown = re.findall(r"\]\(([^)]+\.md)\)", printed)
    assert shown and all((Path.cwd() / link).is_file() for link in shown)
    assert any(link.endswith("/split-kv-flash-decoding.md") for link in shown)
    assert "- [ ] 2. Local minimum" in text
    # The family decides the fundamentals: read as plain attention (online softmax), the
    # plateau's kernel lacks none; as MLA decode it lacks split-KV (test_json_shape).
    assert cli.main(["diagnose", MLA, "--family", "attention", "--json"]) == 1
    data = json.loads(capsys.readouterr().out)
    found = [f["pathology"] for f in data["findings"]]
    assert "missing_fundamental" not in found and "buffer_persistence" in found
    knowledge = tmp_path / "knowledge"
    knowledge.mkdir()
    assert cli.main(["diagnose", HEALTHY, "--knowledge", str(knowledge)]) == 0
    capsys.readouterr()
    assert cli.main(["diagnose", HEALTHY, "--knowledge", str(tmp_path / "nope")]) == 2
    # An unfinished entry in the tree is left out and reported; the rest still counts.
    assert cli.main(["catalog", "new", "Tile Swap", "--kind", "optimization", "--dir",
                     str(knowledge)]) == 0  # fmt: skip
    capsys.readouterr()
    assert cli.main(["diagnose", MLA, "--knowledge", str(knowledge), "--json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert "missing_fundamental" in [f["pathology"] for f in data["findings"]]
    (left_out,) = [u for u in data["unread"] if "tile-swap.md" in u["path"]]
    assert left_out["reason"].startswith("knowledge tree entry left out: Expected the placeholder")
    # Families are spelled as the catalog spells them; an unknown one is refused, since
    # "every fundamental of 'nonsense' is tried" would be vacuous.
    assert cli.main(["diagnose", MLA, "--family", "MLA_decode", "--json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert "split-kv-flash-decoding" in json.dumps(data["findings"])
    assert cli.main(["diagnose", MLA, "--family", "nonsense"]) == 2
    err = capsys.readouterr().err
    assert "Expected a kernel family among any, attention," in err and "got 'nonsense'" in err
    assert cli.main(["diagnose", MLA, "--write-plan", str(tmp_path)]) == 2
    assert "Expected a file path to write" in capsys.readouterr().err


def test_an_empty_plan_path_is_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # An empty --write-plan read as none: exit 0 and no plan, without a word.
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as usage:
        cli.main(["diagnose", HEALTHY, "--write-plan", ""])
    assert usage.value.code == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (
        "kernelopt diagnose: error: argument --write-plan: "
        "Expected a file path to write, got an empty path\n"
    )
    assert list(tmp_path.iterdir()) == []


def test_a_file_where_the_plan_folder_goes_is_named(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    blocker = tmp_path / "notes.txt"
    blocker.write_text("x")
    assert cli.main(["diagnose", HEALTHY, "--write-plan", str(blocker / "plan.md")]) == 2
    err = capsys.readouterr().err
    assert f"Expected a folder that can be created, got {blocker}, a file\n" in err
    assert "File exists" not in err and blocker.read_text() == "x"


def test_console_script_runs_without_torch_import() -> None:
    code = (
        f"import sys; from kernelopt import cli; rc = cli.main(['diagnose', {MLA!r}, '--json']);"
        "print(rc, [m for m in ('torch', 'triton', 'numpy') if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip().splitlines()[-1] == "1 []"


def test_python_m_inside_a_log_does_not_import_its_files(tmp_path: Path) -> None:
    # `python -m` puts the working directory first on sys.path: a log holding an attr.py
    # would otherwise be imported (and run) in place of the attrs library.
    import os
    import shutil

    log = tmp_path / "log"
    shutil.copytree(MLA, log)
    marker = tmp_path / "EXECUTED"
    for name in ("attr", "cattrs", "numpy", "kernelopt_cli_probe"):
        (log / f"{name}.py").write_text(f"open({str(marker)!r}, 'a').write({name!r})\n")
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2]))
    done = subprocess.run(
        [sys.executable, "-m", "kernelopt", "diagnose", "."],
        cwd=log,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1, done.stderr
    assert "- [x] 1. Repetition loop" in done.stdout
    assert not marker.exists(), marker.read_text()


def test_a_failed_run_keeps_the_plan_already_written(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    plan = tmp_path / "plan.md"
    plan.write_text("# the plan of the last real diagnosis\n", encoding="utf-8")
    for log in (EXAMPLES / "measurements", tmp_path / "empty"):  # rows, but no attempt
        log.mkdir(exist_ok=True)
        assert cli.main(["diagnose", str(log), "--write-plan", str(plan)]) == 2
        assert "with at least one attempt" in capsys.readouterr().err
        assert plan.read_text("utf-8") == "# the plan of the last real diagnosis\n"


# Files Python itself would run if the log's folder were on sys.path or a site directory,
# and standard-library names the package imports before ``__main__`` cleans sys.path.
_HOOKS = ("conftest", "__init__", "sitecustomize", "usercustomize", "attr", "numpy", "typing")


@pytest.mark.parametrize("entry", ["python-m", "script", "in-process"])
def test_diagnosing_a_log_never_runs_its_code(
    tmp_path: Path, entry: str, capsys: pytest.CaptureFixture[str]
) -> None:
    import os
    import shutil

    log = tmp_path / "log"
    shutil.copytree(MLA, log)
    marker = tmp_path / "EXECUTED"
    hook = f"open({str(marker)!r}, 'a').write(__name__ + ' ')\n"
    for folder in (log, log / "experiments", log / "experiments" / "exp_1"):
        folder.mkdir(exist_ok=True)
        for name in _HOOKS:
            (folder / f"{name}.py").write_text(hook, encoding="utf-8")
        (folder / "hook.pth").write_text(f"import os; {hook}", encoding="utf-8")
    if entry == "in-process":
        assert cli.main(["diagnose", str(log)]) == 1
        assert "- [x] 1. Repetition loop" in capsys.readouterr().out
    else:
        script = Path(sys.executable).with_name("kernelopt")
        if entry == "script" and not script.exists():
            pytest.skip(f"no console script at {script}")
        argv = [str(script)] if entry == "script" else [sys.executable, "-m", "kernelopt"]
        env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2]))
        for cwd, where in ((log, "."), (tmp_path, str(log))):
            done = subprocess.run(
                [*argv, "diagnose", where],
                cwd=cwd,
                env=env,
                capture_output=True,
                text=True,
                timeout=120,
            )
            assert done.returncode == 1, done.stderr
            assert "- [x] 1. Repetition loop" in done.stdout
    assert not marker.exists(), marker.read_text()

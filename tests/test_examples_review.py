"""examples/ as a new user meets it: the MLA decode steps pointed at a directory they did
not start, what step 3 says about the times it prints, and what the docs say about the
example logs (the commands they show, the plan they print, the scripts beside them).

The walk-through itself (all eight steps on one log, and the log they leave) is
tests/test_examples.py's; the example logs' own findings are tests/diagnose/test_examples.py's.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from kernelopt import CatalogError, cli
from kernelopt.catalog import Catalog

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "examples" / "mla_decode"
LOGS = REPO / "examples" / "logs"
FROZEN = REPO / "docs" / "kernels" / "mla_decode" / "experiments"  # a recorded log, as written


def _env() -> dict[str, str]:
    """A child's environment: the repository importable, Triton's interpreter on."""
    env = dict(os.environ)
    env["TRITON_INTERPRET"] = "1"
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH", "")) if p)
    return env


def _run(script: str, log: Path) -> subprocess.CompletedProcess[str]:
    """Run one step on the CPU path, as the README shows it, with ``--log log``."""
    return subprocess.run(
        [sys.executable, str(EXAMPLES / script), "--cpu", "--log", str(log)],
        capture_output=True,
        text=True,
        env=_env(),
        cwd=REPO,
        timeout=600,
        check=False,
    )


def _files(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` by its relative path, with its bytes."""
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


# ---------------------------------------------------------------------------- the steps


@pytest.mark.parametrize(
    ("script", "left_out"),
    [
        # Every earlier step's product is there, step 7's is not: it took the log for one
        # of its own, wrote its marker into it and stopped with a traceback.
        ("07_learn.py", ()),
        # An effort three experiments in, as the seed layout keeps it: step 5 ran its A/B
        # and wrote its exp_4 and benchmark rows into someone else's log.
        ("05_buffers_and_graphs.py", ("exp_4", "exp_5", "exp_6")),
    ],
)
def test_a_step_leaves_a_log_it_did_not_start_as_it_was(
    tmp_path: Path, script: str, left_out: tuple[str, ...]
) -> None:
    log = tmp_path / "effort"
    shutil.copytree(LOGS / "mla-decode-plateau", log)
    for name in left_out:
        shutil.rmtree(log / "experiments" / name)
    before = _files(log)
    done = _run(script, log)
    assert done.returncode != 0, done.stdout[-2000:]
    assert "Traceback" not in done.stderr, done.stderr[-2000:]
    assert f"Expected an empty directory or a log these examples wrote at {log}" in done.stderr
    assert _files(log) == before


def test_a_log_path_under_a_file_is_named_not_a_traceback(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("mine\n", encoding="utf-8")
    log = tmp_path / "notes.txt" / "log"
    words = f"Expected a directory that can be made for --log, got {log}"
    first = _run("01_reference_and_workload.py", log)
    assert first.returncode != 0
    assert "Traceback" not in first.stderr and words in first.stderr, first.stderr[-2000:]
    # A later step runs step 1 first and shows why it failed.
    later = _run("03_diagnose.py", log)
    assert later.returncode != 0
    assert "Traceback" not in later.stderr and words in later.stderr, later.stderr[-2000:]
    assert "Expected step 1 to succeed" in later.stderr
    assert (tmp_path / "notes.txt").read_text(encoding="utf-8") == "mine\n"


@pytest.mark.slow
def test_step3_labels_the_time_it_prints_as_a_cpu_timing(tmp_path: Path) -> None:
    # The guide: on the CPU path "every timing they print is labelled as a CPU timing".
    done = _run("03_diagnose.py", tmp_path / "log")  # runs steps 1 and 2 first
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    best = re.search(r"^   best so far: \S+ us \(exp \d+\)\n(.*)$", done.stdout, re.M)
    assert best is not None, done.stdout[-3000:]
    assert best[1].startswith("   [CPU] ") and "host timings" in best[1]


def test_the_readme_points_at_step_8_for_the_kernel_it_times() -> None:
    from kernelopt.kernels.mla import STRATEGIES

    script = (EXAMPLES / "08_fp8_cache.py").read_text(encoding="utf-8")
    timed = set(re.findall(r'strategy="(\w+)"', script))
    assert timed == {"split_kv"}
    text = " ".join((REPO / "README.md").read_text(encoding="utf-8").split())
    sentences = [
        s for s in re.split(r"(?<=[.)])\s+(?=[`A-Z])", text) if "step 8 of the tutorials" in s
    ]
    assert len(sentences) == 1
    # The sentence says what step 8 measures: no kernel it never runs (seesaw's FP8 read).
    assert set(re.findall(r"`(\w+)`", sentences[0])) & set(STRATEGIES) == timed, sentences[0]


# ---------------------------------------------------------------------------- the logs' docs


def _markdown() -> list[Path]:
    """README.md, docs/ (but the recorded log under it) and examples/: the markdown a user reads."""
    found = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]
    found += sorted((REPO / "examples").rglob("*.md"))
    return [p for p in found if FROZEN not in p.parents]


def test_the_documented_diagnose_commands_exit_as_their_comments_say(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(REPO)  # the commands are written from the repository root
    shown = re.compile(r"^(?:\$ )?kernelopt diagnose (examples/logs/[\w.-]+)/?\s+# exit (\d)", re.M)
    commands = {
        (path.relative_to(REPO).as_posix(), log, int(code))
        for path in _markdown()
        for log, code in shown.findall(path.read_text(encoding="utf-8"))
    }
    assert {log for _, log, _ in commands} >= {
        f"examples/logs/{p.name}" for p in LOGS.iterdir() if p.is_dir()
    }
    for where, log, code in sorted(commands):
        assert cli.main(["diagnose", log]) == code, f"{where}: kernelopt diagnose {log}"
        capsys.readouterr()


def test_the_diagnose_doc_shows_the_plateau_plan_as_the_command_prints_it(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(REPO)
    assert cli.main(["diagnose", "examples/logs/mla-decode-plateau"]) == 1
    printed = capsys.readouterr().out.splitlines()
    doc = (REPO / "docs" / "diagnose.md").read_text(encoding="utf-8")
    block = re.search(r"```\n(# Plan: mla-decode-plateau — .*?)```", doc, re.S)
    assert block is not None
    lines = [line for line in block[1].splitlines() if line and line != "…"]
    assert len(lines) > 20
    for line in lines:
        # The sections after the cut are named with what they hold: each one shown must be
        # printed, unless the doc says it comes only when there is something to show.
        section = re.fullmatch(r"(## \w[\w ]*\w) {2,}\((.*)\)", line)
        if section is not None:
            assert section[2].startswith("when ") or section[1] in printed, line
        elif line.endswith(" …"):  # cut to fit the page: the printed line starts so
            assert any(p.startswith(line[:-2]) for p in printed), line
        else:
            assert line in printed, line


def test_the_catalog_doc_counts_the_markdown_files_of_examples() -> None:
    # docs/catalog.md quotes the one-line refusal of `examples/` as a knowledge tree.
    text = " ".join((REPO / "docs" / "catalog.md").read_text(encoding="utf-8").split())
    quoted = re.search(
        r"`Expected a knowledge tree at examples \(markdown only in its entry folders\), got "
        r"(\d+ markdown files outside them \(the first: [^)]+\))",
        text,
    )
    assert quoted is not None
    with pytest.raises(CatalogError) as raised:
        Catalog.load(REPO / "examples")
    assert f"got {quoted[1]}" in str(raised.value).split("\n")[0]


def test_the_measurement_scripts_check_their_kernels_on_the_cpu_as_the_readme_says() -> None:
    readme = (LOGS / "measurements" / "README.md").read_text(encoding="utf-8")
    command = r"`TRITON_INTERPRET=1 python (examples/logs/measurements/\w+\.py)`"
    scripts = re.findall(command, readme)
    assert scripts == [
        "examples/logs/measurements/mla_dev.py",
        "examples/logs/measurements/sweep2.py",
    ]
    env = _env()
    env["CUDA_VISIBLE_DEVICES"] = ""  # their check runs where torch sees no GPU
    checked = re.compile(r"\{.*\} \(([-+.\de]+), ([-+.\de]+)\)")
    for script in scripts:
        done = subprocess.run(
            [sys.executable, script],
            capture_output=True,
            text=True,
            env=env,
            cwd=REPO,
            timeout=300,
            check=False,
        )
        assert done.returncode == 0, done.stderr[-2000:]
        rows = [checked.fullmatch(line) for line in done.stdout.splitlines()]
        assert rows and all(rows), done.stdout  # no `ERR`, every row an (out, lse) pair
        errors = [float(e) for row in rows if row is not None for e in row.groups()]
        assert max(errors) < 2e-3, done.stdout  # fp16 and fp32 against float64

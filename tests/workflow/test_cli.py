"""`kernelopt learn` and `kernelopt report`: output, files written, exit codes."""

from __future__ import annotations

import argparse
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import kernelopt.workflow._cli as workflow_cli
from kernelopt.catalog import Catalog, parse_entry
from kernelopt.cli import build_parser, main
from kernelopt.workflow import (
    Change,
    NewVersion,
    OptimizationTask,
    TrialCheck,
    parse_profile,
    read_performance,
)

from .conftest import anchor_row, bench_row, snapshot, write_rows


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def runs(tmp_path: Path) -> Path:
    write_rows(tmp_path / "v1.jsonl", anchor_row("splits16", samples=40, seed=1))
    write_rows(tmp_path / "v2.jsonl", anchor_row("splits8", samples=40, seed=2))
    write_rows(tmp_path / "v3.jsonl", anchor_row("splits32"))
    write_rows(tmp_path / "same.jsonl", bench_row("v2b", 66.6))
    return tmp_path


def test_learn_records_evidence(
    capsys: pytest.CaptureFixture[str], runs: Path, knowledge: Path
) -> None:
    code, out, _ = run(
        capsys,
        "learn",
        "--before",
        str(runs / "v1.jsonl"),
        "--after",
        str(runs / "v2.jsonl"),
        "--entry",
        "split-kv-flash-decoding",
        "--knowledge",
        str(knowledge),
        "--kernel",
        "mla_decode",
    )
    assert code == 0 and out.startswith("FAST: splits8 vs splits16")
    entry = parse_entry((knowledge / "optimizations/split-kv-flash-decoding.md").read_text("utf-8"))
    assert entry.evidence[-1].rows[-1].config.startswith("mla_decode b=32 s=1 t=4096 h=16")


def test_learn_json_dry_run_and_regression(
    capsys: pytest.CaptureFixture[str], runs: Path, knowledge: Path
) -> None:
    files = snapshot(knowledge)
    code, out, _ = run(
        capsys,
        "learn",
        "--before",
        str(runs / "v2.jsonl"),
        "--after",
        str(runs / "v3.jsonl"),
        "--entry",
        "split-kv-flash-decoding",
        "--knowledge",
        str(knowledge),
        "--dry-run",
        "--json",
    )
    data = json.loads(out)
    assert code == 0 and data["action"] == "new-anti-pattern" and data["verdict"] == "SLOW"
    assert data["dry_run"] and data["entry_id"] == "split-kv-flash-decoding-regression"
    assert data["row"]["change"] == "+37.1 % (SLOW)"
    assert snapshot(knowledge) == files


def test_learn_exit_codes(capsys: pytest.CaptureFixture[str], runs: Path, knowledge: Path) -> None:
    noisy = write_rows(runs / "noisy.jsonl", bench_row("v9", 64.0, spread=0.09))
    base = write_rows(runs / "base.jsonl", bench_row("v8", 66.53, spread=0.09))
    code, out, _ = run(
        capsys,
        "learn",
        "--before",
        str(base),
        "--after",
        str(noisy),
        "--entry",
        "split-kv-flash-decoding",
        "--knowledge",
        str(knowledge),
    )
    assert code == 1 and out.startswith("UNCLEAR")
    code, out, _ = run(
        capsys,
        "learn",
        "--before",
        str(runs / "v2.jsonl"),
        "--after",
        str(runs / "same.jsonl"),
        "--entry",
        "split-kv-flash-decoding",
        "--knowledge",
        str(knowledge),
    )
    assert code == 0 and out.startswith("SAME") and "nothing recorded" in out.lower()
    code, _, err = run(
        capsys,
        "learn",
        "--before",
        str(runs / "v1.jsonl"),
        "--after",
        str(runs / "v2.jsonl"),
        "--entry",
        "nope",
        "--knowledge",
        str(knowledge),
    )
    assert code == 2 and "nope" in err
    code, _, err = run(
        capsys,
        "learn",
        "--before",
        str(runs / "missing.jsonl"),
        "--after",
        str(runs / "v2.jsonl"),
        "--entry",
        "cuda-graphs",
    )
    assert code == 2 and "no file" in err


def test_learn_names_the_option_that_allows_the_built_in_tree(
    capsys: pytest.CaptureFixture[str], runs: Path
) -> None:
    from kernelopt.catalog import BUILTIN_ROOT

    shipped = snapshot(BUILTIN_ROOT)
    argv = ["learn", "--before", str(runs / "v1.jsonl"), "--after", str(runs / "v2.jsonl")]
    argv += ["--entry", "cuda-graphs", "--knowledge", str(BUILTIN_ROOT), "--dry-run"]
    code, out, err = run(capsys, *argv)
    assert (code, out) == (2, "") and "--allow-builtin" in err, err
    assert snapshot(BUILTIN_ROOT) == shipped


def test_learn_dry_run_predicts_the_real_run_on_host_clock_rows(
    capsys: pytest.CaptureFixture[str], runs: Path, knowledge: Path
) -> None:
    # What an example run on a machine without a GPU logs: interpreter timings.
    cpu = write_rows(
        runs / "cpu.jsonl",
        bench_row("triton_split_kv", 80.0, samples=8, seed=1, backend="cpu-perf-counter"),
        bench_row("triton_hopper", 50.0, samples=8, seed=2, backend="cpu-perf-counter"),
    )
    argv = [
        "learn",
        "--before",
        str(cpu),
        "--after",
        str(cpu),
        "--before-impl",
        "triton_split_kv",
        "--after-impl",
        "triton_hopper",
        "--entry",
        "split-kv-flash-decoding",
        "--knowledge",
        str(knowledge),
    ]
    files = snapshot(knowledge)
    for extra in ([], ["--dry-run"]):
        code, out, err = run(capsys, *argv, *extra)
        assert (code, out) == (2, "") and "Expected GPU timings (CUDA events)" in err
    for extra in (["--dry-run"], []):
        code, out, _ = run(capsys, *argv, *extra, "--allow-host-clock")
        assert code == 0 and out.startswith("FAST: triton_hopper vs triton_split_kv")
        assert ("Would record" in out) == bool(extra)
        assert "as allowed" in out and "needs allow_host_clock" not in out
        if extra:
            assert snapshot(knowledge) == files
    assert snapshot(knowledge) != files


def test_report_profile_from_rows_and_devlog(
    capsys: pytest.CaptureFixture[str], runs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KERNELOPT_CACHE_DIR", str(runs / "cache"))  # no cached ceilings
    devlog = runs / "docs" / "kernels" / "mla_decode.md"
    code, out, err = run(
        capsys,
        "report",
        "profile",
        "--rows",
        str(runs / "v2.jsonl"),
        "--kernel",
        "mla_decode",
        "--version",
        "v2",
        "--baseline",
        str(runs / "v1.jsonl"),
        "--devlog",
        str(devlog),
    )
    assert code == 0, err
    report = parse_profile(out)
    assert report.version == "v2" and report.baseline[0].previous == 74.08
    assert "1 added" in err and "| v2 | b=32 s=1 t=4096 h=16 | 66.53 us |" in devlog.read_text(
        "utf-8"
    )
    code, out, _ = run(
        capsys,
        "report",
        "profile",
        "--rows",
        str(runs / "v2.jsonl"),
        "--kernel",
        "mla_decode",
        "--version",
        "v2",
        "--json",
    )
    assert code == 0 and json.loads(out)[0]["bottleneck"] == "Memory-bound"
    code, _, err = run(capsys, "report", "profile", "--rows", str(runs / "v2.jsonl"))
    assert code == 2 and "--kernel" in err


def test_report_profile_names_the_option_that_picks_an_implementation(
    capsys: pytest.CaptureFixture[str], runs: Path
) -> None:
    both = write_rows(runs / "both.jsonl", anchor_row("splits8"), anchor_row("splits16"))
    code, out, err = run(
        capsys, "report", "profile", "--rows", str(both), "--kernel", "k", "--version", "v9"
    )
    assert (code, out) == (2, "") and "(choose one with --impl)," in err, err
    code, out, err = run(
        capsys,
        "report",
        "profile",
        "--rows",
        str(runs / "v2.jsonl"),
        "--kernel",
        "k",
        "--version",
        "splits8",
        "--baseline",
        str(both),
    )
    assert (code, out) == (2, "")
    assert "(choose one with --baseline-impl)," in err, err


@pytest.mark.parametrize(("place", "said"), [("missing", "(missing)"), ("v2.jsonl", "(a file)")])
def test_report_check_says_what_stands_where_the_knowledge_tree_should(
    capsys: pytest.CaptureFixture[str], runs: Path, place: str, said: str
) -> None:
    task = OptimizationTask(
        kernel="k", current="v1", new_version="v2", bottleneck="b", optimizations=[Change(what="x")]
    )
    (runs / "task.md").write_text(task.render(), encoding="utf-8")
    argv = ["report", "task", str(runs / "task.md"), "--check", "--knowledge", str(runs / place)]
    code, out, err = run(capsys, *argv)
    assert (code, out) == (2, "")
    assert f"Expected a knowledge tree folder, got {runs / place} {said}" in err, err


def test_report_profile_file_check(
    capsys: pytest.CaptureFixture[str], runs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(runs)
    code, out, _ = run(
        capsys, "report", "profile", "--rows", "v2.jsonl", "--kernel", "k", "--version", "v2"
    )
    path = runs / "profile.md"
    path.write_text("Profiler says:\n\n" + out, encoding="utf-8")
    code, out, _ = run(capsys, "report", "profile", str(path), "--check")
    assert code == 0 and "OK" in out
    path.write_text(made_up_ids(runs), "utf-8")
    code, _, err = run(capsys, "report", "profile", str(path), "--check")
    assert code == 1 and "unknown entry id 'made-up-" in err
    path.write_text("## Profile: k v1 | b=1, s=1, t=1\n", encoding="utf-8")
    code, _, err = run(capsys, "report", "profile", str(path), "--check")
    assert code == 1 and "[Bottleneck]" in err and "profile.md:1" in err


def made_up_ids(runs: Path) -> str:
    from kernelopt.bench import read_rows
    from kernelopt.workflow import profile_from_rows

    [report] = profile_from_rows(read_rows(runs / "v2.jsonl"), kernel="k", version="v2")
    return report.render().replace("(`", "(`made-up-")


def test_report_reads_a_hand_off_saved_as_utf16(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # PowerShell's `>` saves UTF-16 with a byte-order mark; the hand-off is the same text.
    monkeypatch.chdir(tmp_path)
    task = OptimizationTask(
        kernel="mla_decode",
        current="v2",
        new_version="v3",
        bottleneck="Memory-bound",
        optimizations=[
            Change.of(
                Catalog.builtin().get("split-kv-flash-decoding"),
                "split in 8",
                relative_to=tmp_path / "task.md",  # a link that leads to the entry's file
            )
        ],
    )
    path = tmp_path / "task.md"
    path.write_bytes(task.render().replace("\n", "\r\n").encode("utf-16"))
    code, out, err = run(capsys, "report", "task", str(path), "--check")
    assert code == 0 and out.strip() == f"{path}: OK", err


def test_report_task_check(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    catalog = Catalog.builtin()
    task = OptimizationTask(
        kernel="mla_decode",
        current="v2",
        new_version="v3",
        bottleneck="Memory-bound",
        optimizations=[
            Change.of(
                catalog.get("split-kv-flash-decoding"),
                "split in 8",
                relative_to=tmp_path / "task.md",  # a link that leads to the entry's file
            )
        ],
    )
    good = tmp_path / "task.md"
    good.write_text(task.render(), encoding="utf-8")
    code, out, _ = run(capsys, "report", "task", str(good), "--check")
    assert code == 0 and out.strip() == f"{good}: OK"
    code, out, _ = run(capsys, "report", "task", str(good))
    assert code == 0 and out == task.render()
    code, out, _ = run(capsys, "report", "task", str(good), "--json")
    assert json.loads(out)["optimizations"][0]["entry_id"] == "split-kv-flash-decoding"
    bad = tmp_path / "bad.md"
    bad.write_text(task.render().replace("[split-kv-flash-decoding]", "[split-kv-typo]"), "utf-8")
    code, _, err = run(capsys, "report", "task", str(bad), "--check")
    assert code == 1 and "unknown entry id 'split-kv-typo'" in err
    broken = tmp_path / "broken.md"
    broken.write_text("## Optimization Task: k a -> b\n", encoding="utf-8")
    code, _, err = run(capsys, "report", "task", str(broken), "--check")
    assert code == 1 and "Current Bottleneck" in err and "broken.md:1" in err
    code, _, err = run(capsys, "report", "task", str(tmp_path / "none.md"))
    assert code == 2
    # A user tree holding the id makes it known; the link still names another file.
    tree = tmp_path / "docs" / "knowledge" / "optimizations"
    tree.mkdir(parents=True)
    text = (Path(catalog.source("split-kv-flash-decoding") or "")).read_text("utf-8")
    (tree / "split-kv-typo.md").write_text(
        text.replace("id: split-kv-flash-decoding", "id: split-kv-typo"), "utf-8"
    )
    code, _, err = run(capsys, "report", "task", str(bad), "--check")
    assert code == 1 and "unknown" not in err
    assert "its knowledge file is optimizations/split-kv-typo.md" in err


def test_report_version_check(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    version = NewVersion(
        kernel="mla_decode",
        version="v3",
        changes=[Change(what="split KV")],
        created=["kernels/v3.py"],
        correctness="PASS",
        trials=[TrialCheck(point={"b": 32, "s": 1, "t": 4096}, why="decode")],
        devlog="docs/kernels/mla_decode.md",
    )
    path = tmp_path / "v3.md"
    path.write_text(version.render(), encoding="utf-8")
    code, _, err = run(capsys, "report", "version", str(path), "--check", "--root", str(tmp_path))
    assert code == 1 and "created file kernels/v3.py does not exist" in err
    for rel in ("kernels/v3.py", "docs/kernels/mla_decode.md"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("", encoding="utf-8")
    code, out, _ = run(capsys, "report", "version", str(path), "--check", "--root", str(tmp_path))
    assert code == 0 and "OK" in out
    code, out, _ = run(capsys, "report", "version", str(path), "--json")
    assert json.loads(out)["correctness"] == "PASS"


def test_report_without_a_kind_prints_usage(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "report")
    assert code == 2 and "profile" in err


def test_cached_ceilings_fill_in_the_rates(
    capsys: pytest.CaptureFixture[str], runs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from kernelopt.bench import Ceilings
    from kernelopt.bench.roofline import save_ceilings

    monkeypatch.setenv("KERNELOPT_CACHE_DIR", str(runs / "cache"))
    # The H200 ceilings of /work/shared/anchors/h200-2026-12-02.json, as if measured here.
    save_ceilings(
        Ceilings(
            gpu="NVIDIA H200",
            copy_bytes_per_s=4.2497501013921815e12,
            matmul_flop_per_s=693.6596691456391e12,
        )
    )
    devlog = runs / "mla_decode.md"
    code, out, _ = run(
        capsys,
        "report",
        "profile",
        "--rows",
        str(runs / "v2.jsonl"),
        "--kernel",
        "mla_decode",
        "--version",
        "splits8",
        "--devlog",
        str(devlog),
    )
    assert code == 0
    assert (
        "| splits8 | b=32 s=1 t=4096 h=16 | 66.53 us | 68.6 | 2286 | 53.8% |"
        in devlog.read_text("utf-8")
    )
    # With raw samples and the ceilings, the report is profile_report's: absolute rates.
    assert "GB/s" in parse_profile(out).root_cause


def test_report_profile_refuses_a_folder_as_devlog_before_touching_it(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    exp_12 = Path(__file__).resolve().parents[2] / "docs/kernels/mla_decode/experiments/exp_12"
    folder = tmp_path / "devlog"
    folder.mkdir()
    argv = [
        "report", "profile", "--rows", str(exp_12 / "seesaw_after.jsonl"),
        "--kernel", "mla_decode", "--version", "kernelopt_seesaw", "--devlog", str(folder),
    ]  # fmt: skip
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert out == "" and f"--devlog: Expected a devlog file, got {folder}, a folder" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["devlog"]  # no lock file beside it


@pytest.mark.parametrize("root", ["missing", "v3.md"])
def test_report_version_check_refuses_a_root_that_is_no_folder(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, root: str
) -> None:
    # A mistyped --root would list every file as missing: findings that are not there.
    version = NewVersion(
        kernel="mla_decode",
        version="v3",
        changes=[Change(what="split KV")],
        created=["kernels/v3.py"],
        correctness="PASS",
        trials=[TrialCheck(point={"b": 32, "s": 1, "t": 4096}, why="decode")],
    )
    path = tmp_path / "v3.md"
    path.write_text(version.render(), encoding="utf-8")
    place = tmp_path / root
    code, out, err = run(capsys, "report", "version", str(path), "--check", "--root", str(place))
    assert (code, out) == (2, "")
    assert f"--root: Expected a folder holding the named files, got {place}" in err


_EXP_12 = Path(__file__).resolve().parents[2] / "docs/kernels/mla_decode/experiments/exp_12"
_PROFILE_MD = (
    Path(__file__).resolve().parents[2] / "examples/logs/mla-decode-plateau/experiments/profile.md"
)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        # Options of the other form would be dropped without a word: a devlog left as it was.
        ([str(_PROFILE_MD), "--devlog", "devlog.md"],
         "Expected --devlog only with --rows, got it with FILE.md"),
        ([str(_PROFILE_MD), "--baseline", "rows.jsonl", "--family", "mla-decode"],
         "Expected --baseline, --family only with --rows, got them with FILE.md"),
        (["--rows", str(_EXP_12 / "seesaw_after.jsonl"), "--kernel", "mla_decode",
          "--version", "kernelopt_seesaw", "--check"],
         "Expected --check only with FILE.md, got it with --rows"),
    ],
)  # fmt: skip
def test_report_profile_refuses_options_of_the_other_form(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    argv: list[str],
    message: str,
) -> None:
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, "report", "profile", *argv)
    assert (code, out) == (2, "") and message in err, err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("kind", "extra", "message"),
    [
        ("task", ["--knowledge", "k"], "Expected --knowledge only with --check, got it without"),
        ("version", ["--root", "r"], "Expected --root only with --check, got it without"),
        ("profile", ["--knowledge", "k"], "Expected --knowledge only with --check, got it without"),
    ],
)
def test_report_refuses_check_options_without_check(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, kind: str, extra: list[str], message: str
) -> None:
    # Read without --check, they would be dropped: the file printed, nothing checked.
    path = _PROFILE_MD
    if kind != "profile":
        path = tmp_path / f"{kind}.md"
        path.write_text("## anything\n", encoding="utf-8")
    code, out, err = run(capsys, "report", kind, str(path), *extra)
    assert (code, out) == (2, "") and message in err, err


@pytest.fixture
def two_ways(tmp_path: Path) -> Path:
    """Rows of each version timed cold, then replayed in a CUDA graph, as
    benchmarks/mla_decode.py writes them."""
    for name, cold, graph in (("before", 168.3, 48.98), ("after", 119.38, 47.08)):
        write_rows(
            tmp_path / f"{name}.jsonl",
            bench_row("seesaw", cold, mode="cold"),
            bench_row("seesaw", graph, mode="graph"),
        )
    return tmp_path


def test_mode_chooses_the_rows_timed_that_way(
    capsys: pytest.CaptureFixture[str], two_ways: Path, knowledge: Path
) -> None:
    # Without a way to choose, the last row of the point (the graph one) was always used.
    devlog = two_ways / "devlog.md"
    rows = ("--rows", str(two_ways / "after.jsonl"), "--kernel", "k", "--version", "seesaw")
    code, out, err = run(
        capsys, "report", "profile", *rows, "--mode", "cold", "--devlog", str(devlog)
    )
    assert code == 0, err
    assert parse_profile(out).stages[0].duration == 119.4
    assert "0 replaced, 1 added" in err and "| 119.4 us |" in devlog.read_text("utf-8")
    code, out, err = run(
        capsys,
        "learn",
        "--before",
        str(two_ways / "before.jsonl"),
        "--after",
        str(two_ways / "after.jsonl"),
        "--mode",
        "cold",
        "--entry",
        "split-kv-flash-decoding",
        "--knowledge",
        str(knowledge),
        "--dry-run",
        "--json",
    )
    assert code == 0, err
    assert (json.loads(out)["before"], json.loads(out)["after"]) == (168.3, 119.38)
    code, out, err = run(capsys, "report", "profile", *rows, "--mode", "hot")
    assert (code, out) == (2, "") and "mode 'hot'" in err


def test_the_devlog_gets_the_rows_the_profile_shows(
    capsys: pytest.CaptureFixture[str], two_ways: Path
) -> None:
    # Both ways of a point were written, the second replacing the first: a new devlog
    # was reported as "1 replaced, 1 added".
    devlog = two_ways / "devlog.md"
    rows = ("--rows", str(two_ways / "after.jsonl"), "--kernel", "k", "--version", "seesaw")
    # A point timed two ways is refused without --mode, as evaluate refuses it: the row
    # written last was reported, the graph time passed off as the one profiled.
    code, out, err = run(capsys, "report", "profile", *rows, "--devlog", str(devlog))
    assert (code, out) == (2, "") and "timed one way (choose the mode with mode=" in err
    assert "cold/flush, graph/flush" in err and not devlog.exists()
    code, out, err = run(
        capsys, "report", "profile", *rows, "--mode", "graph", "--devlog", str(devlog)
    )
    assert code == 0, err
    assert "0 replaced, 1 added" in err
    [row] = read_performance(devlog)
    assert row.time == parse_profile(out).stages[0].duration == 47.08


OPTION = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*")


def _subparsers(parser: argparse.ArgumentParser) -> list[argparse._SubParsersAction[Any]]:
    return [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]


def _commands(name: str) -> Iterator[argparse.ArgumentParser]:
    """The parser of ``kernelopt NAME`` and those of its subcommands, depth first."""
    stack = [_subparsers(build_parser())[0].choices[name]]
    while stack:
        parser = stack.pop()
        yield parser
        for action in _subparsers(parser):
            stack.extend(dict.fromkeys(action.choices.values()))


def _options(parser: argparse.ArgumentParser) -> set[str]:
    """The options of ``parser`` and of every subcommand below it."""
    found = {o for a in parser._actions for o in a.option_strings}
    for action in _subparsers(parser):
        for sub in action.choices.values():
            found |= _options(sub)
    return found


def _module_synopses() -> dict[str, set[str]]:
    """The options each ``kernelopt report`` form of the module docstring shows."""
    doc = workflow_cli.__doc__ or ""
    forms: list[str] = []
    for line in doc.splitlines():
        if line.strip().startswith("kernelopt "):
            forms.append(line.strip())
        elif line.startswith("        ") and forms:
            forms[-1] += " " + line.strip()
    return {
        " ".join(form.split()[:4]): set(OPTION.findall(form))
        for form in forms
        if form.startswith("kernelopt report")
    }


def test_the_module_synopsis_of_each_report_form_shows_its_options() -> None:
    # The `report profile --rows` form left out --knowledge, which suggests from a tree.
    parsers = {p.prog: p for p in _commands("report")}
    rows_only = {"--rows", *(flag for flag, _ in workflow_cli._ROWS_ONLY)}
    expected_forms = {
        "kernelopt report profile --rows": (
            "kernelopt report profile",
            {"--check"},
        ),
        "kernelopt report profile FILE.md": ("kernelopt report profile", rows_only),
        "kernelopt report task FILE.md": ("kernelopt report task", set()),
        "kernelopt report version FILE.md": ("kernelopt report version", set()),
    }
    synopses = _module_synopses()
    assert set(synopses) == set(expected_forms)
    for form, (prog, refused) in expected_forms.items():
        takes = {o for o in _options(parsers[prog]) if o.startswith("--")} - {"--help"}
        assert synopses[form] == takes - refused, form


def test_learn_dry_run_refuses_a_hand_written_knowledge_index(
    capsys: pytest.CaptureFixture[str], runs: Path, knowledge: Path
) -> None:
    # A project's docs/knowledge/index.md page: the real run exits 2 rather than replace
    # it, and the dry run must say so too, not "Would record".
    (knowledge / "index.md").write_text("# Knowledge\n\nOur pages.\n", encoding="utf-8")
    files = snapshot(knowledge)
    argv = ["learn", "--before", str(runs / "v1.jsonl"), "--after", str(runs / "v2.jsonl")]
    argv += ["--entry", "split-kv-flash-decoding", "--knowledge", str(knowledge)]
    for extra in ([], ["--dry-run"]):
        code, out, err = run(capsys, *argv, *extra)
        assert (code, out) == (2, ""), out
        assert f"Expected a knowledge tree at {knowledge}" in err and "index.md" in err
    assert snapshot(knowledge) == files


def test_report_profile_says_which_impl_the_version_names(
    capsys: pytest.CaptureFixture[str], runs: Path
) -> None:
    # Several impls and none named --version: the refusal says that V matched none.
    both = write_rows(runs / "both.jsonl", anchor_row("splits8"), anchor_row("splits16"))
    argv = ["report", "profile", "--rows", str(both), "--kernel", "k", "--version", "v9"]
    code, out, err = run(capsys, *argv)
    assert (code, out) == (2, "")
    assert "Expected rows of impl 'v9', or of one implementation (choose one with --impl" in err
    # One impl under another name is that version's, as profile_from_rows documents; the
    # help says so rather than promise rows named V only.
    argv[3] = str(runs / "v2.jsonl")
    code, out, _ = run(capsys, *argv)
    assert code == 0 and out.startswith("## Profile: k v9 | ")
    with pytest.raises(SystemExit):
        main(["report", "profile", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "--impl IMPL implementation in --rows (default the one named V, else the only" in text


def test_a_folder_given_for_a_file_is_named_as_one(
    capsys: pytest.CaptureFixture[str], runs: Path, knowledge: Path
) -> None:
    folder = runs / "rows"
    folder.mkdir()
    argv = ["learn", "--before", str(folder), "--after", str(runs / "v2.jsonl")]
    code, _, err = run(capsys, *argv, "--entry", "cuda-graphs", "--knowledge", str(knowledge))
    assert code == 2 and f"Expected a BenchRow JSONL file, got a directory at {folder}" in err
    profile = ["report", "profile", "--kernel", "k", "--version", "v"]
    for files in (
        ["--rows", str(folder)],
        ["--rows", str(runs / "v2.jsonl"), "--baseline", str(folder)],
    ):
        code, _, err = run(capsys, *profile, *files)
        assert code == 2 and f"Expected a BenchRow JSONL file, got a directory at {folder}" in err
    code, _, err = run(capsys, *profile, "--rows", str(runs / "none.jsonl"))
    assert code == 2 and f"got no file at {runs / 'none.jsonl'}" in err


def test_report_version_check_names_a_folder_given_as_devlog(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    version = NewVersion(
        kernel="mla_decode",
        version="v3",
        changes=[Change(what="split KV")],
        correctness="PASS",
        trials=[TrialCheck(point={"b": 32, "s": 1, "t": 4096}, why="decode")],
        devlog="docs/kernels",
    )
    path = tmp_path / "v3.md"
    path.write_text(version.render(), encoding="utf-8")
    argv = ["report", "version", str(path), "--check", "--root", str(tmp_path)]
    code, _, err = run(capsys, *argv)
    assert code == 1 and "devlog docs/kernels does not exist" in err
    (tmp_path / "docs" / "kernels").mkdir(parents=True)
    code, _, err = run(capsys, *argv)
    assert code == 1 and "devlog docs/kernels is a directory" in err
    assert "does not exist" not in err

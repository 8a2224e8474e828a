"""Links of a task written to a file, a trial point profiled twice, a devlog left as it
was, and blank option values."""

from __future__ import annotations

import json
import re
import stat
import warnings
from pathlib import Path

import pytest

from kernelopt._errors import InputError
from kernelopt.catalog import BUILTIN_ROOT, Catalog
from kernelopt.cli import main
from kernelopt.experiments import experiment_dir, write_plan
from kernelopt.workflow import (
    Change,
    Constraints,
    OptimizationTask,
    knowledge_link,
    parse_profiles,
    parse_task,
    perf_rows_from_bench,
    update_devlog,
)
from kernelopt.workflow.profile import ProfileWarning

from .conftest import anchor_row, bench_row, memory_bound_report, write_rows

_MARKDOWN_LINK = re.compile(r"\]\((?P<target>[^()\s]+)\)")


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def dead_links(path: Path) -> list[str]:
    """The relative links of the markdown file ``path`` that lead to no file from its folder."""
    targets = [m.group("target") for m in _MARKDOWN_LINK.finditer(path.read_text("utf-8"))]
    return [t for t in targets if "://" not in t and not (path.parent / t).is_file()]


# --- a task's links, written to a file -----------------------------------------------------


def split_kv_task(plan: Path | None) -> OptimizationTask:
    """The task step 3 of the MLA decode example writes, linked from ``plan`` (or in the
    hand-offs' root-relative form when None)."""
    catalog = Catalog.builtin()
    where = {} if plan is None else {"relative_to": plan}
    return OptimizationTask(
        kernel="mla_decode",
        current="naive",
        new_version="split_kv",
        bottleneck="missing fundamental: Split-KV flash decoding",
        optimizations=[
            Change.of(catalog.get("split-kv-flash-decoding"), "cut the keys", **where),
            Change.of(catalog.get("split-kv-lse-combine"), "merge by LSE", **where),
        ],
        constraints=Constraints(language="triton"),
    )


def test_plan_md_links_resolve_from_its_folder(tmp_path: Path) -> None:
    experiments = tmp_path / "log" / "experiments"
    plan = experiment_dir(experiments, 3) / "plan.md"
    task = split_kv_task(plan)
    written = write_plan(experiments, 3, task.render())
    assert written == plan
    assert len(_MARKDOWN_LINK.findall(plan.read_text("utf-8"))) == 2
    assert dead_links(plan) == []
    # Read back and checked as the root-relative form is.
    assert parse_task(plan.read_text("utf-8")) == task
    assert task.problems(Catalog.builtin()) == []


def test_hand_off_links_stay_root_relative(tmp_path: Path) -> None:
    task = split_kv_task(None)
    assert [c.link for c in task.optimizations] == [
        "docs/knowledge/optimizations/split-kv-flash-decoding.md",
        "docs/knowledge/optimizations/split-kv-lse-combine.md",
    ]


def test_relative_link_prefers_the_users_tree(tmp_path: Path, knowledge: Path) -> None:
    entry = Catalog.builtin().get("split-kv-flash-decoding")
    plan = tmp_path / "experiments" / "exp_1" / "plan.md"
    link = knowledge_link(entry, relative_to=plan, knowledge=knowledge)
    assert link == "../../docs/knowledge/optimizations/split-kv-flash-decoding.md"
    # An entry the user's tree lacks links the file shipped with kernelopt.
    other = Catalog.builtin().get("split-kv-lse-combine")
    shipped = knowledge_link(other, relative_to=plan, knowledge=knowledge)
    assert (plan.parent / shipped).resolve() == (BUILTIN_ROOT / other.relative_path).resolve()


def test_relative_link_refusals(tmp_path: Path) -> None:
    entry = Catalog.builtin().get("split-kv-flash-decoding")
    plan = tmp_path / "plan.md"
    with pytest.raises(InputError, match="Expected base or relative_to, not both, got both"):
        Change.of(entry, base="kb", relative_to=plan)
    with pytest.raises(InputError, match="Expected knowledge only with relative_to"):
        knowledge_link(entry, knowledge=tmp_path)
    with pytest.raises(InputError, match=r"base: Expected a path as links show it \(a str\)"):
        knowledge_link(entry, base=5)  # type: ignore[arg-type]
    with pytest.raises(InputError, match="relative_to: Expected a path"):
        knowledge_link(entry, relative_to=5)  # type: ignore[arg-type]

    class Unshipped:
        id = "not-shipped"
        name = "Not shipped"
        relative_path = "optimizations/not-shipped.md"

    with pytest.raises(InputError, match="knowledge: Expected a knowledge tree holding "):
        Change.of(Unshipped(), relative_to=plan, knowledge=tmp_path)


# --- one trial point, two profile hand-offs ------------------------------------------------


def test_two_hand_offs_of_one_point_are_both_read() -> None:
    # The reader reads a text whole; the check is where a repeated point is a problem.
    text = memory_bound_report().render() + "\n" + memory_bound_report().render()
    with warnings.catch_warnings():
        warnings.simplefilter("error", ProfileWarning)
        assert parse_profiles(text) == [memory_bound_report(), memory_bound_report()]


def test_other_versions_and_points_are_no_repeat(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "profile.md"
    texts = [
        memory_bound_report().render(),
        memory_bound_report(version="v3").render(),
        memory_bound_report(point={"b": 64, "s": 1, "t": 4096, "h": 16}).render(),
    ]
    path.write_text("\n".join(texts))
    assert run(capsys, "report", "profile", str(path), "--check") == (0, f"{path}: OK\n", "")


def test_check_lists_a_point_profiled_twice(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "profile.md"
    once = memory_bound_report().render()
    path.write_text(once + "\n" + once)
    second = len(once.splitlines()) + 2  # after the first and the blank line joining them
    code, out, err = run(capsys, "report", "profile", str(path), "--check")
    assert (code, out) == (1, "")
    assert "1 problem" in err
    assert (
        f"{path}:{second} [Profile]: Expected one hand-off per kernel, version and trial "
        f"point, got 'mla_decode v2 | b=32, s=1, t=4096, h=16' at lines 1 and {second}; "
        "which one holds is the writer's call"
    ) in err
    # As data too, with the same words.
    code, out, _ = run(capsys, "report", "profile", str(path), "--check", "--json")
    assert code == 1
    assert f"at lines 1 and {second}" in json.loads(out)["problems"][0]


# --- a devlog whose rows are already there -------------------------------------------------


@pytest.fixture
def rows_file(tmp_path: Path) -> Path:
    return write_rows(tmp_path / "rows.jsonl", anchor_row("splits8"))


def test_update_with_the_same_rows_writes_nothing(tmp_path: Path) -> None:
    rows = perf_rows_from_bench([anchor_row("splits8")], version="v2")
    path = tmp_path / "dev.md"
    first = update_devlog(path, rows)
    assert not first.unchanged
    assert first.summary() == f"devlog {path}: 0 replaced, 1 added"
    path.chmod(stat.S_IRUSR)  # read-only: the same rows pass, writing nothing
    again = update_devlog(path, rows)
    assert again.unchanged
    assert again.replaced == tuple(rows)
    assert again.summary() == f"devlog {path}: 1 row already there, nothing written"


def profile_rows(rows_file: Path, devlog: Path) -> list[str]:
    return [
        "report",
        "profile",
        "--rows",
        str(rows_file),
        "--kernel",
        "mla_decode",
        "--version",
        "v2",
        "--impl",
        "splits8",
        "--devlog",
        str(devlog),
    ]


def test_report_profile_says_a_devlog_was_left_as_it_was(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, rows_file: Path
) -> None:
    devlog = tmp_path / "dev.md"
    code, _, err = run(capsys, *profile_rows(rows_file, devlog))
    assert (code, err) == (0, f"devlog {devlog}: 0 replaced, 1 added\n")
    devlog.chmod(stat.S_IRUSR)
    before = devlog.read_bytes()
    code, _, err = run(capsys, *profile_rows(rows_file, devlog))
    assert (code, err) == (0, f"devlog {devlog}: 1 row already there, nothing written\n")
    assert devlog.read_bytes() == before


def test_read_only_devlog_refusal_names_the_option(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, rows_file: Path
) -> None:
    devlog = tmp_path / "dev.md"
    assert run(capsys, *profile_rows(rows_file, devlog))[0] == 0
    devlog.chmod(stat.S_IRUSR)
    faster = write_rows(tmp_path / "faster.jsonl", bench_row("splits8", 60.0))
    code, _, err = run(capsys, *profile_rows(faster, devlog))
    assert code == 2
    assert "error: --devlog: Expected a devlog file that may be written, got " in err


# --- blank option values -------------------------------------------------------------------


def test_learn_refuses_a_blank_kernel(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    before = write_rows(tmp_path / "a.jsonl", anchor_row("splits16", samples=40, seed=1))
    after = write_rows(tmp_path / "b.jsonl", anchor_row("splits8", samples=40, seed=2))
    args = ["learn", "--before", str(before), "--after", str(after)]
    args += ["--entry", "split-kv-flash-decoding", "--knowledge", str(tmp_path / "kb")]
    for blank in (" ", ""):
        with pytest.raises(SystemExit) as exited:
            main([*args, "--kernel", blank, "--dry-run"])
        assert exited.value.code == 2
        err = capsys.readouterr().err
        assert f"argument --kernel: Expected a kernel name, got an empty value ({blank!r})" in err
    # Not given, it is still none: the evidence row names no kernel.
    assert main([*args, "--dry-run"]) == 0


def test_report_profile_refuses_a_blank_kernel(
    capsys: pytest.CaptureFixture[str], rows_file: Path
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["report", "profile", "--rows", str(rows_file), "--kernel", " ", "--version", "v2"])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert "argument --kernel: Expected a kernel name, got an empty value (' ')" in err

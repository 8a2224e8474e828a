"""One guard, one action: a size-1 axis that is also the workload's dominant shape is one
path in the kernel, so the plan gives it one numbered action that keeps both reasons and
links both catalog entries; shortcuts with distinct guards stay separate actions, even
under one catalog entry. The header names a family the caller gave as given."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from kernelopt import cli
from kernelopt._errors import InputError
from kernelopt.diagnose import (
    Action,
    CatalogLink,
    Diagnosis,
    Finding,
    LogSummary,
    Pathology,
    diagnose,
    diagnosis_from_json,
    entry_links,
    render_plan,
)
from kernelopt.workload import profile_trace, write_profile_md

SIZE1 = "size-1-axis-shortcut"
DOMINANT = "dominant-shape-specialization"

CLAUDE = "# MLA decode kernel (Triton)\n\nKernel: kernels/mla_decode.py\n"
SUMMARY = """# Experiments Summary

| Exp | Description | Latency | Unit | Correct | Status |
|---|---|---|---|---|---|
| 1 | torch eager baseline | 1159 | us | PASS | BASELINE |
| 2 | naive Triton kernel | 2290 | us | PASS | REVERTED |
"""
# A launcher with no path for one query token: the guard is overlooked.
MLA_LAUNCHER = "import torch\n\n\ndef mla_decode(q, kv_cache, out):\n    return out\n"
ADD_LAUNCHER = "import torch\n\n\ndef add(x, y):\n    return x + y\n"


def _log(root: Path, kernel: str, source: str, calls: list[tuple[dict[str, object], int]]) -> Path:
    """A two-experiment log: ``source`` at ``kernels/<kernel>``, and the workload profile
    written from ``calls`` (each a call record and how many times it was made)."""
    (root / "experiments").mkdir(parents=True)
    (root / "kernels").mkdir()
    (root / "runs").mkdir()
    (root / "CLAUDE.md").write_text(CLAUDE.replace("mla_decode.py", kernel), encoding="utf-8")
    (root / "experiments" / "summary.md").write_text(SUMMARY, encoding="utf-8")
    (root / "kernels" / kernel).write_text(source, encoding="utf-8")
    lines = [json.dumps(call) for call, count in calls for _ in range(count)]
    trace = root / "runs" / "trace.jsonl"
    trace.write_text("\n".join(lines) + "\n", encoding="utf-8")
    write_profile_md(profile_trace(str(trace)), str(root / "experiments" / "workload_profile.md"))
    return root


def _mla_call(s_q: int) -> dict[str, object]:
    return {
        "op": "mla_decode",
        "args": {
            "q": {"shape": [8, s_q, 16, 576], "dtype": "bfloat16"},
            "kv_cache": {"shape": [64, 64, 1, 576], "dtype": "bfloat16"},
            "softmax_scale": 0.04,
        },
    }


@pytest.fixture
def decode_log(tmp_path: Path) -> Path:
    """One query token in 7 of 8 calls: s_q = 1 is a size-1 axis and the dominant shape,
    both behind the guard ``q.shape[1] == 1``."""
    return _log(
        tmp_path / "log", "mla_decode.py", MLA_LAUNCHER, [(_mla_call(1), 7), (_mla_call(4), 1)]
    )


def _add_call(rows_x: int, rows_y: int) -> dict[str, object]:
    return {
        "op": "add",
        "args": {
            "x": {"shape": [rows_x, 64], "dtype": "float16"},
            "y": {"shape": [rows_y, 32], "dtype": "float16"},
        },
    }


def _plan_items(plan: str) -> list[str]:
    """The numbered items of the plan's ``## Plan`` section."""
    section = plan.split("## Plan\n", 1)[1].split("\n## ", 1)[0]
    return [line for line in section.splitlines() if re.match(r"\d+\. ", line)]


def test_a_size1_axis_that_is_the_dominant_shape_is_one_action(decode_log: Path) -> None:
    diagnosis = diagnose(decode_log, family="mla-decode")
    finding = diagnosis.finding(Pathology.OVERLOOKED_SHORTCUT)
    assert finding is not None
    guarded = [a for a in finding.actions if "`q.shape[1] == 1`" in a.text]
    assert len(guarded) == 1
    action = guarded[0]
    assert action.catalog_id == SIZE1 and action.catalog_ids == (SIZE1, DOMINANT)
    assert [link.path for link in action.links] == [
        f"optimizations/{SIZE1}.md",
        f"optimizations/{DOMINANT}.md",
    ]
    # Both reasons are kept: the axis of size 1, and the one shape that covers the calls.
    assert "s_q = 1 in 87.5% of calls" in action.text
    assert "one shape covers 87.5% of calls (s_q=1)" in action.text
    items = _plan_items(diagnosis.render_plan())
    assert [int(item.split(".")[0]) for item in items] == list(range(1, len(items) + 1))
    special = [item for item in items if "Add a special path for `q.shape[1] == 1`" in item]
    assert len(special) == 1
    assert special[0].endswith(
        f"— catalog: [Size-1 Axis Shortcut](optimizations/{SIZE1}.md) and "
        f"[Dominant-Shape Specialization](optimizations/{DOMINANT}.md) "
        f"(`{SIZE1}`, `{DOMINANT}`)"
    )


def test_a_written_plan_links_every_entry_of_a_shared_guard(decode_log: Path) -> None:
    diagnosis = diagnose(decode_log, family="mla-decode")
    plan_path = decode_log / "experiments" / "diagnosis.md"
    links = entry_links(diagnosis, plan_path)
    assert {SIZE1, DOMINANT} <= set(links)
    for entry_id in (SIZE1, DOMINANT):
        assert (plan_path.parent / links[entry_id]).is_file()
        assert f"]({links[entry_id]})" in render_plan(diagnosis, links=links)


def test_a_shared_guard_round_trips_through_json(decode_log: Path) -> None:
    diagnosis = diagnose(decode_log, family="mla-decode")
    assert diagnosis_from_json(diagnosis.to_json()) == diagnosis
    data = diagnosis.to_dict()
    actions = [a for f in data["findings"] for a in f["actions"]]  # type: ignore[index]
    shared = [a for a in actions if a["catalog_id"] == SIZE1]
    assert [link["catalog_id"] for link in shared[0]["also"]] == [DOMINANT]
    # An action of one entry keeps the four keys it always had.
    single = [a for a in actions if a["catalog_id"] not in (SIZE1, None)]
    assert single and all(list(a) == ["text", "catalog_id", "catalog_name", "path"] for a in single)


def test_distinct_guards_stay_separate_actions_under_one_entry(tmp_path: Path) -> None:
    """x and y each have one row in half of the calls: two guards, two paths, one entry."""
    root = _log(
        tmp_path / "log",
        "add.py",
        ADD_LAUNCHER,
        [(_add_call(1, 8), 4), (_add_call(8, 1), 4), (_add_call(8, 8), 1), (_add_call(1, 1), 1)],
    )
    diagnosis = diagnose(root, family="softmax")
    finding = diagnosis.finding(Pathology.OVERLOOKED_SHORTCUT)
    assert finding is not None
    special = [a for a in finding.actions if a.text.startswith("Add a special path")]
    assert [a.text.split("`")[1] for a in special] == ["x.shape[0] == 1", "y.shape[0] == 1"]
    assert all(a.catalog_ids == (SIZE1,) for a in special)
    items = [i for i in _plan_items(diagnosis.render_plan()) if "Add a special path" in i]
    assert len(items) == 2
    assert "`x.shape[0] == 1`" in items[0] and "`y.shape[0] == 1`" in items[1]


def _finding(pathology: Pathology, *actions: Action) -> Finding:
    return Finding(pathology=pathology, summary="s", actions=actions)


def test_an_entry_an_earlier_finding_linked_is_not_repeated() -> None:
    first = Action(text="Add the shortcut.", catalog_id="a")
    again = Action(text="Try the shortcut.", catalog_id="a")
    wider = Action(text="Add both.", catalog_id="a", also=(CatalogLink(catalog_id="b"),))
    diagnosis = Diagnosis(
        findings=(
            _finding(Pathology.MISSING_FUNDAMENTAL, first),
            _finding(Pathology.OVERLOOKED_SHORTCUT, again, wider),
        ),
        summary=LogSummary(root="log", experiments=1, attempted=1),
    )
    assert _plan_items(render_plan(diagnosis)) == [
        "1. Add the shortcut. — catalog: a (`a`)",
        # It links an entry not linked before: kept.
        "2. Add both. — catalog: a and b (`a`, `b`)",
    ]


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"also": (CatalogLink(catalog_id="b"),)}, "a catalog_id"),
        ({"catalog_id": "a", "also": (CatalogLink(catalog_id="a"),)}, "once each"),
        ({"catalog_id": "a", "also": ("b",)}, "CatalogLink"),
    ],
)
def test_an_action_refuses_links_it_cannot_render(fields: dict[str, object], message: str) -> None:
    with pytest.raises(InputError, match=f"Expected .*{message}"):
        Action(text="t", **fields)  # type: ignore[arg-type]


def test_a_family_given_by_the_caller_reads_as_given(decode_log: Path) -> None:
    assert (
        "Kernel family: mla-decode (given).\n"
        in diagnose(decode_log, family="mla-decode").render_plan()
    )
    # Named by the log: its source is the file and line.
    assert "Kernel family: mla-decode (from CLAUDE.md:1).\n" in diagnose(decode_log).render_plan()


def test_a_family_given_on_the_command_line_names_the_option(
    decode_log: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["diagnose", str(decode_log), "--family", "mla-decode"]) == 1
    assert "Kernel family: mla-decode (from --family).\n" in capsys.readouterr().out
    assert cli.main(["diagnose", str(decode_log), "--family", "mla-decode", "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["summary"]["family_source"] == "--family"

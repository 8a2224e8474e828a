"""The machine contract of the command line: every ``--json`` output on a fixed input.

An agent drives ``kernelopt`` through its exit codes and the JSON it prints. For each
``--json`` command this checks, on inputs shipped with the repository (or written here):
stdout holds one JSON document and nothing else, the top-level keys and their types are
the documented ones in a stable order, and the library's reader reads the output back into
the same typed record. Errors keep stdout empty, say ``Expected X, got Y`` on stderr and
exit with the documented code. Everything runs in-process through ``main()``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kernelopt.catalog import Catalog
from kernelopt.catalog.jsonio import entry_from_dict, entry_to_dict
from kernelopt.cli import main
from kernelopt.diagnose import diagnosis_from_json, diagnosis_to_dict
from kernelopt.workflow import NewVersion, OptimizationTask, ProfileReport, from_dict, to_dict
from kernelopt.workload import Recorder
from kernelopt.workload.profile import profile_calls
from kernelopt.workload.serialize import profile_from_dict, shortcut_from_dict, shortcut_to_dict
from kernelopt.workload.traces import read_trace

REPO = Path(__file__).resolve().parents[1]
PLATEAU = REPO / "examples" / "logs" / "mla-decode-plateau"
EXP_12 = REPO / "docs" / "kernels" / "mla_decode" / "experiments" / "exp_12"
PROFILE_MD = PLATEAU / "experiments" / "profile.md"

# The hand-offs of docs/workflow.md, as an agent would write them.
TASK_MD = """\
## Optimization Task: mla_decode v2 -> v3
### Current Bottleneck: Memory-bound -- 54% of the roofline floor, 54% of the copy bandwidth
### Optimizations to Apply:
1. [head-grouping-mma-tile](docs/knowledge/optimizations/head-grouping-mma-tile.md) -- 16 heads
2. fuse the split combine into the last split -- rationale: one launch less

### Constraints
- Language: triton
- keep the mla_decode signature
"""
VERSION_MD = """\
## New Version: mla_decode v3
### Changes Applied:
- [head-grouping-mma-tile](docs/knowledge/optimizations/head-grouping-mma-tile.md) -- 16 heads
### Files:
- Created: kernels/mla_decode_v3.py
### Correctness: PASS -- rel err 1.8e-3 against the float64 reference at both points

### Trial Configurations Checked
1. decode [b=32, s=1, t=4096] -- one query token: memory-bound, the serving case

### Devlog Entry Written: docs/kernels/mla_decode.md
"""

# Keys, in order, of the outputs whose layout the docs state or the library fixes.
DIAGNOSIS_KEYS = ["findings", "checks", "summary", "root_causes", "unread", "warnings"]
FINDING_KEYS = [
    "pathology",
    "summary",
    "experiments",
    "severity",
    "confidence",
    "evidence",
    "actions",
    "missing",
]
LIST_KEYS = ["id", "name", "kind", "scope", "families", "fundamental_for", "keywords", "when"]
MATCH_KEYS = ["id", "name", "kind", "scope", "score", "reasons"]
PROBLEM_KEYS = ["path", "line", "severity", "section", "message"]
LEARN_KEYS = [
    "action",
    "verdict",
    "applied",
    "entry_id",
    "path",
    "row",
    "dry_run",
    "contradicts",
    "related",
    "point",
    "gpu",
    "date",
    "source",
    "before",
    "after",
    "unit",
    "ratio",
    "ratio_low",
    "ratio_high",
    "noise",
    "threshold",
    "method",
    "summary",
]


def _no_constant(name: str) -> None:
    raise AssertionError(f"stdout holds {name}, which is not JSON")


def run_json(capsys: pytest.CaptureFixture[str], *argv: str, code: int = 0) -> tuple[Any, str]:
    """Run ``kernelopt ARGV``; stdout must be exactly one strict JSON document."""
    got = main(list(argv))
    out, err = capsys.readouterr()
    assert got == code, err
    assert out.endswith("}\n") or out.endswith("]\n"), out[-80:]
    return json.loads(out, parse_constant=_no_constant), err


def run_error(capsys: pytest.CaptureFixture[str], *argv: str, code: int = 2) -> str:
    """Run ``kernelopt ARGV`` that must fail: nothing on stdout, the reason on stderr."""
    got = main(list(argv))
    out, err = capsys.readouterr()
    assert (got, out) == (code, ""), (got, out, err)
    assert "Expected" in err and "Traceback" not in err, err
    return err


def types_of(data: dict[str, Any]) -> dict[str, type]:
    return {key: type(value) for key, value in data.items()}


class _Tensor:
    """What the recorder reads of a tensor (it duck-types ``shape`` and ``dtype``)."""

    def __init__(self, *shape: int, dtype: str = "bfloat16") -> None:
        self.shape = shape
        self.dtype = dtype


@pytest.fixture(scope="module")
def trace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A call trace recorded with ``Recorder``: 90 % of the calls have one query token."""
    path = tmp_path_factory.mktemp("trace") / "calls.jsonl"
    recorder = Recorder(path, append=False)

    @recorder(op="mla_decode")
    def mla_decode(q: _Tensor, kv_cache: _Tensor, softmax_scale: float) -> None:
        del q, kv_cache, softmax_scale

    with recorder:
        for step in range(20):
            mla_decode(_Tensor(8, 1 if step % 10 else 4, 16, 576), _Tensor(64, 64, 1, 576), 0.04)
    return path


# --- diagnose ---------------------------------------------------------------------------


def test_diagnose_json_contract(capsys: pytest.CaptureFixture[str]) -> None:
    data, err = run_json(capsys, "diagnose", str(PLATEAU), "--json", code=1)
    assert list(data) == DIAGNOSIS_KEYS and err == ""
    assert types_of(data) == {
        "findings": list,
        "checks": list,
        "summary": dict,
        "root_causes": list,
        "unread": list,
        "warnings": list,
    }
    assert list(data["findings"][0]) == FINDING_KEYS
    assert list(data["findings"][0]["evidence"][0]) == ["quote", "source", "experiments"]
    assert list(data["findings"][0]["actions"][0]) == ["text", "catalog_id", "catalog_name", "path"]
    assert len(data["checks"]) == 9
    assert list(data["checks"][0]) == ["pathology", "checked", "sentence", "missing"]
    assert "root" in data["summary"] and "stall_gain" in data["summary"]
    # The library reads it back into the same Diagnosis.
    assert diagnosis_to_dict(diagnosis_from_json(json.dumps(data))) == data


def test_diagnose_json_no_attempt_still_prints_then_exits_2(
    capsys: pytest.CaptureFixture[str],
) -> None:
    data, err = run_json(
        capsys, "diagnose", str(REPO / "examples/logs/measurements"), "--json", code=2
    )
    assert list(data) == DIAGNOSIS_KEYS and data["unread"]
    assert "Expected an experiment log" in err


# --- catalog ----------------------------------------------------------------------------


def test_catalog_list_json_contract(capsys: pytest.CaptureFixture[str]) -> None:
    data, _ = run_json(capsys, "catalog", "list", "--json")
    assert isinstance(data, list) and len(data) == len(Catalog.builtin())
    assert all(list(item) == [*LIST_KEYS, "path"] for item in data)
    assert [item["id"] for item in data] == sorted(item["id"] for item in data)
    assert types_of(data[0]) == {
        **dict.fromkeys(("id", "name", "kind", "scope", "when", "path"), str),
        **dict.fromkeys(("families", "fundamental_for", "keywords"), list),
    }


def test_catalog_show_json_round_trip(capsys: pytest.CaptureFixture[str]) -> None:
    entry = Catalog.builtin().get("hot-l2-timing")
    data, _ = run_json(capsys, "catalog", "show", "hot-l2-timing", "--json")
    # The entry's own fields, then where it was read from.
    assert list(data) == [*entry_to_dict(entry), "path"]
    assert isinstance(data.pop("path"), str)
    assert entry_from_dict(data) == entry


@pytest.mark.parametrize(
    "argv",
    [
        ("catalog", "search", "flash", "decoding", "--json"),
        ("catalog", "match", "--shape", "s_q=1", "--json"),
        ("catalog", "match", "--metric", "dram_pct=85", "--metric", "tc_pct=10", "--json"),
    ],
)
def test_catalog_ranked_json_contract(
    capsys: pytest.CaptureFixture[str], argv: tuple[str, ...]
) -> None:
    data, _ = run_json(capsys, *argv)
    assert isinstance(data, list) and data
    for item in data:
        assert list(item) == MATCH_KEYS
        assert isinstance(item["score"], float) and isinstance(item["reasons"], list)


def test_catalog_lint_index_new_json_contract(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    data, _ = run_json(capsys, "catalog", "lint", "--json")
    assert data == {"tree": "built-in", "errors": 0, "warnings": 0, "problems": []}
    tree = tmp_path / "knowledge"
    data, err = run_json(
        capsys, "catalog", "new", "--kind", "optimization", "Register Ring Buffer",
        "--dir", str(tree), "--json",
    )  # fmt: skip
    assert list(data) == ["path", "next"] and Path(data["path"]).is_file() and err == ""
    # A scaffold still holds placeholders: lint lists them and exits 1.
    data, _ = run_json(capsys, "catalog", "lint", str(tree), "--json", code=1)
    assert list(data) == ["tree", "errors", "warnings", "problems"]
    assert data["errors"] == sum(p["severity"] == "error" for p in data["problems"]) > 0
    assert all(list(p) == PROBLEM_KEYS for p in data["problems"])
    data, _ = run_json(capsys, "catalog", "index", str(tree), "--json")
    assert data == {"path": str(tree / "index.md")}


# --- inspect ----------------------------------------------------------------------------


def test_inspect_json_contract(capsys: pytest.CaptureFixture[str], trace: Path) -> None:
    data, _ = run_json(capsys, "inspect", str(trace), "--json", code=1)
    assert list(data) == ["profile", "shortcuts", "written"]
    assert types_of(data) == {"profile": dict, "shortcuts": list, "written": type(None)}
    profile = profile_from_dict(data["profile"])
    assert profile == profile_calls(read_trace(trace))
    assert data["shortcuts"]
    assert [shortcut_to_dict(shortcut_from_dict(s)) for s in data["shortcuts"]] == data["shortcuts"]


def test_inspect_json_rereads_written_profile(
    capsys: pytest.CaptureFixture[str], trace: Path, tmp_path: Path
) -> None:
    written = tmp_path / "workload_profile.md"
    first, _ = run_json(capsys, "inspect", str(trace), "--write", str(written), "--json", code=1)
    assert first["written"] == str(written)
    again, _ = run_json(capsys, "inspect", str(written), "--json", code=1)
    assert [op["op"] for op in again["profile"]["ops"]] == ["mla_decode"]
    profile_from_dict(again["profile"])


def test_inspect_writes_the_documented_json_file(
    capsys: pytest.CaptureFixture[str], trace: Path, tmp_path: Path
) -> None:
    written = tmp_path / "workload_profile.json"
    data, _ = run_json(capsys, "inspect", str(trace), "--write", str(written), "--json", code=1)
    stored = json.loads(written.read_text("utf-8"), parse_constant=_no_constant)
    assert list(stored) == ["schema", "profile", "shortcuts"]
    assert stored["schema"] == "kernelopt-workload-profile/1"
    assert stored["profile"] == data["profile"] and stored["shortcuts"] == data["shortcuts"]


# --- learn and report -------------------------------------------------------------------


def test_learn_json_contract(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    data, _ = run_json(
        capsys, "learn",
        "--before", str(EXP_12 / "seesaw_before.jsonl"),
        "--after", str(EXP_12 / "seesaw_after.jsonl"),
        "--point", "b=32,s=1,h=16", "--entry", "split-kv-flash-decoding",
        "--knowledge", str(tmp_path / "knowledge"), "--dry-run", "--json",
    )  # fmt: skip
    assert list(data) == LEARN_KEYS
    assert data["dry_run"] is True and data["verdict"] in ("FAST", "SLOW", "SAME", "UNCLEAR")
    assert isinstance(data["ratio"], float) and isinstance(data["summary"], str)
    assert not (tmp_path / "knowledge").exists()


def test_report_profile_rows_json_round_trip(capsys: pytest.CaptureFixture[str]) -> None:
    data, _ = run_json(
        capsys, "report", "profile",
        "--rows", str(EXP_12 / "seesaw_after.jsonl"),
        "--baseline", str(EXP_12 / "seesaw_before.jsonl"),
        "--kernel", "mla_decode", "--version", "kernelopt_seesaw", "--mode", "cold", "--json",
    )  # fmt: skip
    assert isinstance(data, list) and data
    for item in data:
        assert to_dict(from_dict(item, ProfileReport)) == item


@pytest.mark.parametrize(
    ("kind", "cls", "text"),
    [
        ("profile", ProfileReport, None),
        ("task", OptimizationTask, TASK_MD),
        ("version", NewVersion, VERSION_MD),
    ],
)
def test_report_file_json_round_trip(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, kind: str, cls: type, text: str | None
) -> None:
    path = PROFILE_MD
    if text is not None:
        path = tmp_path / f"{kind}.md"
        path.write_text(text, encoding="utf-8")
    data, _ = run_json(capsys, "report", kind, str(path), "--json")
    assert isinstance(data, dict) and list(data) == list(to_dict(from_dict(data, cls)))
    assert to_dict(from_dict(data, cls)) == data


@pytest.mark.parametrize(
    ("kind", "text", "code"),
    [("task", TASK_MD, 0), ("version", VERSION_MD, 1), ("profile", None, 0)],
)
def test_report_check_json_prints_json(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, kind: str, text: str | None, code: int
) -> None:
    path = PROFILE_MD
    if text is not None:
        path = tmp_path / f"{kind}.md"
        path.write_text(text, encoding="utf-8")
    if kind == "task":  # the entry the task links to, where its link leads
        entry = tmp_path / "docs" / "knowledge" / "optimizations" / "head-grouping-mma-tile.md"
        entry.parent.mkdir(parents=True)
        entry.write_text("# Head grouping\n", encoding="utf-8")
    argv = ["report", kind, str(path), "--check", "--json"]
    if kind == "version":  # kernels/mla_decode_v3.py does not exist under this root
        argv += ["--root", str(tmp_path)]
    data, _ = run_json(capsys, *argv, code=code)
    assert list(data) == ["path", "ok", "problems"]
    assert data["path"] == str(path) and data["ok"] is (code == 0)
    assert isinstance(data["problems"], list) and bool(data["problems"]) is (code == 1)


# --- bench (the device patched away: the layout, not the numbers) --------------------


def test_bench_ceilings_json_contract(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import kernelopt.bench.roofline as roofline

    monkeypatch.setenv("KERNELOPT_CACHE_DIR", str(tmp_path))
    found = roofline.Ceilings(
        gpu="NVIDIA H200",
        copy_bytes_per_s=4.1e12,
        matmul_flop_per_s=7.2e14,
        measured_at="2026-12-02T10:00:00+00:00",
        torch="2.11.0",
    )
    monkeypatch.setattr(roofline, "measure_ceilings", lambda refresh=False: found)
    data, err = run_json(capsys, "bench", "ceilings", "--json")
    assert err == "" and data == {
        "gpu": "NVIDIA H200",
        "copy_bytes_per_s": 4.1e12,
        "matmul_flop_per_s": 7.2e14,
        "ridge_flop_per_byte": 7.2e14 / 4.1e12,
        "measured_at": "2026-12-02T10:00:00+00:00",
        "torch": "2.11.0",
        "cache": str(tmp_path / "ceilings.json"),
    }


def test_bench_mla_json_contract_of_a_failed_point(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import kernelopt.bench.mla as mla
    from kernelopt.bench.roofline import Cost
    from kernelopt.bench.trials import TrialPoint, TrialResult

    point = TrialPoint(b=8, s=1, t=64, name="extra", extra={"h": 16})
    failed = TrialResult(requested=point, point=point, impl="seesaw", error="boom")
    trial = mla.MLATrial(trial=failed, cost=Cost(flops=1.0, bytes=1.0))
    monkeypatch.setattr(mla, "mla_trial_matrix", lambda points: [trial])
    out = tmp_path / "rows.jsonl"
    argv = ["bench", "mla", "--extra-point", "b=8,s=1,t=64,h=16", "--out", str(out), "--json"]
    data, err = run_json(capsys, *argv, code=1)  # a point failed: a finding
    assert err == "" and isinstance(data, list) and len(data) == 1
    assert list(data[0]) == [
        "point", "requested", "impl", "median_us", "p20_us", "p80_us",
        "floor_us", "floor_pct", "rel_err", "note", "error",
    ]  # fmt: skip
    assert data[0]["error"] == "boom" and data[0]["median_us"] is None
    assert out.read_text("utf-8") == ""  # a failed point writes no row


# --- errors: exit 2, nothing on stdout, "Expected X, got Y" -----------------------------


@pytest.mark.parametrize(
    "argv",
    [
        ("diagnose", "{missing}", "--json"),
        ("diagnose", "{file}", "--json"),
        ("diagnose", str(PLATEAU), "--knowledge", "{file}", "--json"),
        ("catalog", "list", "--knowledge", "{missing}", "--json"),
        ("catalog", "show", "no-such-entry", "--json"),
        ("catalog", "match", "--json"),
        ("catalog", "match", "--metric", "dram_pct=nan", "--json"),
        ("catalog", "lint", "{file}", "--json"),
        ("catalog", "index", "{missing}", "--json"),
        ("catalog", "new", "--kind", "optimization", "X Y", "--dir", "{file}", "--json"),
        ("inspect", "{missing}", "--json"),
        ("inspect", "{dir}", "--json"),
        ("inspect", "{bad_json}", "--json"),
        ("inspect", "{file}", "--json"),
        ("learn", "--before", "{missing}", "--after", "{missing}", "--entry", "x", "--json"),
        ("learn", "--before", "{bad_json}", "--after", "{bad_json}", "--entry", "x", "--json"),
        ("report", "task", "{missing}", "--json"),
        ("report", "profile", "--json"),
        ("report", "profile", "{file}", "--rows", "{file}", "--json"),
        ("report", "profile", "--rows", "{missing}", "--kernel", "k", "--version", "v", "--json"),
        ("bench", "mla", "--json"),
        ("bench", "mla", "--extra-point", "b=1", "--json"),
    ],
)
def test_errors_exit_2_with_expected(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, argv: tuple[str, ...]
) -> None:
    places = {
        "missing": str(tmp_path / "missing"),
        "file": str(tmp_path / "notes.md"),
        "dir": str(tmp_path),
        "bad_json": str(tmp_path / "bad.jsonl"),
    }
    (tmp_path / "notes.md").write_text("# notes\n", encoding="utf-8")
    (tmp_path / "bad.jsonl").write_text("{not json\n", encoding="utf-8")
    run_error(capsys, *(arg.format(**places) for arg in argv))


@pytest.mark.parametrize("dry_run", [True, False])
def test_learn_refuses_a_file_as_knowledge_tree(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, dry_run: bool
) -> None:
    # The dry run must refuse what the real run refuses, and both say why.
    afile = tmp_path / "knowledge.md"
    afile.write_text("x\n", encoding="utf-8")
    argv = [
        "learn",
        "--before", str(EXP_12 / "seesaw_before.jsonl"),
        "--after", str(EXP_12 / "seesaw_after.jsonl"),
        "--point", "b=32,s=1,h=16", "--entry", "split-kv-flash-decoding",
        "--knowledge", str(afile), "--json",
    ]  # fmt: skip
    err = run_error(capsys, *argv, *(["--dry-run"] if dry_run else []))
    assert "knowledge tree folder" in err and afile.read_text("utf-8") == "x\n"


@pytest.mark.parametrize(
    "argv",
    [
        ("diagnose", str(PLATEAU), "--json", "--bogus"),
        ("diagnose", str(PLATEAU), "--until", "-1", "--json"),
        ("diagnose", str(PLATEAU), "--until", "4", "--until", "5", "--json"),
        ("inspect", "t.jsonl", "--top", "nan", "--json"),
        ("catalog", "search", "kv", "--limit", "-1", "--json"),
        ("learn", "--before", "a", "--after", "b", "--entry", "x", "--min-effect", "inf"),
        ("catalog", "list", "--json", "--kind", "nope"),
        ("inspect", "--json"),
        ("learn", "--json"),
        ("report", "task", "--json"),
        ("bench", "ceilings", "--json", "--bogus"),
    ],
)
def test_usage_errors_exit_2(capsys: pytest.CaptureFixture[str], argv: tuple[str, ...]) -> None:
    with pytest.raises(SystemExit) as raised:
        main(list(argv))
    out, err = capsys.readouterr()
    assert raised.value.code == 2 and out == "" and "error:" in err


def test_bench_ceilings_without_cuda_exits_2(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # CUDA patched away, so the test also runs (and measures nothing) on a GPU machine.
    import kernelopt.bench.timer

    monkeypatch.setattr(kernelopt.bench.timer, "cuda_available", lambda: False)
    err = run_error(capsys, "bench", "ceilings", "--json")
    # The refusal names the missing device, not some other argument.
    assert "Expected a CUDA device to measure ceilings, got none" in err, err


def test_catalog_new_refuses_a_file_as_tree(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    afile = tmp_path / "knowledge.md"
    afile.write_text("x\n", encoding="utf-8")
    err = run_error(capsys, "catalog", "new", "--kind", "optimization", "X Y", "--dir", str(afile))
    assert f"Expected a knowledge folder, got {afile} (not a folder)" in err

"""`kernelopt inspect`: text report, JSON, writing the profile, exit codes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from kernelopt import cli
from kernelopt.workload import read_profile_md


def test_text_report(data: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = cli.main(["inspect", str(data / "mla_decode_calls.jsonl"), "--top", "2"])
    out = capsys.readouterr().out
    assert code == 1  # shortcuts found
    assert "10 calls, 1 op, 4 distinct shapes; 5 of 15 records skipped" in out
    assert "op mla_decode [mla_decode, mla-decode]: 10 calls, 4 distinct shapes, 585 us" in out
    assert ["s_q", "q.shape[1]", "1", "1", "16", "2", "80.0%"] in [
        line.split() for line in out.splitlines()
    ]
    assert "size-1 axes: h_kv = 1 in 100% of calls (100% of time); s_q = 1 in 80.0% of calls" in out
    # The top shape by calls (s_q = 1) is not the top by time (s_q = 16).
    assert "skew: top-1 60.0% of calls, top-1 by time 54.7% of time; top-2 80.0% of calls" in out
    assert "top shapes by time:" in out and "    3." not in out  # --top 2
    assert "[uniform-lengths] mla_decode:" in out
    assert "guard: cache_seqlens.min() == cache_seqlens.max()" in out
    assert "note: line 5: args.q.shape: Expected dims in [0, 2**40]" in out


def test_json_and_write(tmp_path: Path, data: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "experiments" / "workload_profile.md"
    code = cli.main(
        [
            "inspect",
            str(data / "softmax_topk_cpu.json"),
            "--op",
            "topk",
            "--json",
            "--write",
            str(target),
        ]
    )
    doc = json.loads(capsys.readouterr().out)
    assert code == 1
    assert [op["op"] for op in doc["profile"]["ops"]] == ["aten::topk"]
    assert doc["shortcuts"][0]["rule"] == "select-all"
    assert doc["written"] == str(target)
    written = read_profile_md(target)
    assert written.op().op == "aten::topk"
    # Re-reading the written markdown gives the same findings.
    assert cli.main(["inspect", str(target), "--json"]) == 1
    again = json.loads(capsys.readouterr().out)
    assert again["shortcuts"] == doc["shortcuts"]


def test_handwritten_profile_and_flashinfer(data: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        cli.main(
            [
                "inspect",
                str(data / "handwritten_profile.md"),
                "--op",
                "mla decode (deepseek-v3, tp8)",
            ]
        )
        == 1
    )
    assert "s_q = 1 in 89.6% of calls" in capsys.readouterr().out
    workloads = (
        data
        / "flashinfer"
        / "workloads"
        / "mla_paged"
        / "mla_paged_decode_h16_ckv512_kpe64_ps64.jsonl"
    )
    assert cli.main(["inspect", str(workloads)]) == 1
    assert "batch_size = 1 in 50.0% of calls" in capsys.readouterr().out


def test_no_shortcut_exits_0(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "t.jsonl"
    lines = [
        f'{{"op": "f", "args": {{"x": {{"shape": [{n}, 64], "dtype": "float32"}}}}}}'
        for n in (100, 200, 300)
    ]
    path.write_text("\n".join(lines) + "\n")
    assert cli.main(["inspect", str(path)]) == 0
    assert "shortcuts: none found" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("", "Expected a non-empty trace file"),
        ("garbage\nmore garbage\n", "Expected at least one call in"),
        ("\n\n", "Expected a non-empty trace file"),
    ],
)
def test_bad_traces_exit_2(
    tmp_path: Path, content: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(content)
    assert cli.main(["inspect", str(path)]) == 2
    assert message in capsys.readouterr().err


def test_missing_file_unknown_op_and_bad_top(
    tmp_path: Path, data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["inspect", str(tmp_path / "none.jsonl")]) == 2
    assert "Expected an existing trace file" in capsys.readouterr().err
    assert cli.main(["inspect", str(data / "mla_decode_calls.jsonl"), "--op", "gemm"]) == 2
    assert "Expected an op of the trace (mla_decode), got gemm" in capsys.readouterr().err
    with pytest.raises(SystemExit) as usage:
        cli.main(["inspect", str(data / "mla_decode_calls.jsonl"), "--top", "0"])
    assert usage.value.code == 2
    assert "argument --top: Expected an int >= 1, got 0" in capsys.readouterr().err
    readme = tmp_path / "README.md"
    readme.write_text("# A project\n\nInstall it with pip.\n")
    assert cli.main(["inspect", str(readme)]) == 2  # markdown without a shape table
    assert "Expected a workload profile or shape table in" in capsys.readouterr().err


def test_console_script_entry(data: Path) -> None:
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "kernelopt",
            "inspect",
            str(data / "sdpa_one_key_cpu.json"),
            "--op",
            "aten::scaled_dot_product_attention",
        ],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 1, out.stderr
    assert "[single-key-attention]" in out.stdout


def test_a_missing_definition_file_is_refused(
    tmp_path: Path, data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Ignored for a JSONL trace, a mistyped path would go unnoticed.
    missing = tmp_path / "definition.json"
    trace = str(data / "mla_decode_calls.jsonl")
    assert cli.main(["inspect", trace, "--definition", str(missing)]) == 2
    err = capsys.readouterr().err
    assert f"--definition: Expected a definition JSON file, got no file at {missing}" in err


def test_a_folder_given_for_a_file_is_called_a_directory(
    tmp_path: Path, data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # It exists: "got d" (as for a missing file) sent the user looking for it.
    trace = str(data / "mla_decode_calls.jsonl")
    for name, what in (("d", "trace file"), ("d.md", "workload_profile.md")):
        folder = tmp_path / name
        folder.mkdir()
        assert cli.main(["inspect", str(folder)]) == 2
        assert f"Expected an existing {what}, got a directory at {folder}\n" in (
            capsys.readouterr().err
        )
    assert cli.main(["inspect", trace, "--definition", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert f"--definition: Expected a definition JSON file, got a directory at {tmp_path}\n" in err
    assert cli.main(["inspect", str(tmp_path / "none.jsonl")]) == 2
    assert "got no file at" in capsys.readouterr().err
    # Path("") is the working directory: "got a directory at ." named no path given.
    assert cli.main(["inspect", ""]) == 2
    assert "Expected a trace file or a workload_profile.md, got an empty path\n" in (
        capsys.readouterr().err
    )
    assert cli.main(["inspect", trace, "--definition", ""]) == 2
    assert "--definition: Expected a definition JSON file, got an empty path\n" in (
        capsys.readouterr().err
    )


def test_an_empty_write_path_is_refused(
    tmp_path: Path, data: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # An empty --write read as no --write: exit 0 and no profile, without a word.
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as usage:
        cli.main(["inspect", str(data / "mla_decode_calls.jsonl"), "--write", ""])
    assert usage.value.code == 2
    err = capsys.readouterr().err
    assert err == (
        "kernelopt inspect: error: argument --write: "
        "Expected a file path to write, got an empty path\n"
    )
    assert list(tmp_path.iterdir()) == []


def test_a_file_where_the_written_profile_folder_goes_is_named(
    tmp_path: Path, data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    blocker = tmp_path / "notes.txt"
    blocker.write_text("x")
    trace = str(data / "mla_decode_calls.jsonl")
    assert cli.main(["inspect", trace, "--write", str(blocker / "workload_profile.md")]) == 2
    err = capsys.readouterr().err
    assert f"Expected a folder that can be created, got {blocker}, a file\n" in err


def test_skew_names_the_top_by_time_when_it_is_another_shape(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # 4 rows: 80% of calls, 46% of time; 16 rows: 20% of calls, 54% of time. The line read
    # "top-1 80.0% of calls / 54.2% of time", as if one shape held both shares.
    def call(rows: int, us: float) -> str:
        return json.dumps(
            {
                "op": "softmax",
                "args": {"x": {"shape": [rows, 4096], "dtype": "float32"}},
                "duration_us": us,
            }
        )

    trace = tmp_path / "calls.jsonl"
    lines = [call(4, 7.0)] * 16 + [call(16, 33.0)] * 4
    trace.write_text("\n".join(lines) + "\n", encoding="utf-8")
    cli.main(["inspect", str(trace)])
    out = capsys.readouterr().out
    assert "skew: top-1 80.0% of calls, top-1 by time 54.1% of time;" in out
    assert "top-2 100% of calls / 100% of time" in out


def test_counts_of_one_are_singular(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    trace = tmp_path / "one.jsonl"
    call = {"op": "softmax", "args": {"x": {"shape": [4, 4096], "dtype": "float32"}}}
    trace.write_text(json.dumps(call) + "\n", encoding="utf-8")
    cli.main(["inspect", str(trace)])
    out = capsys.readouterr().out
    assert "1 call, 1 op, 1 distinct shape; 0 of 1 record skipped" in out
    assert "]: 1 call, 1 distinct shape" in out


def test_a_profile_written_as_json_is_named_when_given_back(
    tmp_path: Path, data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # "(unrecognized content)" did not say that the file is inspect's own JSON profile.
    written = tmp_path / "p.json"
    cli.main(["inspect", str(data / "mla_decode_calls.jsonl"), "--write", str(written)])
    capsys.readouterr()
    assert cli.main(["inspect", str(written)]) == 2
    err = capsys.readouterr().err
    assert "a workload profile written as JSON, not a trace" in err
    assert "profile_from_json" in err and "workload_profile.md" in err


def test_write_refuses_the_trace_itself(
    tmp_path: Path, data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # `--write` naming the trace replaced the calls with the profile's markdown.
    trace = tmp_path / "calls.jsonl"
    trace.write_bytes((data / "mla_decode_calls.jsonl").read_bytes())
    before = trace.read_bytes()
    assert cli.main(["inspect", str(trace), "--write", str(trace)]) == 2
    err = capsys.readouterr().err
    assert "Expected a path other than the file the profile was read from" in err
    assert trace.read_bytes() == before

"""What README.md, docs/guide.md and docs/index.md say a reader will find is there.

Each test reads a claim of those pages (a module list, a count, a command's options, a
figure quoted from ``benchmarks/results/*.jsonl``) and checks it against the code or the
rows it names, so a page that drifts from what it describes fails here. The MLA tables
themselves are checked cell by cell in ``tests/kernels/mla/test_mla_results_tables.py``;
these tests cover the figures of the prose around them.
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import json
import pkgutil
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
GUIDE = REPO / "docs" / "guide.md"
INDEX = REPO / "docs" / "index.md"
RESULTS = REPO / "benchmarks" / "results"
FENCE = re.compile(r"^```.*?^```", re.S | re.M)
# An inline code span: a run of backticks, its text, the same run (``a `b` c`` included).
INLINE_CODE = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)", re.S)
# The final H200 run the README's table cites, and the run before it that its prose quotes
# (rows are 1-based, as the docs cite them).
FINAL_RUN = (1305, 1376)
RUN_BEFORE = (1177, 1248)
FP8_RUN = (1277, 1304)
WORDS = {2: "two", 5: "five", 8: "eight"}


def flat(path: Path) -> str:
    """The page's text with every run of whitespace folded to one space."""
    return " ".join(path.read_text(encoding="utf-8").split())


def found(pattern: str, text: str) -> re.Match[str]:
    """The first match of ``pattern`` in ``text``; fails naming the claim when it is gone."""
    match = re.search(pattern, text)
    assert match is not None, f"Expected the page to say {pattern!r}, got no such sentence"
    return match


# ---------------------------------------------------------------------------- README


def test_the_readme_module_table_has_a_row_for_every_module() -> None:
    import kernelopt

    modules = {
        f"kernelopt.{name}"
        for name in kernelopt.__all__
        if name != "kernels" and inspect.ismodule(getattr(kernelopt, name))
    }
    kernels = importlib.import_module("kernelopt.kernels")
    modules |= {f"kernelopt.kernels.{m.name}" for m in pkgutil.iter_modules(kernels.__path__)}
    rows = re.findall(r"^\| `(kernelopt[\w.]*)` \|", README.read_text(encoding="utf-8"), re.M)
    assert sorted(rows) == sorted(modules)


def test_the_modules_the_readme_calls_torch_free_import_neither_torch_nor_triton() -> None:
    sentence = found(
        r"((?:`[\w. ]+`(?:, | and ))+`[\w.]+`) never import torch or triton", flat(README)
    )
    modules = [re.sub(r"^import ", "", m) for m in re.findall(r"`([^`]+)`", sentence[1])]
    assert "kernelopt" in modules and len(modules) >= 5
    code = (
        "import importlib, sys\n"
        f"for module in {modules!r}:\n"
        "    importlib.import_module(module)\n"
        "print(','.join(m for m in ('torch', 'triton') if m in sys.modules))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO
    )
    assert done.stdout.strip() == ""


def leaf_parsers(
    parser: argparse.ArgumentParser, words: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    """Every command of ``parser`` that has no subcommands, with the words that name it."""
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs:
        yield words, parser
    for action in subs:
        for name, sub in action.choices.items():
            yield from leaf_parsers(sub, (*words, name))


def option_names(parser: argparse.ArgumentParser) -> set[str]:
    return {o for action in parser._actions for o in action.option_strings}


def test_every_command_takes_json_as_the_readme_says() -> None:
    from kernelopt.cli import build_parser

    assert "`--json` on every reporting command" in flat(README)
    without = [
        " ".join(w) for w, p in leaf_parsers(build_parser()) if "--json" not in option_names(p)
    ]
    assert without == []


def test_the_readme_exit_codes_are_the_tools() -> None:
    from kernelopt.cli import build_parser

    codes = found(
        r"exit (\d) ok, (\d) findings, (\d) usage or input error, (\d+) interrupted", flat(README)
    )
    epilog = " ".join((build_parser().epilog or "").split())
    for code, meaning in zip(
        codes.groups(), ("ok", "findings", "usage or input error", "interrupted"), strict=True
    ):
        assert re.search(rf"\b{code} [^;]*{meaning.split()[0]}", epilog), (code, meaning, epilog)


def test_the_readme_names_every_verdict_of_compare() -> None:
    from kernelopt.bench import Verdict

    listed = found(r"\b((?:[A-Z]+/)+[A-Z]+) verdicts", flat(README))[1].split("/")
    assert listed == [v.value for v in Verdict]


def rows_of(name: str) -> list[dict[str, Any]]:
    lines = (RESULTS / name).read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]


def run_rows(first: int, last: int) -> list[dict[str, Any]]:
    """Rows ``first`` to ``last`` (1-based, inclusive) of ``mla_decode.jsonl``."""
    return rows_of("mla_decode.jsonl")[first - 1 : last]


def matmul_tflops(row: dict[str, Any]) -> float | None:
    """The bf16 matmul ceiling a row was placed against: its rate over its share of it."""
    metrics = row.get("metrics") or {}
    if not metrics.get("tc_pct"):
        return None
    return float(metrics["flop_per_s"]) / (float(metrics["tc_pct"]) / 100) / 1e12


def median(rows: list[dict[str, Any]], point: str, impl: str, mode: str) -> float:
    [value] = [
        r["median"]
        for r in rows
        if (r["config"]["point"], r["impl"], r["mode"]) == (point, impl, mode)
    ]
    return float(value)


def seesaw_at(rows: list[dict[str, Any]], point: str) -> tuple[float, float, float]:
    """(graph median, better of graph and cold, floor) of the seesaw kernel at ``point``."""
    graph = median(rows, point, "kernelopt_seesaw", "graph")
    best = min(graph, median(rows, point, "kernelopt_seesaw", "cold"))
    [floor] = {
        r["floor"] for r in rows if (r["config"]["point"], r["impl"]) == (point, "kernelopt_seesaw")
    }
    return graph, best, float(floor)


S1_H128, S1_H16 = "b=32 s=1 h=128 t=4096", "b=32 s=1 h=16 t=4096"
S16_H128, S16_H16 = "b=32 s=16 h=128 t=4096", "b=32 s=16 h=16 t=4096"


def test_the_readme_matmul_ceilings_are_the_runs() -> None:
    claim = found(r"\((\d+)-(\d+) TFLOP/s over the runs, (\d+) in this one\)", flat(README))
    every = [t for r in rows_of("mla_decode.jsonl") if (t := matmul_tflops(r)) is not None]
    final = {round(t) for r in run_rows(*FINAL_RUN) if (t := matmul_tflops(r)) is not None}
    assert (int(claim[1]), int(claim[2])) == (round(min(every)), round(max(every)))
    assert final == {int(claim[3])}


def test_the_readme_run_before_is_the_rows_before_the_final_run() -> None:
    claim = found(
        r"the run before \(([\d-]+), [^)]*\) read ([\d.]+) and ([\d.]+) µs at s_q=1 "
        r"\((\d+) % and (\d+) % at (\d+) TFLOP/s, the first at (\d+) MHz\), ([\d.]+) "
        r"\(([\d.]+) L2-flushed\) and ([\d.]+) µs at s_q=16 \((\d+) % and (\d+) %\)",
        flat(README),
    )
    rows = run_rows(*RUN_BEFORE)
    assert {r["timestamp"][:10] for r in rows} == {claim[1]}
    [ceiling] = {round(t) for r in rows if (t := matmul_tflops(r)) is not None}
    (g128, b128, f128), (g16, b16, f16) = seesaw_at(rows, S1_H128), seesaw_at(rows, S1_H16)
    (g16_128, b16_128, f16_128) = seesaw_at(rows, S16_H128)
    (g16_16, b16_16, f16_16) = seesaw_at(rows, S16_H16)
    [clock] = [
        r["sm_clock_mhz"]
        for r in rows
        if (r["config"]["point"], r["impl"], r["mode"]) == (S1_H128, "kernelopt_seesaw", "graph")
    ]
    assert list(claim.groups()[1:]) == [
        f"{g128:.1f}",
        f"{g16:.1f}",
        f"{100 * f128 / b128:.0f}",
        f"{100 * f16 / b16:.0f}",
        str(ceiling),
        str(clock),
        f"{g16_128:.1f}",
        f"{median(rows, S16_H128, 'kernelopt_seesaw', 'cold'):.1f}",
        f"{g16_16:.1f}",
        f"{100 * f16_128 / b16_128:.0f}",
        f"{100 * f16_16 / b16_16:.0f}",
    ]


def test_the_readme_power_cap_note_is_the_final_runs_clocks() -> None:
    claim = found(
        r"below the (\d+) MHz of the others: s_q=1, h_q=128 at (\d+) MHz, and s_q=16, "
        r"h_q=128 at (\d+) \(([\d.]+) µs L2-flushed, at (\d+)\)",
        flat(README),
    )
    rows = run_rows(*FINAL_RUN)

    def clock(point: str, mode: str) -> int:
        [row] = [
            r
            for r in rows
            if (r["config"]["point"], r["impl"], r["mode"]) == (point, "kernelopt_seesaw", mode)
        ]
        return int(row["sm_clock_mhz"])

    table_points = (S1_H128, S1_H16, S16_H128, S16_H16)
    others = {clock(p, "graph") for p in table_points if p not in (S1_H128, S16_H128)}
    assert others == {int(claim[1])}
    assert int(claim[2]) == clock(S1_H128, "graph")
    assert int(claim[3]) == clock(S16_H128, "graph")
    assert claim[4] == f"{median(rows, S16_H128, 'kernelopt_seesaw', 'cold'):.1f}"
    assert int(claim[5]) == clock(S16_H128, "cold")


def test_the_readme_flashmla_comparison_follows_from_its_figures() -> None:
    text = flat(README)
    anchors = [
        float(v)
        for v in found(
            r"FlashMLA's anchors [^:]*? are ([\d.]+), ([\d.]+), ([\d.]+) and ([\d.]+) µs", text
        ).groups()
    ]
    claim = found(
        r"`seesaw` is ([\d.]+)× faster at both s_q=1 points \(([\d.]+) against ([\d.]+) µs "
        r"at h_q=16\) and at s_q=16, h_q=128, and ([\d.]+)× at s_q=16, h_q=16",
        text,
    )
    rows = run_rows(*FINAL_RUN)
    best = [seesaw_at(rows, p)[1] for p in (S1_H128, S1_H16, S16_H128, S16_H16)]
    ratios = [f"{a / b:.2f}" for a, b in zip(anchors, best, strict=True)]
    assert ratios[:3] == [claim[1]] * 3
    assert (claim[2], claim[3]) == (f"{best[1]:.1f}", f"{anchors[1]:.1f}")
    assert claim[4] == ratios[3]


def test_the_readme_s16_h16_spread_is_the_runs_since_2026_12_04() -> None:
    claim = found(
        r"p20-p80 ([\d.]+)-([\d.]+) µs; ([\d.]+)-([\d.]+) µs in the (\w+) runs since "
        r"(\d{4}-\d\d-\d\d)\)",
        flat(README),
    )
    rows = run_rows(*FINAL_RUN)
    [final] = [
        r
        for r in rows
        if (r["config"]["point"], r["impl"], r["mode"]) == (S16_H16, "kernelopt_seesaw", "graph")
    ]
    assert (claim[1], claim[2]) == (f"{final['p20']:.1f}", f"{final['p80']:.1f}")
    earlier = [
        float(r["median"])
        for r in rows_of("mla_decode.jsonl")[: FINAL_RUN[0] - 1]
        if (r["config"]["point"], r["impl"], r["mode"]) == (S16_H16, "kernelopt_seesaw", "graph")
        and r["gpu"] == "NVIDIA H200"
        and r["timestamp"][:10] >= claim[6]
    ]
    assert (claim[3], claim[4]) == (f"{min(earlier):.1f}", f"{max(earlier):.1f}")
    assert claim[5] == WORDS[len(earlier)]


def test_the_readme_fp8_ratios_are_rows_1277_to_1304() -> None:
    claim = found(
        r"([\d.]+)× faster than `split_kv` on the same FP8 cache at b=32 s=1 h=16 and ([\d.]+)× on "
        r"the b=128 batch \(H200, CUDA graphs, one run: rows (\d+)-(\d+); within (\d+) % of "
        r"`seesaw` on the bfloat16 cache\)",
        flat(README),
    )
    assert (int(claim[3]), int(claim[4])) == FP8_RUN
    fp8, bf16 = run_rows(*FP8_RUN), run_rows(*FINAL_RUN)
    points = ("b=32 s=1 h=16 t=4096", "b=128 s=1 h=16 t~4096")
    for ratio, point in zip((claim[1], claim[2]), points, strict=True):
        seesaw = median(fp8, f"{point} kv=fp8", "kernelopt_seesaw", "graph")
        split_kv = median(fp8, f"{point} kv=fp8", "kernelopt_split_kv", "graph")
        assert ratio == f"{split_kv / seesaw:.2f}", point
        against_bf16 = seesaw / median(bf16, point, "kernelopt_seesaw", "graph") - 1
        assert abs(against_bf16) < int(claim[5]) / 100, point


def test_the_readme_host_cost_is_the_seesaw_rows_of_mla_host_cost() -> None:
    claim = found(
        r"a `seesaw` `run\(\)` at these sizes is bound by the host's launch work \((\d+)-(\d+) µs "
        r"of host time a call on the H200's host on ([\d-]+),",
        flat(README),
    )
    host = [
        r
        for r in rows_of("mla_host_cost.jsonl")
        if (r["impl"], r["mode"]) == ("kernelopt_seesaw", "host")
    ]
    assert {r["timestamp"][:10] for r in host} == {claim[3]}
    times = [r["median"] for r in host]
    assert (int(claim[1]), int(claim[2])) == (round(min(times)), round(max(times)))


def test_the_readme_fp8_split_kv_figures_are_exp_17s_shipped_rows() -> None:
    from kernelopt.experiments import parse_result

    claim = found(
        r"(\d+) % faster than that kernel on the bfloat16 cache with 64 query rows a tile, "
        r"([\d.]+)-([\d.]+)× slower with 16 \(the devlog's exp 17",
        flat(README),
    )
    result = REPO / "docs" / "kernels" / "mla_decode" / "experiments" / "exp_17" / "result.md"
    rows = parse_result(result.read_text(encoding="utf-8")).rows
    bf16 = {r.point: r.median for r in rows if not r.point.endswith(" kv=fp8")}
    shipped: dict[str, float] = {}  # the first FP8 row of a point is the shipped knobs'
    for row in rows:
        if row.point.endswith(" kv=fp8"):
            shipped.setdefault(row.point.removesuffix(" kv=fp8"), row.median)
    ratios = {point: fp8 / bf16[point] for point, fp8 in shipped.items()}
    faster = sorted(f"{100 * (1 - r):.0f}" for r in ratios.values() if r < 1)
    slower = sorted(f"{r:.1f}" for r in ratios.values() if r > 1)
    assert set(faster) == {claim[1]}
    assert (slower[0], slower[-1]) == (claim[2], claim[3])


# ---------------------------------------------------------------------------- the guide


def test_the_guide_says_how_many_of_its_snippets_read_the_example_log() -> None:
    text = GUIDE.read_text(encoding="utf-8")
    claim = found(r"\((\w+) of them read `(examples/logs/[\w-]+)`\)", flat(GUIDE))
    blocks = re.findall(r"^```python\n(.*?)^```$", text, re.M | re.S)
    reading = [b for b in blocks if claim[2] in b]
    assert claim[1] == WORDS[len(reading)]


def requirement_names(requirements: list[str]) -> list[str]:
    return [re.split(r"[<>=;\[ ]", r, maxsplit=1)[0] for r in requirements]


def pyproject_list(key: str) -> list[str]:
    """The strings of one list of pyproject.toml (``dependencies = [...]``, ``dev = [...]``)."""
    text = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    block = found(rf"(?ms)^{key} = \[\n(.*?)^\]", text)[1]
    return re.findall(r'^\s*"([^"]+)",', block, re.M)


def test_the_guide_names_the_dependencies_and_the_dev_extra() -> None:
    text = flat(GUIDE)
    python = found(r'requires-python = ">=([\d.]+)"', (REPO / "pyproject.toml").read_text("utf-8"))
    needs = found(r"kernelopt needs Python ([\d.]+) or newer, ([^.]+)\.", text)
    assert needs[1] == python[1]
    named = {"PyTorch": "torch", "Triton (Linux)": "triton"}
    listed = [named.get(n, n) for n in re.split(r", | and ", needs[2])]
    assert sorted(listed) == sorted(requirement_names(pyproject_list("dependencies")))
    dev = pyproject_list("dev")
    tools = found(r"# dev: ([\w, ]+); (triton==[\d.]+)", text)
    assert tools[1].split(", ") == [
        n for n in requirement_names(dev) if n not in ("numpy", "triton")
    ]
    assert any(r.startswith(tools[2]) for r in dev)
    numpy = found(r"also pins numpy < ([\d.]+)", text)
    assert f"numpy<{numpy[1]}" in dev


def test_the_guide_mla_plan_signature_is_the_code() -> None:
    from kernelopt.kernels.mla import STRATEGIES, MLADecodePlan

    written = found(r"`MLADecodePlan\((cache_seqlens[^`]+)\)`", flat(GUIDE))[1]
    strategies = found(r'strategy="(\w+)"((?: \| "\w+")+)', written)
    # The default first, then the others.
    assert strategies[1] == inspect.signature(MLADecodePlan).parameters["strategy"].default
    assert sorted([strategies[1], *re.findall(r'"(\w+)"', strategies[2])]) == sorted(STRATEGIES)
    names = [re.split(r"[=\s]", p.strip(), maxsplit=1)[0] for p in written.split(",")]
    names = [n for n in names if n and n != "*" and not n.startswith(('"', "|"))]
    actual = [p for p in inspect.signature(MLADecodePlan).parameters]
    assert names == actual


def commands_shown(text: str) -> list[str]:
    """Every ``kernelopt …`` command of a page: console lines and inline code."""
    code = [m[1] for m in INLINE_CODE.findall(FENCE.sub("", text))]
    code += re.findall(r"^\$ (kernelopt [^#\n]+)", text, re.M)
    return [" ".join(c.split()) for c in code if c.startswith("kernelopt ")]


@pytest.mark.parametrize("page", [README, GUIDE, INDEX], ids=lambda p: p.name)
def test_every_option_a_page_shows_is_an_option_of_its_command(page: Path) -> None:
    from kernelopt.cli import build_parser

    leaves = {" ".join(words): p for words, p in leaf_parsers(build_parser())}
    unknown = []
    for command in commands_shown(page.read_text(encoding="utf-8")):
        words = command.split()[1:]
        name = next(
            (
                n
                for n in sorted(leaves, key=len, reverse=True)
                if words[: len(n.split())] == n.split()
            ),
            None,
        )
        if name is None:
            continue  # `kernelopt catalog|diagnose|…`: the list of commands, checked elsewhere
        options = set(re.findall(r"--[a-z][\w-]*", command))
        unknown += [f"{command}: {o}" for o in sorted(options - option_names(leaves[name]))]
    assert unknown == []


def test_the_guide_learn_options_are_options_of_learn() -> None:
    from kernelopt.cli import build_parser

    text = FENCE.sub("", GUIDE.read_text(encoding="utf-8"))
    # The options LEARN's section and "Your own kernel" name on their own, out of a command.
    sections = [("### LEARN", "### DIAGNOSE"), ("### Your own kernel", "### The nine detectors")]
    shown = {
        option
        for start, end in sections
        for option in re.findall(r"`(--[a-z][\w-]*)`", text[text.index(start) : text.index(end)])
    }
    assert shown, "the guide no longer names learn's options"
    [learn] = [p for words, p in leaf_parsers(build_parser()) if words == ("learn",)]
    assert shown <= option_names(learn)


def test_the_guide_and_index_list_every_step_of_the_worked_example() -> None:
    scripts = sorted(p.name for p in (REPO / "examples" / "mla_decode").glob("[0-9][0-9]_*.py"))
    table = re.findall(r"^\| `(\d\d_\w+\.py)` \|", GUIDE.read_text(encoding="utf-8"), re.M)
    assert table == scripts
    assert found(r"for all (\w+) on two cores", flat(GUIDE))[1] == WORDS[len(scripts)]
    assert f"{WORDS[len(scripts)]} scripts that rebuild an MLA decode kernel" in flat(INDEX)


# ---------------------------------------------------------------------------- the index


def test_the_index_links_every_document() -> None:
    text = INDEX.read_text(encoding="utf-8")
    linked = set(re.findall(r"\]\(([\w-]+\.md)\)", text))
    documents = {p.name for p in (REPO / "docs").glob("*.md")} - {"index.md"}
    assert documents <= linked


def test_the_index_counts_the_example_logs() -> None:
    logs = sorted(p.parent.name for p in (REPO / "examples" / "logs").glob("*/CLAUDE.md"))
    claim = found(
        r"experiment logs built from measured H200 runs that show (\w+) of the situations "
        r"\(([^)]+)\)",
        flat(INDEX),
    )
    assert claim[1] == WORDS[len(logs)]
    assert len(re.split(r", ", claim[2])) == len(logs)

"""`kernelopt catalog ...`: every subcommand, text and --json, and its exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kernelopt import cli
from kernelopt.catalog import Catalog, lint_tree, parse_condition, render_entry

from .conftest import deny_listing, make_entry, write_entry


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = cli.main(["catalog", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_list_text_and_json_with_filters(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "list")
    assert code == 0 and len(out.strip().split("\n")) == len(Catalog.builtin())
    code, out, _ = run(capsys, "list", "--json", "--kind", "anti-pattern", "--language", "triton")
    data = json.loads(out)
    assert code == 0 and {d["kind"] for d in data} == {"anti-pattern"}
    assert "triton-interpreter-bf16-dot" in [d["id"] for d in data]
    assert all(d["path"].endswith(".md") for d in data)
    code, out, _ = run(capsys, "list", "--json", "--family", "mla-decode")
    assert "kv-tile-shared-load" in [d["id"] for d in json.loads(out)]


def test_index_refuses_a_folder_that_holds_other_markdown(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # `kernelopt catalog index docs` for docs/knowledge: docs/index.md may be the home page
    # of the project's site, and docs/ holds pages that are no entries.
    docs = tmp_path / "docs"
    write_entry(docs / "knowledge", make_entry(interactions=()))
    (docs / "guide").mkdir()
    (docs / "guide" / "install.md").write_text("# Install\n", encoding="utf-8")
    code, out, err = run(capsys, "index", str(docs))
    assert code == 2 and out == ""
    assert err.startswith("kernelopt catalog: error: Expected a knowledge tree") and "guide" in err
    assert len(err.strip().split("\n")) == 1
    assert not (docs / "index.md").exists()
    assert run(capsys, "index", str(docs / "knowledge"))[0] == 0


def test_new_refuses_a_folder_that_index_refuses(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A project's docs/knowledge/index.md of its own, or docs/ named for docs/knowledge/:
    # `catalog index` refuses both, so `catalog new` must not leave an entry there first.
    docs = tmp_path / "docs"
    (docs / "knowledge").mkdir(parents=True)
    page = docs / "knowledge" / "index.md"
    page.write_text("# Our knowledge base\n", encoding="utf-8")
    (docs / "guide.md").write_text("# Guide\n", encoding="utf-8")
    # docs/ is refused at its first page outside the entry folders: guide.md at its root.
    for tree, got in ((docs / "knowledge", "another file at"), (docs, "got guide.md")):
        code, out, err = run(
            capsys, "new", "--kind", "optimization", "My Thing", "--dir", str(tree)
        )
        assert (code, out) == (2, "")
        assert err.startswith(f"kernelopt catalog: error: Expected a knowledge tree at {tree}")
        assert got in err and len(err.strip().split("\n")) == 1
        assert run(capsys, "index", str(tree))[0] == 2  # what `new` refused, `index` refuses
    assert sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*")) == [
        "docs",
        "docs/guide.md",
        "docs/knowledge",
        "docs/knowledge/index.md",
    ]


def test_show_prints_the_file_or_json(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "show", "online-softmax")
    assert code == 0 and out == render_entry(Catalog.builtin().get("online-softmax"))
    code, out, _ = run(capsys, "show", "online-softmax", "--json")
    data = json.loads(out)
    assert data["id"] == "online-softmax" and data["fundamental_for"] == ["attention", "softmax"]
    assert cli.main(["catalog", "show", "nope"]) == 2
    assert "Expected a known entry id" in capsys.readouterr().err


def test_search_checks_a_plan_against_the_anti_patterns(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # An experiment's plan, searched before it is built: the recorded pitfalls it walks into.
    plan = tmp_path / "plan.md"
    plan.write_text(
        "# Plan\n\nRun the two row tiles as a cluster of two. Each loader copies half of a\n"
        "tile into both programs by TMA multicast; a consumer gives a slot back to the\n"
        "other program with mapa and a remote mbarrier arrive.\n",
        encoding="utf-8",
    )
    code, out, _ = run(capsys, "search", "--kind", "anti-pattern", "--file", str(plan), "--json")
    data = json.loads(out)
    assert code == 0 and data[0]["id"] == "clusters-of-sm-filling-programs"
    assert {d["kind"] for d in data} == {"anti-pattern"}
    code, out, _ = run(capsys, "search", "--file", str(plan), "--json")
    assert code == 0 and {d["kind"] for d in json.loads(out)} == {"anti-pattern", "optimization"}
    # --limit counts what --kind keeps; words on the line are searched with the file's.
    code, out, _ = run(
        capsys, "search", "--kind", "anti-pattern", "--file", str(plan), "--limit", "1"
    )
    assert code == 0 and out.split()[1] == "clusters-of-sm-filling-programs"
    assert len([line for line in out.splitlines() if not line.lstrip().startswith("- ")]) == 1
    code, out, _ = run(
        capsys,
        "search",
        "online",
        "softmax",
        "--file",
        str(plan),
        "--kind",
        "optimization",
        "--json",
    )
    assert code == 0 and "online-softmax" in [d["id"] for d in json.loads(out)]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((), "Expected words to look for (TEXT or --file), got none"),
        (("  ",), "Expected words to look for (TEXT or --file), got none"),
        (
            ("--file", "{tmp}/missing.md"),
            "Expected a text file to search with (--file), got no file at",
        ),
        (
            ("--file", "{tmp}"),
            "Expected a text file to search with (--file), got a directory at",
        ),
        (("--file", "{tmp}/latin1.md"), "Expected UTF-8 text, got a byte that is not"),
        (("--file", "{tmp}/blank.md"), "Expected words to look for (TEXT or --file), got none"),
    ],
)
def test_search_refuses_nothing_to_look_for(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: tuple[str, ...], message: str
) -> None:
    (tmp_path / "latin1.md").write_bytes("plan for the caf\u00e9 kernel".encode("latin-1"))
    (tmp_path / "blank.md").write_text("\n  \n", encoding="utf-8")
    code, out, err = run(capsys, "search", *(a.format(tmp=tmp_path) for a in args))
    assert code == 2 and out == ""
    assert message in err and len(err.strip().split("\n")) == 1


def test_search_and_match(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "search", "flash", "decoding", "--json")
    assert code == 0 and json.loads(out)[0]["id"] == "split-kv-flash-decoding"
    code, out, _ = run(
        capsys, "match", "--metric", "dram_pct=85", "--metric", "tc_pct=10", "--json"
    )
    assert code == 0 and {m["id"] for m in json.loads(out)} == {"kernel-fusion", "online-softmax"}
    code, out, _ = run(capsys, "match", "--shape", "s_q=1")
    assert (
        code == 0 and out.split()[1] == "size-1-axis-shortcut" and "shape s_q == 1 (s_q=1)" in out
    )
    assert run(capsys, "match", "--metric", "dram_pct")[0] == 2
    assert run(capsys, "match")[0] == 2


@pytest.mark.parametrize(
    ("args", "message"),
    [
        # A misspelt name matches nothing and would read as "nothing applies".
        (["--metric", "dram_pc=85"], "--metric: Expected a metric name"),
        (["--metric", "s_q=1"], "got 's_q'"),  # a shape fact given as a metric
        (["--shape", "sq=1"], "--shape: Expected a shape fact name"),
        (
            ["--metric", "dram_pct=nan"],
            "--metric: Expected --metric NAME=NUMBER with a finite number, got 'dram_pct=nan'",
        ),
        # No measurement is infinite; 1e400 reads as inf.
        (
            ["--shape", "s_q=inf"],
            "--shape: Expected --shape NAME=NUMBER with a finite number, got 's_q=inf'",
        ),
        (["--metric", "dram_pct=1e400"], "got 'dram_pct=1e400'"),
        # float() reads other scripts' digits and Python's digit grouping; a user types
        # numbers in ASCII digits, as every other count and point of the CLI is read.
        (
            ["--metric", "dram_pct=\uff18\uff15"],
            "--metric: Expected --metric NAME=NUMBER in ASCII digits, without '_', got "
            "'dram_pct=\uff18\uff15'",
        ),
        (["--metric", "dram_pct=8\u0665"], "in ASCII digits, without '_', got 'dram_pct=8"),
        (["--shape", "seqlen_k=1_000"], "--shape: Expected --shape NAME=NUMBER in ASCII"),
        (["--metric", "dram_pct=1e\uff12"], "in ASCII digits, without '_', got 'dram_pct=1e"),
        # No shape has a negative size or share: a sign typed by mistake, not "nothing applies".
        (["--shape", "s_q=-1"], "--shape: Expected --shape NAME=NUMBER >= 0, got 's_q=-1'"),
        # Which of two values would the query use? Neither silently.
        (
            ["--metric", "dram_pct=85", "--metric", "dram_pct=90"],
            "--metric: Expected each name once, got 'dram_pct' twice",
        ),
    ],
)
def test_match_refuses_names_no_entry_reads_and_nan(
    capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    code, out, err = run(capsys, "match", *args)
    assert code == 2 and out == "" and message in err
    assert "Traceback" not in err


@pytest.mark.parametrize("value", ["85", "85.0", " 85 ", "+85", "8.5e1", ".85e2", "85."])
def test_match_reads_numbers_in_ascii_spellings(
    capsys: pytest.CaptureFixture[str], value: str
) -> None:
    code, out, _ = run(capsys, "match", "--metric", f"dram_pct={value}", "--json")
    expected_out = run(capsys, "match", "--metric", "dram_pct=85", "--json")[1]
    assert code == 0 and out == expected_out


def test_match_accepts_a_metric_of_the_users_own_tree(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "k"
    own = make_entry(triggers=(parse_condition("my_stall_pct > 40"),), interactions=())
    write_entry(root, own)
    code, out, err = run(capsys, "match", "--metric", "my_stall_pct=55", "--knowledge", str(root))
    assert code == 0, err
    assert out.split()[1] == "demo-trick"
    # A vocabulary metric no entry reads is no mistake: it matches nothing.
    code, out, _ = run(capsys, "match", "--metric", "regs_per_thread=255")
    assert (code, out) == (0, "no matching entries\n")


def test_lint_exit_codes_and_file_line_output(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(capsys, "lint")[0] == 0
    root = tmp_path / "k"
    path = write_entry(root, make_entry())
    path.write_text(
        path.read_text(encoding="utf-8").replace("## Mechanism", "## Mechanics"), encoding="utf-8"
    )
    code, out, err = run(capsys, "lint", str(root))
    assert code == 1
    assert f"{path}:" in out and "[Mechanics] Expected a section in" in out
    assert "1 error," in err
    code, out, _ = run(capsys, "lint", str(root), "--json")
    data = json.loads(out)
    errors = [p for p in data["problems"] if p["severity"] == "error"]
    assert code == 1 and data["errors"] == 1 and errors[0]["line"] is not None


def test_index_rewrites_index_md(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "k"
    write_entry(root, make_entry())
    code, out, _ = run(capsys, "index", str(root))
    assert code == 0 and out.strip() == str(root / "index.md")
    assert "[Demo Trick](optimizations/demo-trick.md)" in (root / "index.md").read_text(
        encoding="utf-8"
    )
    assert run(capsys, "index", str(tmp_path / "missing"))[0] == 2


def test_knowledge_flag_merges_a_user_tree(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "k"
    write_entry(root, make_entry(id="online-softmax", name="My Online Softmax", interactions=()))
    code, out, _ = run(capsys, "show", "online-softmax", "--json", "--knowledge", str(root))
    assert code == 0 and json.loads(out)["name"] == "My Online Softmax"
    (root / "optimizations" / "broken.md").write_text("# Broken\n", encoding="utf-8")
    code, out, err = run(capsys, "list", "--knowledge", str(root))
    assert code == 0 and "1 path left out for errors," in err and "kernelopt catalog lint" in err


def test_new_refuses_an_id_the_tree_or_the_builtins_use(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "k"
    code, _, _ = run(capsys, "new", "--kind", "optimization", "Tile Swap", "--dir", str(root))
    assert code == 0
    # The same id as an anti-pattern, or in a language folder, would be a duplicate.
    code, _, err = run(capsys, "new", "--kind", "anti-pattern", "tile swap", "--dir", str(root))
    assert code == 2 and "Expected a new entry id, got 'tile-swap', already in" in err
    code, _, err = run(
        capsys, "new", "--kind", "optimization", "Online Softmax", "--dir", str(root)
    )
    assert code == 2 and "'online-softmax', a built-in entry" in err
    assert not (root / "optimizations" / "online-softmax.md").exists()
    assert not (root / "anti-patterns").exists()


def test_new_scaffold_says_what_to_fill_and_passes_lint_once_filled(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "k"
    code, out, err = run(
        capsys,
        "new",
        "--kind",
        "anti-pattern",
        "--language",
        "triton",
        "Split Cache Thrash",
        "--dir",
        str(root),
    )
    path = Path(out.strip())
    assert code == 0 and path == root / "languages/triton/anti-patterns/split-cache-thrash.md"
    assert "fill in every <FILL: ...> placeholder" in err
    code, out, _ = run(capsys, "lint", str(root))
    assert code == 1
    fill_lines = [line for line in out.split("\n") if "placeholder filled in" in line]
    text = path.read_text(encoding="utf-8")
    assert len(fill_lines) == text.count("<FILL")
    assert any("[metadata]" in line for line in fill_lines) and any(
        "[Mechanism]" in line for line in fill_lines
    )
    assert (
        run(
            capsys,
            "new",
            "--kind",
            "anti-pattern",
            "--language",
            "triton",
            "Split Cache Thrash",
            "--dir",
            str(root),
        )[0]
        == 2
    )

    filled = {
        "<FILL: kernel families": "decode-attention",
        "<FILL: lower-case phrases": "cache thrash",
        "<FILL: the context": "Split-KV decode whose partials overflow L2.",
        "<FILL: what the condition shows>": "L2 misses.",
        "<FILL: why the shape matters>": "Long caches.",
        "<FILL: how it fails": "Partials evict KV lines.",
        "<FILL: a metric it moves": "L2 hit rate",
        "<FILL: a short code snippet": "splits = 64",
        "<FILL: local experiment or external report>": "local experiment",
        "<FILL: where the numbers come from": "experiments/exp_2/result.md",
        "<FILL: config": "b=32 s=1",
        "<FILL: before": "50 us",
        "<FILL: after": "60 us",
        "<FILL: change": "+20 %",
        "<FILL: the device-agnostic": "Keep partials small.",
        "<FILL: a known failure mode>": "Hard to see without L2 counters.",
    }
    lines = []
    for line in text.split("\n"):
        if line.startswith("- Metric: `<FILL"):
            line = "- Metric: `l2_hit_pct < 50` — <FILL: what the condition shows>"
        if line.startswith("- Shape: `<FILL"):
            line = "- Shape: `seqlen_k > 8192` — <FILL: why the shape matters>"
        while "<FILL" in line:
            start = line.index("<FILL")
            end = line.index(">", start) + 1
            key = next(k for k in filled if line[start:end].startswith(k.rstrip(">")))
            line = line[:start] + filled[key] + line[end:]
        lines.append(line)
    path.write_text("\n".join(lines), encoding="utf-8")
    run(capsys, "index", str(root))
    problems = lint_tree(root)
    assert [p for p in problems if p.is_error] == []
    code, out, _ = run(capsys, "show", "split-cache-thrash", "--knowledge", str(root))
    assert code == 0 and "- Metric: `l2_hit_pct < 50` — L2 misses." in out


def test_catalog_without_subcommand_is_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["catalog"]) == 2


def test_cutile_dsl_is_read_as_cutile(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "k"
    code, out, _ = run(
        capsys, "new", "--kind", "optimization", "--language", "cutile-dsl", "Tile Swap",
        "--dir", str(root),
    )  # fmt: skip
    assert code == 0 and Path(out.strip()) == root / "languages/cutile/optimizations/tile-swap.md"
    assert "- scope: cutile\n" in Path(out.strip()).read_text(encoding="utf-8")
    # A tree that already spells the folder cutile-dsl keeps it.
    other = tmp_path / "other"
    (other / "languages" / "cutile-dsl").mkdir(parents=True)
    code, out, _ = run(
        capsys, "new", "--kind", "anti-pattern", "--language", "cutile", "Tile Swap",
        "--dir", str(other),
    )  # fmt: skip
    assert code == 0
    assert Path(out.strip()) == other / "languages/cutile-dsl/anti-patterns/tile-swap.md"
    for command in ("list", "match"):
        extra = ["--metric", "dram_pct=85"] if command == "match" else []
        code, _, err = run(capsys, command, "--language", "cutile-dsl", *extra)
        assert code == 0, err


@pytest.mark.parametrize(
    "args",
    [
        ["lint", "{a}", "--knowledge", "{b}"],
        ["index", "{a}", "--knowledge", "{b}"],
        ["new", "X Y", "--kind", "optimization", "--dir", "{a}", "--knowledge", "{b}"],
    ],
)
def test_two_different_trees_are_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, args: list[str]
) -> None:
    # One of the two would be dropped without a word: lint would pass the wrong tree.
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    code, out, err = run(capsys, *(arg.format(a=a, b=b) for arg in args))
    assert (code, out) == (2, "")
    assert f"Expected one knowledge tree, got {a} and --knowledge {b}" in err, err
    assert list(a.iterdir()) == [] and list(b.iterdir()) == []


@pytest.mark.parametrize("command", [["list"], ["show", "online-softmax"], ["search", "softmax"]])
def test_a_knowledge_tree_that_is_not_there_is_a_usage_error(
    command: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A misspelt --knowledge would otherwise answer from the built-ins alone, exit 0.
    missing = tmp_path / "knowlege"
    code, out, err = run(capsys, *command, "--knowledge", str(missing))
    assert code == 2 and out == ""
    assert f"Expected a knowledge folder, got {missing} (no such folder)" in err


COMMANDS = [
    ["list"],
    ["show", "online-softmax"],
    ["search", "softmax"],
    ["match", "--metric", "dram_pct=85"],
    ["lint"],
    ["index"],
]


@pytest.mark.parametrize("command", COMMANDS)
def test_a_knowledge_tree_that_cannot_be_listed_is_a_usage_error(
    command: list[str],
    tree: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Read as empty, `list` printed the built-ins alone and exited 0 without a word.
    before = sorted(tree.rglob("*"))
    deny_listing(monkeypatch, tree)
    code, out, err = run(capsys, *command, "--knowledge", str(tree))
    assert (code, out) == (2, "")
    assert err == (
        "kernelopt catalog: error: Expected a knowledge folder, got "
        f"{tree} (not readable: Permission denied)\n"
    )
    monkeypatch.undo()
    assert sorted(tree.rglob("*")) == before


def test_a_folder_of_the_tree_that_cannot_be_listed_is_reported(
    tree: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    deny_listing(monkeypatch, tree / "languages")
    code, out, err = run(capsys, "list", "--knowledge", str(tree))
    assert code == 0 and "demo-trick" in out and "demo-trap" not in out
    assert err == (
        f"kernelopt catalog: 1 path left out for errors, 0 warnings in {tree}; "
        f"run `kernelopt catalog lint {tree}` for every problem\n"
    )
    code, out, _ = run(capsys, "lint", str(tree))
    assert code == 1
    folder = tree / "languages"
    assert f"{folder}: Expected a folder kernelopt can read, got Permission denied" in out


@pytest.mark.parametrize("command", [c[0] for c in COMMANDS])
def test_the_help_says_an_unreadable_knowledge_tree_exits_2(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        cli.main(["catalog", command, "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert "2 usage or input error (" in help_text
    assert "a --knowledge path that is missing, not a folder or not readable)" in help_text


def test_index_warns_about_entries_it_could_not_read(
    tree: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # The index is written from what could be read; a row missing without a word would
    # read as an entry that is gone.
    deny_listing(monkeypatch, tree / "languages")
    code, out, err = run(capsys, "index", str(tree))
    assert (code, out) == (0, f"{tree / 'index.md'}\n")
    assert "demo-trap" not in (tree / "index.md").read_text(encoding="utf-8")
    assert err == (
        f"kernelopt catalog: 1 path left out for errors, 0 warnings in {tree}; "
        f"run `kernelopt catalog lint {tree}` for every problem\n"
    )
    monkeypatch.undo()
    assert run(capsys, "index", str(tree))[2] == ""


def test_the_warning_counts_entries_left_out_where_lint_counts_their_problems(
    tree: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A new entry not yet filled in is one entry left out, with a fault at every <FILL: …>:
    # "1 error" beside lint's list of them read as a count that disagreed with lint's.
    code, _, _ = run(capsys, "new", "Half Written", "--kind", "optimization", "--dir", str(tree))
    assert code == 0
    code, lint_out, _ = run(capsys, "lint", str(tree))
    assert code == 1 and lint_out.count("half-written") > 1
    code, out, err = run(capsys, "list", "--knowledge", str(tree))
    assert code == 0 and "demo-trick" in out
    assert err == (
        f"kernelopt catalog: 1 path left out for errors, 0 warnings in {tree}; "
        f"run `kernelopt catalog lint {tree}` for every problem\n"
    )

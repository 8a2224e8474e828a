"""The knowledge shipped with kernelopt: required ids, fundamentals, evidence with sources."""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from kernelopt.catalog import Catalog, Entry, Evidence, Kind, SourceType

from ..conftest import CORPUS, REPO, require_shared

CATALOG = Catalog.builtin()
ANCHORS = CORPUS.parent / "anchors"
# A measurement file named in a local block's Source: anchors/<file> (this project's H200
# runs, beside the repository) or a path inside the repository; a test under tests/ that
# measures what the block states (and asserts it) counts as one.
CITED_FILE = re.compile(
    r"(?<![\w/.-])([\w.-]+(?:/[\w.-]+)+\.(?:jsonl|json|md|txt)|tests/[\w./-]+\.py)(?![\w-])"
)

REQUIRED = {
    ("optimization", "shared"): [
        "online-softmax", "split-kv-flash-decoding", "split-kv-lse-combine",
        "head-grouping-mma-tile", "paged-kv-cache", "kv-tile-shared-load", "buffer-persistence",
        "cuda-graphs",
        "size-1-axis-shortcut", "dominant-shape-specialization", "uniform-length-fast-path",
        "cuda-event-instrumentation", "exp2-folded-scale", "software-pipelining", "persistent-grid",
        "vectorized-coalesced-loads", "kernel-fusion", "pruned-autotuning",
    ],
    ("optimization", "triton"): ["dot-input-precision", "block-pointers-tma"],
    ("anti-pattern", "shared"): [
        "bf16-accumulation", "autotune-explosion", "per-call-allocation", "too-many-kv-splits",
        "hot-l2-timing", "lse-base-mismatch", "bucket-padding-waste",
    ],
    ("anti-pattern", "triton"): ["triton-interpreter-bf16-dot"],
}  # fmt: skip


def test_at_least_25_entries_and_every_required_id() -> None:
    assert len(CATALOG) >= 25
    for (kind, scope), wanted in REQUIRED.items():
        for entry_id in wanted:
            entry = CATALOG.get(entry_id)
            assert (entry.kind.value, entry.scope) == (kind, scope), entry_id


@pytest.mark.parametrize(
    ("entry_id", "families"),
    [
        ("online-softmax", {"attention", "softmax"}),
        ("split-kv-flash-decoding", {"decode-attention"}),
        ("split-kv-lse-combine", {"decode-attention"}),
        ("head-grouping-mma-tile", {"mla-decode"}),
        ("kv-tile-shared-load", {"mla-decode"}),
        ("cuda-event-instrumentation", {"any"}),
        ("buffer-persistence", {"decode-attention"}),
    ],
)
def test_fundamental_for(entry_id: str, families: set[str]) -> None:
    assert set(CATALOG.get(entry_id).fundamental_for) == families


def test_split_kv_keywords_cover_the_usual_spellings() -> None:
    keywords = set(CATALOG.get("split-kv-flash-decoding").keywords)
    assert {
        "split-kv",
        "split kv",
        "flash-decoding",
        "flash decoding",
        "num_splits",
        "kv splits",
    } <= keywords


@pytest.mark.parametrize("entry", list(CATALOG), ids=lambda e: e.id)
def test_every_entry_is_taggable_and_cites_its_evidence(entry: Entry) -> None:
    assert len(entry.keywords) >= 3
    for block in entry.evidence:
        if block.source_type is SourceType.LOCAL_EXPERIMENT:
            assert _cited_files(block.source), f"{entry.id}: name the measurement file"
            assert block.rows, "a local block exists to carry measured rows"
        else:
            # A URL, or owner/repo followed by a path or a document name.
            assert re.search(r"https?://|[\w.-]+/[\w.-]+ \S", block.source), block.source
        if not block.rows:
            assert block.notes.startswith("No "), f"{entry.id}: say plainly there are no numbers"


def _cited_files(source: str) -> list[Path]:
    """The measurement files a local evidence block's Source names; each must exist."""
    files = []
    for name in CITED_FILE.findall(source):
        if name.startswith("anchors/"):
            path = require_shared(ANCHORS, "the H200 anchor measurements") / name.split("/", 1)[1]
        else:
            path = REPO / name
        assert path.is_file(), f"Expected the cited measurement file {path}, got nothing there"
        files.append(path)
    return files


def _local_blocks() -> Iterator[tuple[Entry, Evidence]]:
    """Every evidence block of the shipped entries that cites this repository's own
    measurements, with its entry."""
    for entry in CATALOG:
        for block in entry.evidence:
            if block.source_type is SourceType.LOCAL_EXPERIMENT:
                yield entry, block


# Any repository path a source names (a kernel file as well as a measurement file).
_REPO_PATH = re.compile(r"(?<![\w/.:-])((?:[\w.-]+/)+[\w.-]+\.\w+)")


def test_every_cited_file_exists() -> None:
    """Local sources name files of this repository or anchors/; an external source naming
    one of the public logs kept in shared/corpus names a file that copy holds."""
    corpus = require_shared(CORPUS, "the corpus of real logs")
    copies = {}
    for manifest in corpus.glob("*/MANIFEST.md"):
        found = re.search(r"\*\*([\w.-]+/[\w.-]+)\*\*", manifest.read_text(encoding="utf-8"))
        if found:
            copies[found.group(1)] = manifest.parent
    checked = 0
    for entry in CATALOG:
        for block in entry.evidence:
            if block.source_type is SourceType.LOCAL_EXPERIMENT:
                for name in _REPO_PATH.findall(block.source):
                    base = ANCHORS.parent if name.startswith("anchors/") else REPO
                    assert (base / name).is_file(), (entry.id, name)
                    checked += 1
                continue
            repo = block.source.split(" ", 1)[0]
            if repo in copies:
                rest = block.source.split(" ", 1)[1]
                for name in re.findall(r"[\w.-]+(?:/[\w.-]+)*\.md", rest):
                    assert (copies[repo] / name).is_file(), (entry.id, repo, name)
                    checked += 1
    assert checked >= 40


def _numbers_in(path: Path) -> list[float]:
    """Every number a measurement file holds: JSON values, or numbers in its text."""
    text = path.read_text(encoding="utf-8")
    if path.suffix in (".json", ".jsonl"):
        found: list[float] = []

        def walk(value: object) -> None:
            if isinstance(value, bool):
                return
            if isinstance(value, (int, float)):
                found.append(float(value))
            elif isinstance(value, dict):
                for item in value.values():
                    walk(item)
            elif isinstance(value, list):
                for item in value:
                    walk(item)

        lines = text.splitlines() if path.suffix == ".jsonl" else [text]
        for line in lines:
            if line.strip():
                walk(json.loads(line))
        return found
    return [float(n.replace(",", "")) for n in re.findall(r"\d[\d,]*(?:\.\d+)?(?:e-?\d+)?", text)]


def _half_last_digit(text: str) -> float:
    mantissa = text.split("e")[0]
    decimals = len(mantissa.split(".")[1]) if "." in mantissa else 0
    exponent = int(text.split("e")[1]) if "e" in text else 0
    return 0.5 * 10.0 ** (exponent - decimals)


def test_local_numbers_are_in_the_cited_measurement_files() -> None:
    require_shared(ANCHORS, "the H200 anchor measurements")
    checked = 0
    for entry, block in _local_blocks():
        values = [v for path in _cited_files(block.source) for v in _numbers_in(path)]
        for row in block.rows:
            for cell in (row.before, row.after):
                for number, unit in re.findall(r"(\d+(?:\.\d+)?(?:e-?\d+)?) ?(µs|ms)?", cell):
                    if unit == "" and "e" not in number:
                        continue  # a count, a rate or a percentage: not a time
                    value = float(number)
                    tol = _half_last_digit(number)
                    # A time may be given in ms where the file holds µs.
                    wanted = [value, value * 1000.0] if unit == "ms" else [value]
                    assert any(
                        abs(v - w) <= tol * (w / value if value else 1.0) + 1e-12
                        for v in values
                        for w in wanted
                    ), (entry.id, block.source, cell)
                    checked += 1
    assert checked >= 40


# A fenced block and its language tag; fences are matched as the template reads them.
_FENCED = re.compile(r"^(```|~~~)[ \t]*(\w*)[^\n]*\n(.*?)^\1[ \t]*$", re.S | re.M)


@pytest.mark.parametrize("entry", list(CATALOG), ids=lambda e: e.id)
def test_python_snippets_parse(entry: Entry) -> None:
    # A reader copies these: a snippet that does not even parse (a "..." standing for
    # parameters) has to be rewritten before it can be tried. "..." as a body or an
    # argument is Python and stays.
    fields = (entry.mechanism, entry.implementation, entry.generalization)
    texts = (*fields, *(block.notes for block in entry.evidence))
    for text in texts:
        for _fence, language, code in _FENCED.findall(text):
            if language.lower() not in ("python", "py"):
                continue
            try:
                ast.parse(code)
            except SyntaxError as error:
                line = code.split("\n")[(error.lineno or 1) - 1]
                pytest.fail(f"{entry.id}: {error.msg} at snippet line {error.lineno}: {line!r}")


def test_every_kind_and_language_is_represented() -> None:
    assert {e.kind for e in CATALOG} == {Kind.OPTIMIZATION, Kind.ANTI_PATTERN}
    assert {"shared", "triton", "cuda"} <= {e.scope for e in CATALOG}


def test_loading_is_cached_and_import_stays_light() -> None:
    assert Catalog.builtin() is CATALOG
    code = (
        "import sys, kernelopt.catalog as c; c.Catalog.builtin(); "
        "print(','.join(m for m in ('torch', 'triton', 'numpy', 'cattrs') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_builtin_files_live_in_the_package() -> None:
    source = CATALOG.source("online-softmax")
    assert source is not None and source.parts[-4:] == (
        "catalog",
        "knowledge",
        "optimizations",
        "online-softmax.md",
    )
    assert isinstance(source, Path)


# A local block's Source names the lines of a JSONL file it read: "lines 5-6, 13-20",
# "rows 1-21", "lines 1-15, 16-30 and 31-45", or "lines 4 and 12 of each" after two files.
_LINE_SPEC = re.compile(r"(?:lines|rows) (\d+(?:-\d+)?(?:(?:, | and )\d+(?:-\d+)?)*)( of each)?")
# A time in a Before or After cell; a bare number is a count, a rate or a percentage.
_TIME = re.compile(r"(\d+(?:\.\d+)?(?:e-?\d+)?) ?(µs|ms)\b")


def _line_numbers(spec: str) -> set[int]:
    numbers: set[int] = set()
    for part in re.split(r", | and ", spec):
        first, _, last = part.partition("-")
        numbers.update(range(int(first), int(last or first) + 1))
    return numbers


def _cited_lines(source: str) -> dict[str, set[int]]:
    """Each JSONL file a Source names, with the line numbers it names for that file."""
    files = [m for m in CITED_FILE.finditer(source) if m.group(1).endswith(".jsonl")]
    cited: dict[str, set[int]] = {}
    shared: set[int] = set()
    for spec in _LINE_SPEC.finditer(source):
        if spec.group(2):
            shared |= _line_numbers(spec.group(1))
    for found in files:
        own = _LINE_SPEC.match(source, found.end() + 1)
        between = source[found.end() : own.start()] if own else ""
        if own and between.strip(" ,") == "" and not own.group(2):
            cited[found.group(1)] = _line_numbers(own.group(1))
        else:
            cited[found.group(1)] = set(shared)
    return cited


def _values(value: object) -> list[float]:
    if isinstance(value, bool):
        return []
    if isinstance(value, (int, float)):
        return [float(value)]
    if isinstance(value, dict):
        return [v for item in value.values() for v in _values(item)]
    if isinstance(value, list):
        return [v for item in value for v in _values(item)]
    return []


def _times(cell: str) -> list[tuple[str, float]]:
    """The times a cell states, in µs, each with its text (for the rounding tolerance)."""
    return [(n, float(n) * (1000.0 if unit == "ms" else 1.0)) for n, unit in _TIME.findall(cell)]


def test_local_times_are_in_the_cited_lines() -> None:
    """A time taken from a JSONL file is in the lines the Source names for it (within the
    rounding of its last digit), and a block citing an experiment log holds only times that
    log (or another file it names) states: evidence can't drift from its source silently."""
    require_shared(ANCHORS, "the H200 anchor measurements")
    checked = 0
    for entry, block in _local_blocks():
        names = CITED_FILE.findall(block.source)
        if not any(n.endswith(".jsonl") or re.search(r"exp_\d+/result\.md$", n) for n in names):
            continue
        values: list[float] = []
        for name, lines in _cited_lines(block.source).items():
            text = (REPO / name).read_text(encoding="utf-8").splitlines()
            assert lines, f"{entry.id}: name the lines of {name} the numbers come from"
            assert max(lines) <= len(text), (entry.id, name, max(lines), len(text))
            for number in sorted(lines):
                values += _values(json.loads(text[number - 1]))
        for path in _cited_files(block.source):
            if path.suffix != ".jsonl":
                values += _numbers_in(path)
        for row in block.rows:
            for cell in (row.before, row.after):
                for text, value in _times(cell):
                    tol = _half_last_digit(text) * (value / float(text)) + 1e-9
                    assert any(abs(v - value) <= tol for v in values), (
                        f"{entry.id}: {text} in {cell!r} is not in {block.source}"
                    )
                    checked += 1
    assert checked >= 200


_SIGNED_PERCENT = re.compile(r"^([+-])(\d+(?:\.\d+)?) ?%")
_TIMES_FASTER = re.compile(r"^(\d+(?:\.\d+)?)× (?:faster|slower|lower)")


@pytest.mark.parametrize("entry", list(CATALOG), ids=lambda e: e.id)
def test_changes_follow_from_before_and_after(entry: Entry) -> None:
    """A signed percentage or an N× in Change is what Before and After give (within the
    rounding of the stated figure and of the two times). A change that is another statistic
    (the median of per-round ratios under a moving clock) says so in its row."""
    for block in entry.evidence:
        for row in block.rows:
            before, after = _times(row.before), _times(row.after)
            if not (before and after) or any(c in row.before + row.after for c in "–/"):
                continue  # not a single time on each side
            if "per-round" in row.change + row.config:
                continue
            b, a = before[0][1], after[0][1]
            percent = _SIGNED_PERCENT.match(row.change)
            times = _TIMES_FASTER.match(row.change)
            if percent:
                stated = float(percent.group(2)) * (-1.0 if percent.group(1) == "-" else 1.0)
                got, tol = (a / b - 1.0) * 100.0, _half_last_digit(percent.group(2)) + 0.05
            elif times:
                stated, got = float(times.group(1)), max(a, b) / min(a, b)
                tol = _half_last_digit(times.group(1)) + 0.01
            else:
                continue
            assert abs(got - stated) <= tol, (
                f"{entry.id}: {row.before} → {row.after} is {got:+.2f}, the row says {row.change!r}"
            )


# A ridge point stated in a block's rows or notes: "ridge 163", "ridge of 160 FLOP/byte",
# "ridge about 160-163 FLOP/byte".
_RIDGE = re.compile(r"ridge (?:about |of )?(\d+)(?:-(\d+))?")


def test_stated_ridges_are_those_of_the_cited_anchor_runs() -> None:
    """A ridge (matmul rate / copy bandwidth) in an evidence block is the ratio of the
    ceilings of an anchor run the block cites, rounded: a ridge taken from another run
    than the one cited can't be checked against the source."""
    require_shared(ANCHORS, "the H200 anchor measurements")
    checked = 0
    for entry, block in _local_blocks():
        anchors = [p for p in _cited_files(block.source) if p.parent == ANCHORS]
        texts = [block.notes, *(c for r in block.rows for c in (r.config, r.change))]
        stated = [int(n) for text in texts for found in _RIDGE.findall(text) for n in found if n]
        if not stated:
            continue
        ridges = set()
        for path in anchors:
            run = json.loads(path.read_text(encoding="utf-8"))
            ridges.add(round(run["matmul_tflops"] / run["copy_tbps"]))
        for value in stated:
            assert value in ridges, f"{entry.id}: ridge {value}, cited runs give {ridges}"
            checked += 1
    assert checked >= 3


# A figure in scientific notation (an error or a bound: "1e-2", "1.8e-3").
_SCIENTIFIC = re.compile(r"\d+(?:\.\d+)?e-?\d+")


def test_scientific_figures_in_local_changes_are_in_the_cited_files() -> None:
    """An error or a bound a Change cell states is written in a file the block's Source
    names (a measurement file, a devlog, or the test module that holds the bound)."""
    require_shared(ANCHORS, "the H200 anchor measurements")
    checked = 0
    for entry, block in _local_blocks():
        figures = [f for row in block.rows for f in _SCIENTIFIC.findall(row.change)]
        if not figures:
            continue
        texts = [
            (ANCHORS.parent if name.startswith("anchors/") else REPO).joinpath(name)
            for name in _REPO_PATH.findall(block.source)
        ]
        written = " ".join(p.read_text(encoding="utf-8") for p in texts if p.is_file())
        for figure in figures:
            assert re.search(rf"(?<![\d.]){re.escape(figure)}(?!\d)", written), (
                f"{entry.id}: {figure} is in none of {block.source}"
            )
            checked += 1
    assert checked >= 1


def test_the_fp8_scaling_pitfall_says_its_two_times_are_not_one_comparison() -> None:
    """exp 17 timed bfloat16 scaling once, with the then-default 4 warps (which spill), and
    set it against float32 scaling from an earlier run: the pitfall may not credit the
    difference to the scaling alone."""
    (pitfall,) = [p for p in CATALOG.get("fp8-kv-cache").pitfalls if "124.86" in p]
    assert "4 warps" in pitfall and "earlier run" in pitfall
    assert "conversions" not in pitfall  # an explanation exp 17 does not give
    source = REPO / "docs/kernels/mla_decode/experiments/exp_17/result.md"
    stated = source.read_text(encoding="utf-8")
    assert "124.86 us with the then-default 4 warps, against 103.8 us" in stated


def test_links_to_the_last_piece_merge_give_its_measured_range_and_its_win() -> None:
    """The merge was slower in exps 10 and 15 and faster for two pieces with TMA copies
    (exp 26): a note quoting one side must give the range those rows hold and the other."""
    merge = CATALOG.get("last-piece-merge")
    slower = [
        float(m.group(1))
        for block in merge.evidence
        if re.search(r"exp_1[05]/", block.source)
        for row in block.rows
        if (m := re.match(r"\+(\d+(?:\.\d+)?) %", row.change))
    ]
    assert len(slower) == 7
    (note,) = [i.note for i in CATALOG.get("kernel-fusion").interactions if i.target == merge.id]
    found = re.search(r"(\d+(?:\.\d+)?)[–-](\d+(?:\.\d+)?) % slower", note)
    assert found and (float(found.group(1)), float(found.group(2))) == (min(slower), max(slower))
    assert "exp 26" in note
    for entry_id in ("kernel-fusion", "clusters-of-sm-filling-programs"):
        (link,) = [i.note for i in CATALOG.get(entry_id).interactions if i.target == merge.id]
        assert "exp 26" in link, f"{entry_id}: {link}"


def test_a_change_its_source_calls_unsure_says_so() -> None:
    """exp 24: at b=128 h=128 'the clock moved between 1410 and 1965 MHz there, so only the
    sign is firm'; the row quoting that change may not read as a firm -1.7 %."""
    source = REPO / "docs/kernels/mla_decode/experiments/exp_24/result.md"
    assert "1410 and 1965 MHz there, so only the sign is firm" in source.read_text("utf-8")
    (block,) = [
        b for b in CATALOG.get("tma-store-epilogue").evidence if "exp_24/result.md" in b.source
    ]
    (row,) = [r for r in block.rows if r.config.startswith("b=128 s=1 h=128")]
    assert "1410-1965 MHz" in row.change and "only the sign is firm" in row.change

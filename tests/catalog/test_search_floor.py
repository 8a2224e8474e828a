"""``catalog search`` drops an experiment log's layout words and common words from the
text it is given, and leaves out entries that share only a small, common part of a
longer text's words: a plan no entry is about answers "no matching entries"."""

from __future__ import annotations

from pathlib import Path

import pytest

from kernelopt import InputError, cli
from kernelopt.catalog import Catalog

CATALOG = Catalog.builtin()
# Two users' plans the catalog has no entry about: word overlap alone matched them with
# a dozen entries ("exp", "every", "slot" of a cache, "before").
KV_APPEND_PLAN = (
    "# Plan: exp 4 — branch-free slot: clamp -1 to 0\n\n"
    "Drop the slot >= 0 branch: clamp the slot to 0 so every program stores (no divergence).\n"
)
QUANT_PLAN = "# Plan\n\nRestore clamp_min(1e-10) on absmax before 448/amax.\n"
CLUSTER_PLAN = (
    "# Plan\n\nRun the two row tiles as a cluster of two. Each loader copies half of a\n"
    "tile into both programs by TMA multicast; a consumer gives a slot back to the\n"
    "other program with mapa and a remote mbarrier arrive.\n"
)


def search(capsys: pytest.CaptureFixture[str], tmp_path: Path, text: str) -> str:
    plan = tmp_path / "plan.md"
    plan.write_text(text, encoding="utf-8")
    assert cli.main(["catalog", "search", "--file", str(plan)]) == 0
    return capsys.readouterr().out


@pytest.mark.parametrize("text", [KV_APPEND_PLAN, QUANT_PLAN])
def test_a_plan_no_entry_is_about_matches_nothing(
    text: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert search(capsys, tmp_path, text) == "no matching entries\n"


def test_entries_a_plan_names_stay_and_word_noise_goes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = search(capsys, tmp_path, CLUSTER_PLAN)
    found = [line.split()[1] for line in out.splitlines() if not line.lstrip().startswith("-")]
    assert found[0] == "clusters-of-sm-filling-programs"
    assert "fp8-kv-cache" not in found  # it shared "tile", "both", "back", "run", ...
    assert all(m.reasons[0].startswith("names ") for m in CATALOG.search(CLUSTER_PLAN))


def test_experiment_references_are_no_words_but_exp_alone_is() -> None:
    assert CATALOG.search("exp 4: layernorm backward dgamma partial reduction")[0].id == (
        "two-stage-column-reduction"
    )
    with pytest.raises(InputError, match=r"keyword: Expected a keyword with a word"):
        CATALOG.search("exp 4, plan")
    # The exponential keeps its name.
    assert CATALOG.search("exp")


def test_one_or_two_words_keep_every_entry_sharing_one() -> None:
    # All a short query has: no floor.
    assert len(CATALOG.search("swizzle banks")) >= 2
    assert [m.id for m in CATALOG.search("argmax")][:1] == ["size-1-axis-shortcut"]


def test_a_longer_query_keeps_entries_sharing_its_telling_words() -> None:
    found = [m.id for m in CATALOG.search("layernorm backward dgamma partial reduction")]
    # Only the entry about it: the others shared "partial" and "reduction" alone.
    assert found == ["two-stage-column-reduction"]
    matches = CATALOG.search("flash decoding with num_splits")
    weak = [m for m in matches if m.reasons[0].startswith("mentions")]
    assert {"split-kv-lse-combine", "too-many-kv-splits"} <= {m.id for m in weak}

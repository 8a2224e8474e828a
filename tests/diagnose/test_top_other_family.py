"""A profile's Top 3 item that names another family's entry (an MLA tile load offered to a
sampler by a hand-off that had no family) is no advice this kernel can take up: it is left
out of the ignored-research item, said so, and the items judged keep their ranks."""

from __future__ import annotations

from pathlib import Path

from kernelopt.diagnose import Pathology, diagnose
from tests.conftest import UNRELATED_TITLES, summary_table, write_files

_PROFILE = (
    "## Profile: top_p exp 1 | b=64, vocab=152064\n"
    "### Top 3 Opportunities\n"
    "1. Shared K/V Tile Load (`kv-tile-shared-load`) -- est. 40% gain -- trigger: x\n"
    "2. Software Pipelining (`software-pipelining`) -- est. 30% gain -- trigger: y\n"
    "3. Split-KV (`split-kv-flash-decoding`) -- est. 20% gain -- trigger: z\n"
)


def test_another_familys_entries_are_left_out_and_ranks_kept(tmp_path: Path) -> None:
    root = write_files(
        tmp_path,
        {
            "CLAUDE.md": "# A top-p sampler\n\nFamily: softmax\n",
            "experiments/summary.md": summary_table([*UNRELATED_TITLES, "fewer asserts"]),
            "experiments/profile.md": _PROFILE,
        },
    )
    finding = diagnose(root, family="softmax").finding(Pathology.IGNORED_PRIOR_RESEARCH)
    assert finding is not None
    assert (
        "(`kv-tile-shared-load` and `split-kv-flash-decoding` left out: entries for other "
        "kernels than the softmax family)" in finding.summary
    )
    ids = [a.catalog_id for a in finding.actions if a.catalog_id]
    assert "kv-tile-shared-load" not in ids and "split-kv-flash-decoding" not in ids
    [action] = [a for a in finding.actions if a.catalog_id == "software-pipelining"]
    assert "ranked 2 of the profile's Top 3" in action.text


def test_the_kernels_own_family_keeps_them(tmp_path: Path) -> None:
    root = write_files(
        tmp_path,
        {
            "experiments/summary.md": summary_table([*UNRELATED_TITLES, "fewer asserts"]),
            "experiments/profile.md": _PROFILE,
        },
    )
    finding = diagnose(root, family="mla-decode").finding(Pathology.IGNORED_PRIOR_RESEARCH)
    assert finding is not None
    assert "left out" not in finding.summary
    assert "kv-tile-shared-load" in [a.catalog_id for a in finding.actions]

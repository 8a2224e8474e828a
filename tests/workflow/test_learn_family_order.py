"""`kernelopt learn --family` takes and lists the families `kernelopt diagnose --family`
does, in the same order: the catalog's."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kernelopt._errors import InputError
from kernelopt.catalog import Catalog
from kernelopt.cli import main
from kernelopt.workflow import Action, learn, observe_rows

from .conftest import anchor_row, write_rows

ENTRY = "split-kv-flash-decoding"
# The list, then the aliases the catalog reads as its families ("(or matmul, ... for gemm)").
AMONG = re.compile(r"Expected a kernel family among (.+?)(?: \(or [^)]*\))?, got 'bogus'")


def _listed(err: str) -> list[str]:
    found = AMONG.search(err)
    assert found is not None, err
    return found.group(1).split(", ")


@pytest.fixture
def own_family(knowledge: Path) -> Path:
    """The ``knowledge`` tree with an entry naming a family of the user's own."""
    source = knowledge / "optimizations" / f"{ENTRY}.md"
    text = source.read_text(encoding="utf-8")
    text = text.replace(f"- id: {ENTRY}", "- id: scan-split")
    text = text.replace("- families: decode-attention", "- families: prefix-scan")
    (knowledge / "optimizations" / "scan-split.md").write_text(text, encoding="utf-8")
    return knowledge


def test_learn_lists_the_families_as_diagnose_does(
    own_family: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # learn listed the vocabulary in its own order (attention, decode-attention,
    # mla-decode, softmax, ...), diagnose sorted and with the tree's own families.
    rows = write_rows(tmp_path / "rows.jsonl", anchor_row("splits16"))
    after = write_rows(tmp_path / "after.jsonl", anchor_row("splits8"))
    empty_log = tmp_path / "log"
    empty_log.mkdir()
    tree = str(own_family)
    assert main(["diagnose", str(empty_log), "--family", "bogus", "--knowledge", tree]) == 2
    diagnosed = _listed(capsys.readouterr().err)
    learn_argv = ["learn", "--before", str(rows), "--after", str(after), "--entry", ENTRY]
    assert main([*learn_argv, "--knowledge", tree, "--family", "bogus", "--dry-run"]) == 2
    learned = _listed(capsys.readouterr().err)
    assert learned == diagnosed == list(Catalog.load(own_family).families())
    assert learned == sorted(learned) and "prefix-scan" in learned


@pytest.mark.parametrize(
    ("given", "written"), [("MLA_decode", "mla-decode"), ("prefix-scan", "prefix-scan")]
)
def test_learn_takes_the_families_diagnose_takes(
    own_family: Path, given: str, written: str
) -> None:
    # `mla_decode` (a workload trace's op name) and a family an entry of the tree names
    # are families to diagnose; learn refused both.
    seen = observe_rows(anchor_row("splits8"), anchor_row("splits32"), source="runs/x.jsonl")
    outcome = learn(seen, entry_id=ENTRY, knowledge=own_family, family=given, dry_run=True)
    assert outcome.action is Action.NEW_ANTI_PATTERN and outcome.created is not None
    assert outcome.created.families == (written,)


def test_learn_refuses_a_family_no_one_names(knowledge: Path) -> None:
    seen = observe_rows(anchor_row("splits8"), anchor_row("splits32"), source="runs/x.jsonl")
    with pytest.raises(InputError, match=r"family: Expected a kernel family among any, "):
        learn(seen, entry_id=ENTRY, knowledge=knowledge, family="bogus", dry_run=True)

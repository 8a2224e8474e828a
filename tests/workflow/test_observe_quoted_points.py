"""A point whose value is quoted and holds ``=`` is taken as that value.

A benchmark config keeps its whole point under ``point``, and the bench writes it quoted:
``point="b=32 s=1 h=16 t=4096"`` (``term_text``). ``select_row`` and ``--point`` refused
any value holding ``=``, so that point could not be chosen. A quoted value is read whole,
``=`` and all; an ``=`` outside quotes in a value is still refused: ``s=,h=16`` reads as
s = ``h=16``, a mistyped point rather than one the rows lack.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kernelopt._errors import InputError
from kernelopt.bench import BenchRow
from kernelopt.cli import main
from kernelopt.experiments.points import term_text
from kernelopt.workflow import observe_files, select_row
from kernelopt.workflow.observe import _point_terms

from .conftest import POINT, anchor_row, bench_row, write_rows

NARROW = "b=32 s=1 h=16 t=4096"
WIDE = "b=32 s=1 h=128 t=4096"
CONFIGS = {
    NARROW: {**POINT, "point": NARROW},
    WIDE: {**POINT, "h": 128, "point": WIDE},
}
MISTYPED = ["s=,h=16", "s=h=16", "s==16", "a=b=c", 's=,h="16"', '"a=b"=c', 's=""']


def test_a_config_point_as_term_text_writes_it_is_quoted() -> None:
    assert term_text("point", NARROW) == 'point="b=32 s=1 h=16 t=4096"'


@pytest.mark.parametrize(
    ("text", "terms"),
    [
        ('point="b=32 s=1 h=16 t=4096"', {"point": NARROW}),
        ('b=32 point="b=32 s=1 h=16 t=4096"', {"b": "32", "point": NARROW}),
        ('cfg="a=b", t=~4096', {"cfg": "a=b", "t": "~4096"}),
        ('cfg = "a=b"', {"cfg": "a=b"}),
        ('kv="fp8 e4m3" s=1', {"kv": "fp8 e4m3", "s": "1"}),
        ('note="x=\\"y\\""', {"note": 'x="y"'}),
    ],
)
def test_a_quoted_value_holding_equals_is_a_value(text: str, terms: dict[str, str]) -> None:
    assert _point_terms(text) == terms


@pytest.mark.parametrize("text", MISTYPED)
def test_an_equals_outside_quotes_in_a_value_is_still_refused(text: str) -> None:
    message = (
        "point: Expected a point like 'b=32,s=1,t=4096' or a trial name (decode, "
        f"speculative), got {text!r}"
    )
    with pytest.raises(InputError) as refused:
        _point_terms(text)
    assert str(refused.value) == message


def _rows(seed: int) -> list[BenchRow]:
    """A row of each point of CONFIGS, raw samples kept."""
    return [
        bench_row(f"v{seed}", 66.5 + index, config=config, samples=40, seed=seed + index)
        for index, config in enumerate(CONFIGS.values())
    ]


def test_select_row_takes_the_quoted_point_a_config_states() -> None:
    rows = _rows(1)
    for point, config in CONFIGS.items():
        chosen = select_row(rows, point=term_text("point", point))
        assert chosen.config == config
    with pytest.raises(InputError, match=r"^rows: Expected rows of one trial point"):
        select_row(rows)
    with pytest.raises(InputError, match=r"^point: Expected a point like"):
        select_row(rows, point="point=,b=32")


def test_observe_files_takes_the_quoted_point(tmp_path: Path) -> None:
    before = write_rows(tmp_path / "v1.jsonl", *_rows(1))
    after = write_rows(tmp_path / "v2.jsonl", *_rows(7))
    seen = observe_files(before, after, point=f'point="{WIDE}"')
    assert seen.point == "b=32 s=1 t=4096 h=128"  # the config's point, in its one spelling


def _learn(capsys: pytest.CaptureFixture[str], argv: list[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_learn_takes_the_quoted_point_on_the_command_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, knowledge: Path
) -> None:
    before = write_rows(
        tmp_path / "v1.jsonl",
        *(anchor_row("splits16", config=c, samples=40, seed=1) for c in CONFIGS.values()),
    )
    after = write_rows(
        tmp_path / "v2.jsonl",
        *(anchor_row("splits8", config=c, samples=40, seed=2) for c in CONFIGS.values()),
    )
    argv = ["learn", "--before", str(before), "--after", str(after)]
    argv += ["--entry", "split-kv-flash-decoding", "--knowledge", str(knowledge)]
    argv += ["--dry-run", "--json"]
    code, out, err = _learn(capsys, [*argv, "--point", term_text("point", NARROW)])
    assert (code, err) == (0, "")
    assert json.loads(out)["verdict"] == "FAST"
    # The mistake the check is for is still a usage error naming the option.
    with pytest.raises(SystemExit) as exited:
        main([*argv, "--point", "s=,h=16"])
    assert exited.value.code == 2
    _, err = capsys.readouterr()
    assert "error: argument --point: Expected a point like 'b=32,s=1,t=4096'" in err


@pytest.mark.parametrize("value", ["a=b", "x=", "=y"])
def test_a_value_holding_equals_is_written_as_a_point_selection_takes_it(value: str) -> None:
    # Written plain, "cfg=a=b" read back as the same term but a selection refused it as
    # two terms run together; quoted, the written point is one a user can pass back.
    written = term_text("cfg", value)
    assert written == f'cfg="{value}"'
    assert _point_terms(written) == {"cfg": value}

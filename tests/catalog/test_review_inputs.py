"""`kernelopt catalog` errors name the option and the real fault: a value that is no finite
number, an unknown --family, and a --file that holds NUL bytes."""

from __future__ import annotations

from pathlib import Path

import pytest

from kernelopt import cli
from kernelopt._errors import InputError
from kernelopt.catalog import Catalog


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = cli.main(["catalog", *args])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize(
    ("flag", "item"),
    [
        ("--metric", "dram_pct=nan"),
        ("--metric", "dram_pct=-NaN"),
        ("--metric", "dram_pct=inf"),
        ("--metric", "dram_pct=1e999"),
        ("--shape", "s_q=nan"),
    ],
)
def test_match_says_the_value_must_be_a_finite_number(
    capsys: pytest.CaptureFixture[str], flag: str, item: str
) -> None:
    code, out, err = run(capsys, "match", flag, item)
    expected = f"{flag}: Expected {flag} NAME=NUMBER with a finite number, got {item!r}"
    assert code == 2 and not out
    assert err.strip() == f"kernelopt catalog: error: {expected}"


@pytest.mark.parametrize("item", ["dram_pct=lots", "dram_pct", "=85"])
def test_match_keeps_the_form_message_for_what_is_no_number(
    capsys: pytest.CaptureFixture[str], item: str
) -> None:
    code, _, err = run(capsys, "match", "--metric", item)
    assert code == 2
    assert (
        err.strip()
        == f"kernelopt catalog: error: --metric: Expected --metric NAME=NUMBER, got {item!r}"
    )


@pytest.mark.parametrize(
    "args",
    [("list", "--family", "foo"), ("match", "--metric", "dram_pct=85", "--family", "foo")],
)
def test_an_unknown_family_is_named_as_the_option(
    capsys: pytest.CaptureFixture[str], args: tuple[str, ...]
) -> None:
    code, out, err = run(capsys, *args)
    assert code == 2 and not out
    assert err.startswith("kernelopt catalog: error: --family: Expected a kernel family among ")
    assert err.rstrip().endswith("got 'foo'")


def test_the_python_query_keeps_naming_its_argument() -> None:
    with pytest.raises(InputError, match=r"^family: Expected a kernel family among "):
        Catalog.builtin().query(family="foo")


def test_a_family_in_another_spelling_is_still_taken(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "list", "--family", "MLA_decode")
    assert code == 0 and "kv-tile-shared-load" in out


def test_search_refuses_a_utf16_file_without_its_mark(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plan = tmp_path / "plan.md"
    plan.write_bytes("shared memory bank conflicts".encode("utf-16-le"))
    code, out, err = run(capsys, "search", "--file", str(plan))
    assert code == 2 and not out
    assert "\x00" not in err and "\\x00" not in err
    assert err.strip() == (
        f"kernelopt catalog: error: {plan}: Expected text without NUL bytes, got a binary "
        "file (NUL bytes; UTF-16 without a byte-order mark?)"
    )


def test_search_refuses_other_nul_bytes_without_the_utf16_guess(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "data.bin"
    data.write_bytes(b"split kv decoding\x00\x00\x00\x01\x02 and more words here")
    code, _, err = run(capsys, "search", "--file", str(data))
    assert code == 2
    assert err.strip().endswith("Expected text without NUL bytes, got a binary file (NUL bytes)")


def test_search_still_reads_utf16_after_its_mark(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plan = tmp_path / "plan.md"
    plan.write_bytes("split-KV flash decoding num_splits".encode("utf-16"))
    code, out, _ = run(capsys, "search", "--file", str(plan))
    assert code == 0 and "split-kv-flash-decoding" in out

"""workload_profile.md is read by its byte-order mark, as the logs around it are."""

from __future__ import annotations

import codecs
from pathlib import Path

import attrs
import pytest

from kernelopt.workload import find_shortcuts, profile_trace, read_profile_md, render_profile_md

# How each editor's save looks: the mark, then the text in the mark's encoding.
ENCODINGS = [
    ("utf-16-le", codecs.BOM_UTF16_LE),
    ("utf-16-be", codecs.BOM_UTF16_BE),
    ("utf-32-le", codecs.BOM_UTF32_LE),
    ("utf-32-be", codecs.BOM_UTF32_BE),
    ("utf-8", codecs.BOM_UTF8),
]

HANDWRITTEN = "# Workload profile: MLA decode\n\ns_q = 1 in 100% of calls\npage is always 64\n"


@pytest.mark.parametrize(("encoding", "mark"), ENCODINGS)
def test_a_hand_written_profile_after_a_mark_keeps_its_shortcuts(
    tmp_path: Path, encoding: str, mark: bytes
) -> None:
    path = tmp_path / "workload_profile.md"
    path.write_bytes(mark + HANDWRITTEN.encode(encoding))
    profile = read_profile_md(path)
    assert profile == attrs.evolve(read_profile_md(HANDWRITTEN), source=str(path))
    assert profile.ops and find_shortcuts(profile)


@pytest.mark.parametrize(("encoding", "mark"), ENCODINGS)
def test_kernelopts_own_profile_after_a_mark_is_read_exactly(
    tmp_path: Path, data: Path, encoding: str, mark: bytes
) -> None:
    profile = profile_trace(data / "mla_decode_calls.jsonl", max_shapes=3)
    path = tmp_path / "workload_profile.md"
    path.write_bytes(mark + render_profile_md(profile).encode(encoding))
    # Read as UTF-8, the NULs between the characters hid the marker: no op, no note.
    assert read_profile_md(path) == profile


def test_bytes_that_do_not_decode_are_read_as_replacement_characters(tmp_path: Path) -> None:
    path = tmp_path / "workload_profile.md"
    path.write_bytes(HANDWRITTEN.encode("utf-8").replace(b"page", b"p\xffge"))
    # Never raises on content: one bad byte costs its line, not the file.
    text = HANDWRITTEN.replace("page", "p\ufffdge")
    assert read_profile_md(path) == attrs.evolve(read_profile_md(text), source=str(path))


def test_diagnose_finds_the_shortcut_of_a_utf16_profile(tmp_path: Path) -> None:
    import shutil

    from kernelopt.diagnose import Pathology, diagnose

    example = Path(__file__).resolve().parents[2] / "examples" / "logs" / "mla-decode-plateau"
    log = tmp_path / "log"
    shutil.copytree(example, log)
    found = diagnose(log).finding(Pathology.OVERLOOKED_SHORTCUT)
    profile = log / "experiments" / "workload_profile.md"
    # As PowerShell's `>` saves it: a UTF-16-LE mark, then the text.
    profile.write_bytes(codecs.BOM_UTF16_LE + profile.read_text("utf-8").encode("utf-16-le"))
    again = diagnose(log).finding(Pathology.OVERLOOKED_SHORTCUT)
    # Read as UTF-8, the profile named no shortcut and the finding was gone.
    assert found is not None and again == found

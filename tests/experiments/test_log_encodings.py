"""A log's files in each encoding users save them in, read by ``read_log``.

The encoding of a log file is told where every other file kernelopt reads has its encoding
told (``kernelopt._fileio``), so the readers and the writers that keep a file's encoding
(``append_lesson``, ``write_result``) never take one file for two encodings.
"""

from __future__ import annotations

import codecs
import os
import threading
from collections.abc import Callable
from pathlib import Path

import attrs
import pytest

import kernelopt._fileio as fileio
from kernelopt._errors import InputError
from kernelopt._fileio import read_text_and_encoding, text_of_bytes
from kernelopt.experiments import ExperimentLog, ResultRecord, ResultRow, read_log, render_result
from kernelopt.experiments.readers._files import LogFiles, ReadLimits

_SUMMARY = (
    "# Experiments Summary\n\n"
    "| Exp | Date | Description | Latency | Unit | Speedup | Correct | Status | Tags |\n"
    "|---|---|---|---|---|---|---|---|---|\n"
    "| 0 | 2026-01-01 | baseline | 100.0 | us |  | PASS | BASELINE |  |\n"
    "| 1 | 2026-01-02 | caf\xe9 split-K | 90.0 | us |  | PASS | KEPT |  |\n"
)
_LESSONS = "# Lessons\n\n- Split-K pays at batch 1 (caf\xe9 shapes)\n"
_RESULT = render_result(
    ResultRecord(
        experiment=1,
        title="caf\xe9 split-K",
        status="KEPT",
        correctness="PASS",
        rows=(ResultRow(point="b=1", impl="k", median=90.0, unit="us"),),
    )
)
_FILES = {
    "experiments/summary.md": _SUMMARY,
    "experiments/LESSONS.md": _LESSONS,
    "experiments/exp_1/result.md": _RESULT,
}


def _marked(encoding: str, mark: bytes) -> Callable[[str], bytes]:
    return lambda text: mark + text.encode(encoding)


# How a file's text is saved: every form here is read as the same log.
_READABLE: dict[str, Callable[[str], bytes]] = {
    "utf-8": lambda text: text.encode("utf-8"),
    "utf-8 with a mark": _marked("utf-8", codecs.BOM_UTF8),
    "utf-16-le with a mark": _marked("utf-16-le", codecs.BOM_UTF16_LE),
    "utf-16-be with a mark": _marked("utf-16-be", codecs.BOM_UTF16_BE),
    "utf-32-le with a mark": _marked("utf-32-le", codecs.BOM_UTF32_LE),
    "utf-32-be with a mark": _marked("utf-32-be", codecs.BOM_UTF32_BE),
    "crlf": lambda text: text.replace("\n", "\r\n").encode("utf-8"),
    "cr": lambda text: text.replace("\n", "\r").encode("utf-8"),
    # What Windows PowerShell's `>` saves.
    "powershell": lambda text: codecs.BOM_UTF16_LE + text.replace("\n", "\r\n").encode("utf-16-le"),
}
# Forms that are not all text in the encoding they are read in.
_NOT_UTF8: dict[str, Callable[[str], bytes]] = {
    "cp1252": lambda text: text.encode("cp1252"),
    "utf-16-le with a mark, cut in a pair": lambda text: (
        codecs.BOM_UTF16_LE + text.encode("utf-16-le") + b"\x3d\xd8"
    ),
}


def _write_log(root: Path, save: Callable[[str], bytes]) -> Path:
    for name, text in _FILES.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(save(text))
    return root


def _as_read(log: ExperimentLog) -> ExperimentLog:
    return attrs.evolve(log, root="")


def _reasons(log: ExperimentLog) -> dict[str, str]:
    return {u.path: u.reason for u in log.unread}


def _normalized(text: str) -> str:
    """``text`` as the log readers see it: no leading mark, every line ending ``\\n``."""
    return text.lstrip("\ufeff").replace("\r\n", "\n").replace("\r", "\n")


@pytest.mark.parametrize("form", sorted(_READABLE))
def test_each_encoding_and_line_ending_reads_as_the_same_log(tmp_path: Path, form: str) -> None:
    reference = read_log(_write_log(tmp_path / "reference", _READABLE["utf-8"]), catalog=())
    assert reference.experiment(1).description == "caf\xe9 split-K"  # type: ignore[union-attr]
    assert [fact.text for fact in reference.lessons] == ["Split-K pays at batch 1 (caf\xe9 shapes)"]
    assert reference.profiling and reference.unread == ()
    log = read_log(_write_log(tmp_path / "log", _READABLE[form]), catalog=())
    assert _as_read(log) == _as_read(reference)


def test_a_byte_that_is_not_utf8_reads_as_a_replacement_and_is_named(tmp_path: Path) -> None:
    # cp1252's "é" is the byte 0xE9: the rest of each file is read, the byte is named.
    log = read_log(_write_log(tmp_path, _NOT_UTF8["cp1252"]), catalog=())
    for name, text in _FILES.items():
        offset = text.encode("cp1252").index(b"\xe9")
        assert _reasons(log)[name] == (
            f"not all UTF-8 (byte 0xe9 at offset {offset}); undecodable bytes read as U+FFFD, "
            "the rest as written"
        )
    assert log.experiment(1).description == "caf\ufffd split-K"  # type: ignore[union-attr]
    assert log.experiment(1).latency == 90.0  # type: ignore[union-attr]
    assert [fact.text for fact in log.lessons] == ["Split-K pays at batch 1 (caf\ufffd shapes)"]


def test_a_utf16_file_cut_in_a_surrogate_pair_names_the_byte_after_its_mark(
    tmp_path: Path,
) -> None:
    log = read_log(
        _write_log(tmp_path, _NOT_UTF8["utf-16-le with a mark, cut in a pair"]), catalog=()
    )
    offset = 2 + len(_LESSONS.encode("utf-16-le"))  # the mark's two bytes counted
    assert _reasons(log)["experiments/LESSONS.md"].startswith(
        f"not all UTF-16 (byte 0x3d at offset {offset}); undecodable bytes read as U+FFFD"
    )
    assert log.experiment(1).latency == 90.0  # type: ignore[union-attr]


def test_utf16_without_a_mark_is_named_and_not_read(tmp_path: Path) -> None:
    log = read_log(_write_log(tmp_path, lambda text: text.encode("utf-16-le")), catalog=())
    reason = "binary file (NUL bytes; UTF-16 without a byte-order mark?); not text"
    assert _reasons(log) == dict.fromkeys(_FILES, reason)
    # exp_1/ is still an experiment, of which nothing could be read.
    assert [(e.number, e.latency) for e in log.experiments] == [(1, None)]
    assert log.lessons == ()


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b"", "empty file"),
        (b"\x00" * 64, "binary file (NUL bytes; UTF-16 without a byte-order mark?); not text"),
        (codecs.BOM_UTF16_LE + " \n".encode("utf-16-le"), "empty file"),
    ],
    ids=["empty", "nul bytes", "a mark and a blank line"],
)
def test_files_with_no_text_are_named_and_not_read(
    tmp_path: Path, data: bytes, reason: str
) -> None:
    log = read_log(_write_log(tmp_path, lambda text: data), catalog=())
    assert _reasons(log) == dict.fromkeys(_FILES, reason)


def test_a_fifo_or_a_folder_named_as_a_log_file_is_named_without_waiting(tmp_path: Path) -> None:
    root = tmp_path / "log"
    (root / "experiments" / "exp_1" / "result.md").mkdir(parents=True)
    os.mkfifo(root / "experiments" / "summary.md")
    os.mkfifo(root / "experiments" / "LESSONS.md")
    outcome: list[object] = []

    def read() -> None:
        try:
            outcome.append(read_log(root, catalog=()))
            outcome.append(LogFiles(root, ReadLimits()).read("experiments/summary.md"))
        except BaseException as error:  # handed to the test below
            outcome.append(error)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(10)
    # A FIFO opened for reading waits for a writer (the thread is a daemon: left waiting).
    assert not reader.is_alive(), "read_log waited on a FIFO named as a log file"
    log, summary = outcome
    assert isinstance(log, ExperimentLog) and summary is None
    pipe = "Expected a regular file, got a pipe, socket or device; not read"
    assert _reasons(log) == {
        "experiments/LESSONS.md": pipe,
        "experiments/exp_1/result.md": "Expected a file, got a folder; not read",
        "experiments/summary.md": pipe,
    }
    # The other readers refuse both too, without opening the FIFO.
    for name in ("experiments/summary.md", "experiments/exp_1/result.md"):
        with pytest.raises(InputError, match=r"^Expected a text file, got a (FIFO|directory) at"):
            read_text_and_encoding(root / name)


# --- one place tells the encoding ---------------------------------------------------------

_ALL_FORMS = {**_READABLE, **_NOT_UTF8}


def _read_by_the_log_reader(tmp_path: Path, data: bytes) -> str | None:
    (tmp_path / "LESSONS.md").write_bytes(data)
    read = LogFiles(tmp_path, ReadLimits()).read("LESSONS.md")
    return None if read is None else read.text


@pytest.mark.parametrize("form", sorted(_ALL_FORMS))
def test_the_log_reader_decodes_as_the_other_readers_decode(tmp_path: Path, form: str) -> None:
    data = _ALL_FORMS[form](_LESSONS)
    text = _read_by_the_log_reader(tmp_path, data)
    assert text == _normalized(text_of_bytes(data))
    if form in _READABLE:
        assert text == _normalized(read_text_and_encoding(tmp_path / "LESSONS.md")[0])
        assert text == _LESSONS


@pytest.mark.parametrize("form", sorted(_READABLE))
def test_the_log_reader_follows_the_shared_byte_order_marks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, form: str
) -> None:
    # Were the shared marks told otherwise (here UTF-16's before UTF-32's, so that a UTF-32-LE
    # file reads as UTF-16-LE), the log reader must tell them the same: a log file is never
    # taken for one encoding by the readers and another by the writers that keep it.
    reordered = sorted(fileio._MARKS, key=lambda pair: len(pair[0]))
    monkeypatch.setattr(fileio, "_MARKS", tuple(reordered))
    data = _READABLE[form](_LESSONS)
    shared = _normalized(text_of_bytes(data))
    assert (shared != _LESSONS) == (form == "utf-32-le with a mark")  # the change took hold
    assert _read_by_the_log_reader(tmp_path, data) == shared

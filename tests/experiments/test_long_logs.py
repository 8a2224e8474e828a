"""A log of thousands of entries is read in time linear in its entries."""

from __future__ import annotations

import json
import time  # process_time: this test's CPU time, which other work on the machine does not inflate
from pathlib import Path

import pytest

from kernelopt.experiments import read_log
from kernelopt.experiments.readers import documents


def _devlog(count: int) -> str:
    return "".join(
        f"## 2026-01-{n % 28 + 1:02d} tweak {n} (ACCEPTED)\n\n"
        f"- Result: {100 - n * 0.001:.3f} us\n\n"
        for n in range(count)
    )


def _step_log(count: int) -> str:
    return "".join(
        f"## Step {n}: tweak {n}\n\nStatus: KEPT\n\n- Latency: {100 - n * 0.001:.3f} us\n\n"
        for n in range(1, count + 1)
    )


@pytest.mark.parametrize("write", [_devlog, _step_log])
def test_each_entry_is_described_without_reading_the_whole_file_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, write: object
) -> None:
    calls = []
    real = documents.code_mask

    def counted(lines: object) -> list[bool]:
        calls.append(lines)
        return real(lines)  # type: ignore[arg-type]

    monkeypatch.setattr(documents, "code_mask", counted)
    (tmp_path / "log.md").write_text(write(200), encoding="utf-8")  # type: ignore[operator]
    assert len(read_log(tmp_path, catalog=()).experiments) == 200
    assert len(calls) <= 2  # once per file, not once per entry


@pytest.mark.parametrize("write", [_devlog, _step_log])
def test_a_log_of_thousands_of_entries_reads_in_linear_time(tmp_path: Path, write: object) -> None:
    # 2,500 entries took over 15 s when each entry looked for its end among all headings
    # and described itself from the whole file's headings.
    (tmp_path / "log.md").write_text(write(2500), encoding="utf-8")  # type: ignore[operator]
    start = time.process_time()
    assert len(read_log(tmp_path, catalog=()).experiments) == 2500
    assert time.process_time() - start < 2.0


def test_a_json_archive_of_thousands_of_records_reads_in_linear_time(tmp_path: Path) -> None:
    # Each record's line was found by listing every record's start again: 4,000 records
    # pretty-printed took over 5 s.
    records = [{"id": n, "speedup": 1.0 + n * 1e-4, "applied": ["tile"]} for n in range(4000)]
    (tmp_path / "history.json").write_text(json.dumps({"log": records}, indent=2))
    start = time.process_time()
    log = read_log(tmp_path, catalog=())
    assert time.process_time() - start < 2.0
    assert len(log.experiments) == 4000
    assert log.experiments[1].refs["speedup"].line == 10  # the "{" its record opens with

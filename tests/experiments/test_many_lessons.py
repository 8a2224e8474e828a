"""A LESSONS.md longer than the reader's cap keeps its newest lessons, and says so."""

from __future__ import annotations

from pathlib import Path

from kernelopt.experiments import read_log


def test_the_newest_lessons_are_kept_past_the_cap(tmp_path: Path) -> None:
    # Lessons are appended at the end: a cap that kept the first ones dropped every
    # lesson written after it, the ones closest to the kernel as it is now.
    lines = [f"- [exp {n}] lesson number {n}" for n in range(5003)]
    (tmp_path / "LESSONS.md").write_text("# Lessons\n\n" + "\n".join(lines) + "\n")
    (tmp_path / "summary.md").write_text(
        "| Exp | Date | Description | Latency | Unit | Speedup | Correct | Status | Tags |\n"
        "|---|---|---|---|---|---|---|---|---|\n"
        "| 1 | 2026-12-01 | first | 10.0 | us | | PASS | KEPT | |\n"
    )
    log = read_log(tmp_path)
    texts = [fact.text for fact in log.lessons]
    assert len(texts) == 5000
    assert texts[-1] == "[exp 5002] lesson number 5002"
    assert texts[0] == "[exp 3] lesson number 3"
    (warning,) = [w for w in log.warnings if "lessons" in w]
    assert warning == (
        "LESSONS.md: 5003 lessons; the latest 5000 were read, the first 3 (to line 5) left out"
    )


def test_a_short_lessons_file_reads_whole_without_a_warning(tmp_path: Path) -> None:
    (tmp_path / "LESSONS.md").write_text("# Lessons\n\n- one\n- two\n")
    log = read_log(tmp_path)
    assert [fact.text for fact in log.lessons] == ["one", "two"]
    assert not [w for w in log.warnings if "lessons" in w]

"""A recommendation quoted from a list ends without the punctuation that joined the list."""

from __future__ import annotations

from pathlib import Path

from kernelopt.experiments import ResultRecord, ResultRow, read_log, write_result


def test_list_items_joined_by_semicolons_are_quoted_without_them(tmp_path: Path) -> None:
    record = ResultRecord(
        experiment=5,
        title="hook replay parity",
        status="KEPT",
        correctness="PASS",
        rows=(ResultRow(point="tokens=64", impl="triton", median=410.0, unit="us"),),
        notes="Next steps:\n"
        "1. compute one `Qx` per activation site under the scheduler;\n"
        "2. carry explicit row-candidate routing metadata,\n"
        "3. validate against the torch reference at the injection point.",
    )
    write_result(tmp_path / "experiments", record)
    log = read_log(tmp_path, catalog=())
    assert [r.text for r in log.recommendations] == [
        "compute one Qx per activation site under the scheduler",
        "carry explicit row-candidate routing metadata",
        "validate against the torch reference at the injection point",
    ]

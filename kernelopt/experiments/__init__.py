"""The on-disk experiment log: typed records, canonical writers and tolerant readers.

kernelopt writes the seed layout (``experiments/summary.md``, ``LESSONS.md``,
``exp_N/{plan,result}.md``) in a canonical form and reads it back exactly; logs written
by hand in other layouts are read tolerantly into the same records.
"""

from kernelopt.experiments.canonical import (
    append_lesson,
    append_summary,
    experiment_dir,
    parse_result,
    render_result,
    render_summary_row,
    write_plan,
    write_result,
)
from kernelopt.experiments.records import Correctness, ResultRecord, ResultRow, Status

__all__ = [
    "Correctness",
    "ResultRecord",
    "ResultRow",
    "Status",
    "append_lesson",
    "append_summary",
    "experiment_dir",
    "parse_result",
    "render_result",
    "render_summary_row",
    "write_plan",
    "write_result",
]

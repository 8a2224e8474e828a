"""The on-disk experiment log: typed records, canonical writers and tolerant readers.

kernelopt writes the seed layout (``experiments/summary.md``, ``LESSONS.md``,
``exp_N/{plan,result}.md``) in a canonical form and reads it back exactly; logs written
by hand in other layouts are read tolerantly into the same records.
"""

from kernelopt.experiments.canonical import (
    RepeatedRowWarning,
    append_lesson,
    append_summary,
    experiment_dir,
    log_result,
    parse_result,
    render_result,
    render_summary_row,
    write_plan,
    write_result,
)
from kernelopt.experiments.log import (
    ABVerdict,
    DeclinedOption,
    Experiment,
    ExperimentLog,
    Fact,
    FloorRow,
    KernelSource,
    MetricKind,
    Point,
    ProfileFacts,
    Recommendation,
    Series,
    SourceRef,
    Unread,
)
from kernelopt.experiments.readers import ReadLimits, read_log
from kernelopt.experiments.records import Correctness, ResultRecord, ResultRow, Status
from kernelopt.experiments.tagging import Tagger

__all__ = [
    "ABVerdict",
    "Correctness",
    "DeclinedOption",
    "Experiment",
    "ExperimentLog",
    "Fact",
    "FloorRow",
    "KernelSource",
    "MetricKind",
    "Point",
    "ProfileFacts",
    "ReadLimits",
    "Recommendation",
    "RepeatedRowWarning",
    "ResultRecord",
    "ResultRow",
    "Series",
    "SourceRef",
    "Status",
    "Tagger",
    "Unread",
    "append_lesson",
    "append_summary",
    "experiment_dir",
    "log_result",
    "parse_result",
    "read_log",
    "render_result",
    "render_summary_row",
    "write_plan",
    "write_result",
]

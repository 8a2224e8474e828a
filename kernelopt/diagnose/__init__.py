"""Diagnose a stalled optimization effort from its experiment log, ending in a plan.

A clean-context diagnosis formed only from what is on disk: :func:`diagnose` reads the log
(any layout :func:`read_log` recognizes), runs the nine detectors of the plateau checklist
— repetition loop, local minimum, correctness wall, wrong bottleneck, missing fundamental,
over-engineering, ignored prior research, buffer persistence, overlooked shortcut — and
returns a :class:`Diagnosis` that renders to the checklist plan (:func:`render_plan`) or
JSON. Nothing in the log is imported or run; importing this package loads neither torch,
triton nor numpy::

    from kernelopt.diagnose import diagnose

    diagnosis = diagnose("examples/logs/mla-decode-plateau")
    print(diagnosis.render_plan())
"""

from kernelopt.diagnose.engine import diagnose, diagnose_log, load_catalog
from kernelopt.diagnose.jsonio import (
    diagnosis_from_dict,
    diagnosis_from_json,
    diagnosis_to_dict,
    diagnosis_to_json,
)
from kernelopt.diagnose.model import (
    Action,
    BestResult,
    CatalogLink,
    Check,
    Diagnosis,
    Evidence,
    Finding,
    KeptRegression,
    LogSummary,
    Pathology,
    Severity,
    TrajectoryPoint,
)
from kernelopt.diagnose.params import (
    BufferPersistenceParams,
    CorrectnessWallParams,
    DiagnoseParams,
    IgnoredPriorResearchParams,
    LocalMinimumParams,
    MissingFundamentalParams,
    OverEngineeringParams,
    OverlookedShortcutParams,
    RepetitionLoopParams,
    WrongBottleneckParams,
)
from kernelopt.diagnose.plan import entry_links, render_plan
from kernelopt.experiments.log import ExperimentLog
from kernelopt.experiments.readers import ReadLimits, read_log

__all__ = [
    "Action",
    "BestResult",
    "BufferPersistenceParams",
    "CatalogLink",
    "Check",
    "CorrectnessWallParams",
    "DiagnoseParams",
    "Diagnosis",
    "Evidence",
    "ExperimentLog",
    "Finding",
    "IgnoredPriorResearchParams",
    "KeptRegression",
    "LocalMinimumParams",
    "LogSummary",
    "MissingFundamentalParams",
    "OverEngineeringParams",
    "OverlookedShortcutParams",
    "Pathology",
    "ReadLimits",
    "RepetitionLoopParams",
    "Severity",
    "TrajectoryPoint",
    "WrongBottleneckParams",
    "diagnose",
    "diagnose_log",
    "diagnosis_from_dict",
    "diagnosis_from_json",
    "diagnosis_to_dict",
    "diagnosis_to_json",
    "entry_links",
    "load_catalog",
    "read_log",
    "render_plan",
]

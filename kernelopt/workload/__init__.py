"""Profile the shapes a kernel really sees, and find the shortcuts they allow.

Read a trace of kernel calls (a JSONL call log written by :class:`Recorder`, a PyTorch
profiler trace recorded with ``record_shapes=True``, or FlashInfer-Bench workloads), build a
:class:`WorkloadProfile` (distinct shapes, per-axis statistics, size-1 axes, skew), run
shortcut rules over it (:func:`find_shortcuts`), and keep it as ``workload_profile.md``
(:func:`render_profile_md` / :func:`read_profile_md`)::

    from kernelopt.workload import find_shortcuts, profile_trace, write_profile_md

    profile = profile_trace("calls.jsonl", op="mla_decode")
    for shortcut in find_shortcuts(profile):
        print(shortcut.guard, shortcut.message)
    write_profile_md(profile, "experiments/workload_profile.md")

Importing this package does not import torch, triton or numpy.
"""

from kernelopt.workload.calls import (
    Call,
    CallGroup,
    ScalarArg,
    TensorArg,
    Trace,
    ValuesSummary,
    parse_call_record,
)
from kernelopt.workload.dtypes import canonical_dtype
from kernelopt.workload.facts import shape_facts
from kernelopt.workload.flashinfer import read_flashinfer
from kernelopt.workload.jsonl import read_jsonl
from kernelopt.workload.markdown import (
    parse_profile_md,
    read_profile_md,
    render_profile_md,
    write_profile_md,
)
from kernelopt.workload.profile import (
    AxisStat,
    OpProfile,
    ShapeStat,
    Size1Axis,
    Skew,
    ValueShare,
    WorkloadProfile,
    profile_calls,
)
from kernelopt.workload.recorder import Recorder, RecorderWarning
from kernelopt.workload.serialize import (
    profile_from_dict,
    profile_from_json,
    profile_to_dict,
    profile_to_json,
    shortcut_from_dict,
    shortcut_to_dict,
)
from kernelopt.workload.shortcuts import (
    BUCKET_PADDING_WASTE,
    CATALOG_IDS,
    DOMINANT_SHAPE_SPECIALIZATION,
    GATHER_INDEX_SELECT,
    SIZE1_AXIS_SHORTCUT,
    UNIFORM_LENGTH_FAST_PATH,
    Shortcut,
    ShortcutRule,
    Thresholds,
    find_shortcuts,
    register_rule,
    registered_rules,
    unregister_rule,
)
from kernelopt.workload.signatures import (
    AxisValue,
    DimAxis,
    OpSignature,
    find_signature,
    register_signature,
    registered_signatures,
    unregister_signature,
)
from kernelopt.workload.torch_trace import read_torch_trace
from kernelopt.workload.traces import detect_format, profile_trace, read_trace

__all__ = [
    "BUCKET_PADDING_WASTE",
    "CATALOG_IDS",
    "DOMINANT_SHAPE_SPECIALIZATION",
    "GATHER_INDEX_SELECT",
    "SIZE1_AXIS_SHORTCUT",
    "UNIFORM_LENGTH_FAST_PATH",
    "AxisStat",
    "AxisValue",
    "Call",
    "CallGroup",
    "DimAxis",
    "OpProfile",
    "OpSignature",
    "Recorder",
    "RecorderWarning",
    "ScalarArg",
    "ShapeStat",
    "Shortcut",
    "ShortcutRule",
    "Size1Axis",
    "Skew",
    "TensorArg",
    "Thresholds",
    "Trace",
    "ValueShare",
    "ValuesSummary",
    "WorkloadProfile",
    "canonical_dtype",
    "detect_format",
    "find_shortcuts",
    "find_signature",
    "parse_call_record",
    "parse_profile_md",
    "profile_calls",
    "profile_from_dict",
    "profile_from_json",
    "profile_to_dict",
    "profile_to_json",
    "profile_trace",
    "read_flashinfer",
    "read_jsonl",
    "read_profile_md",
    "read_torch_trace",
    "read_trace",
    "register_rule",
    "register_signature",
    "registered_rules",
    "registered_signatures",
    "render_profile_md",
    "shape_facts",
    "shortcut_from_dict",
    "shortcut_to_dict",
    "unregister_rule",
    "unregister_signature",
    "write_profile_md",
]

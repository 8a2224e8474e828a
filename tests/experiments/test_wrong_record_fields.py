"""Wrong types given to the experiment log's records and to ``parse_result``.

Every field of :class:`ExperimentLog` and the records it holds refuses a value of the wrong
type with one :class:`InputError` reading ``<field>: Expected ..., got ...``: a sequence
field refuses a value that is not iterable, a str or bytes (text, not a sequence of items)
and an item of another type; a mapping field a value that is no mapping, a key that is no
str and a value of the wrong type; a number field a bool; a text field anything but a str
(None where the field is optional). ``parse_result`` and ``measurement_rows`` refuse a
``path``, ``refused`` or ``warnings`` of the wrong type before reading the text.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from types import MappingProxyType
from typing import Any

import pytest

from kernelopt._errors import InputError
from kernelopt.experiments import (
    Experiment,
    ExperimentLog,
    Fact,
    FloorRow,
    KernelSource,
    Point,
    ProfileFacts,
    Recommendation,
    ResultRecord,
    ResultRow,
    Series,
    SourceRef,
    Status,
    Unread,
    parse_result,
    render_result,
)
from kernelopt.experiments.canonical import measurement_rows

_REF = SourceRef(path="experiments/summary.md", line=3)
_FACT = Fact(text="dram 80%", source=_REF)
_POINT = Point(name="b=1", value=10.0, unit="us", kind="latency", source=_REF)
_FLOOR = FloorRow(point="b=1", fraction=0.5, source=_REF)
_RECOMMENDATION = Recommendation(text="try split-K", source=_REF)
_EXPERIMENT = Experiment(number=1, label="exp_1")
_SERIES = Series(name="numbered experiments", kind="summary", experiments=(_EXPERIMENT,))
_KERNEL = KernelSource(path="kernels/k.py", text="", language="python")
_UNREAD = Unread(path="big.bin", reason="binary file")

Build = Callable[..., object]


def _source_ref(**fields: Any) -> SourceRef:
    return SourceRef(**{"path": "a.md", "line": 1, **fields})


def _fact(**fields: Any) -> Fact:
    return Fact(**{"text": "t", "source": _REF, **fields})


def _unread(**fields: Any) -> Unread:
    return Unread(**{"path": "a.bin", "reason": "binary file", **fields})


def _point(**fields: Any) -> Point:
    return Point(
        **{"name": "b=1", "value": 1.0, "unit": "us", "kind": "latency", "source": _REF, **fields}
    )


def _experiment(**fields: Any) -> Experiment:
    return Experiment(**{"number": 1, "label": "exp_1", **fields})


def _series(**fields: Any) -> Series:
    return Series(**{"name": "s", "kind": "summary", "experiments": (), **fields})


def _floor(**fields: Any) -> FloorRow:
    return FloorRow(**{"point": "b=1", "fraction": 0.5, "source": _REF, **fields})


def _kernel(**fields: Any) -> KernelSource:
    return KernelSource(**{"path": "k.py", "text": "", "language": "python", **fields})


def _recommendation(**fields: Any) -> Recommendation:
    return Recommendation(**{"text": "t", "source": _REF, **fields})


def _profile(**fields: Any) -> ProfileFacts:
    return ProfileFacts(**{"bottleneck": "memory", **fields})


def _log(**fields: Any) -> ExperimentLog:
    return ExperimentLog(**{"root": ".", **fields})


def _refused(build: Build, field: str, value: object) -> str:
    """The message of the InputError ``build(field=value)`` raises, which names ``field``."""
    with pytest.raises(InputError) as caught:
        build(**{field: value})
    message = str(caught.value)
    assert message.startswith(f"{field}: Expected "), message
    return message


# ------------------------------------------------------------------ sequence fields

# (builder, field, one valid item)
SEQUENCES = [
    (_experiment, "tags", "split-k"),
    (_experiment, "kernel_files", "exp_1/k.py"),
    (_experiment, "points", _POINT),
    (_experiment, "recommendations", _RECOMMENDATION),
    (_experiment, "profiling", _FACT),
    (_experiment, "floors", _FLOOR),
    (_experiment, "sources", _REF),
    (_series, "experiments", _EXPERIMENT),
    (_recommendation, "catalog_ids", "split-k"),
    (_profile, "facts", _FACT),
    (_profile, "opportunities", _RECOMMENDATION),
    (_log, "layouts", "seed"),
    (_log, "experiments", _EXPERIMENT),
    (_log, "series", _SERIES),
    (_log, "rules", _FACT),
    (_log, "project", _FACT),
    (_log, "lessons", _FACT),
    (_log, "kernels", _KERNEL),
    (_log, "recommendations", _RECOMMENDATION),
    (_log, "profiling", _FACT),
    (_log, "unread", _UNREAD),
    (_log, "warnings", "catalog not loaded"),
]
SEQUENCE_IDS = [f"{build.__name__.lstrip('_')}.{field}" for build, field, _ in SEQUENCES]


@pytest.mark.parametrize(("build", "field", "item"), SEQUENCES, ids=SEQUENCE_IDS)
@pytest.mark.parametrize("value", [None, 5, 3.5, True, object()], ids=repr)
def test_a_sequence_field_refuses_what_is_not_iterable(
    build: Build, field: str, item: object, value: object
) -> None:
    message = _refused(build, field, value)
    assert message.endswith(f"got {type(value).__name__}")


@pytest.mark.parametrize(("build", "field", "item"), SEQUENCES, ids=SEQUENCE_IDS)
@pytest.mark.parametrize("value", ["", "abc", b"abc"], ids=repr)
def test_a_sequence_field_refuses_text_for_items(
    build: Build, field: str, item: object, value: object
) -> None:
    # "abc" would otherwise read as three one-letter items, "" as none.
    message = _refused(build, field, value)
    assert message.endswith(f"got {type(value).__name__}")


@pytest.mark.parametrize(("build", "field", "item"), SEQUENCES, ids=SEQUENCE_IDS)
def test_a_sequence_field_refuses_an_item_of_another_type(
    build: Build, field: str, item: object
) -> None:
    wrong: object = 5 if isinstance(item, str) else "a line of text"
    message = _refused(build, field, [item, wrong])
    kind = type(item).__name__
    assert f"Expected a sequence of {kind}, got an item of type {type(wrong).__name__}" in message


@pytest.mark.parametrize(("build", "field", "item"), SEQUENCES, ids=SEQUENCE_IDS)
def test_a_sequence_field_takes_a_list_or_a_generator_as_a_tuple(
    build: Build, field: str, item: object
) -> None:
    assert getattr(build(**{field: [item]}), field) == (item,)
    assert getattr(build(**{field: (x for x in [item, item])}), field) == (item, item)


# ------------------------------------------------------------------ mapping fields


@pytest.mark.parametrize("value", [None, 5, "x", b"x", [("BLOCK_N", "64")]], ids=repr)
def test_knobs_refuse_what_is_no_mapping(value: object) -> None:
    message = _refused(_experiment, "knobs", value)
    assert "Expected a mapping of str to str" in message


@pytest.mark.parametrize("knobs", [{"BLOCK_N": 64}, {"BLOCK_N": None}, {1: "64"}], ids=repr)
def test_knobs_refuse_a_key_or_a_value_that_is_no_str(knobs: dict[Any, Any]) -> None:
    _refused(_experiment, "knobs", knobs)


def test_knobs_are_copied_into_a_dict() -> None:
    knobs = MappingProxyType({"BLOCK_N": "64"})
    assert _experiment(knobs=knobs).knobs == {"BLOCK_N": "64"}


METRIC_BUILDS = [(_experiment, "metrics"), (_profile, "metrics")]


@pytest.mark.parametrize(("build", "field"), METRIC_BUILDS, ids=["Experiment", "ProfileFacts"])
@pytest.mark.parametrize(
    "value",
    [None, 5, "", "x", [], {"dram_pct": True}, {"dram_pct": "80"}, {"dram_pct": None}, {1: 2.0}],
    ids=repr,
)
def test_metrics_refuse_what_is_no_mapping_of_str_to_numbers(
    build: Build, field: str, value: object
) -> None:
    message = _refused(build, field, value)
    assert "Expected a mapping of str to real numbers" in message


@pytest.mark.parametrize(("build", "field"), METRIC_BUILDS, ids=["Experiment", "ProfileFacts"])
def test_metrics_widen_an_int_to_a_float(build: Build, field: str) -> None:
    metrics = getattr(build(**{field: {"dram_pct": 80, "occupancy_pct": 45.5}}), field)
    assert metrics == {"dram_pct": 80.0, "occupancy_pct": 45.5}
    assert all(type(value) is float for value in metrics.values())


@pytest.mark.parametrize(
    "refs", [None, 5, [("latency", _REF)], {"latency": "summary.md:3"}, {1: _REF}], ids=repr
)
def test_refs_refuse_what_is_no_mapping_of_str_to_source_refs(refs: object) -> None:
    message = _refused(_experiment, "refs", refs)
    assert "Expected a mapping of str to SourceRef" in message


# ------------------------------------------------------------------ scalar fields

# (builder, field): fields holding a str, never None.
TEXTS = [
    (_source_ref, "path"),
    (_fact, "text"),
    (_unread, "path"),
    (_unread, "reason"),
    (_point, "name"),
    (_point, "unit"),
    (_experiment, "label"),
    (_experiment, "description"),
    (_experiment, "headline_point"),
    (_experiment, "correctness_note"),
    (_experiment, "date"),
    (_experiment, "text"),
    (_series, "name"),
    (_series, "kind"),
    (_floor, "point"),
    (_floor, "impl"),
    (_floor, "unit"),
    (_kernel, "path"),
    (_kernel, "text"),
    (_kernel, "language"),
    (_kernel, "role"),
    (_recommendation, "text"),
    (_profile, "point"),
    (_profile, "version"),
    (_log, "root"),
]
# Fields holding a str or None.
OPTIONAL_TEXTS = [
    (_experiment, "unit"),
    (_experiment, "throughput_unit"),
    (_experiment, "kernel"),
    (_experiment, "gpu"),
    (_profile, "bottleneck"),
    (_log, "workload_profile"),
]


def _ids(pairs: list[tuple[Build, str]]) -> list[str]:
    return [f"{build.__name__.lstrip('_')}.{field}" for build, field in pairs]


@pytest.mark.parametrize(("build", "field"), TEXTS, ids=_ids(TEXTS))
@pytest.mark.parametrize("value", [None, 5, b"x", ["x"]], ids=repr)
def test_a_text_field_refuses_what_is_no_str(build: Build, field: str, value: object) -> None:
    _refused(build, field, value)


@pytest.mark.parametrize(("build", "field"), OPTIONAL_TEXTS, ids=_ids(OPTIONAL_TEXTS))
@pytest.mark.parametrize("value", [5, b"x", ["x"]], ids=repr)
def test_an_optional_text_field_refuses_what_is_no_str(
    build: Build, field: str, value: object
) -> None:
    assert "None or a string" in _refused(build, field, value)


@pytest.mark.parametrize(("build", "field"), OPTIONAL_TEXTS, ids=_ids(OPTIONAL_TEXTS))
def test_an_optional_text_field_takes_none_and_text(build: Build, field: str) -> None:
    assert getattr(build(**{field: None}), field) is None
    assert getattr(build(**{field: "us"}), field) == "us"


# Fields holding an int, and those holding an int or None.
INTEGERS = [(_source_ref, "line"), (_experiment, "number"), (_recommendation, "after")]
OPTIONAL_INTEGERS = [
    (_kernel, "experiment"),
    (_recommendation, "experiment"),
    (_profile, "experiment"),
    (_log, "until"),
]


@pytest.mark.parametrize(("build", "field"), INTEGERS, ids=_ids(INTEGERS))
@pytest.mark.parametrize("value", [None, True, 3.0, "3"], ids=repr)
def test_a_number_field_refuses_what_is_no_int(build: Build, field: str, value: object) -> None:
    # True is an int to Python, but no experiment or line is numbered by it.
    assert "Expected an integer" in _refused(build, field, value)


@pytest.mark.parametrize(("build", "field"), OPTIONAL_INTEGERS, ids=_ids(OPTIONAL_INTEGERS))
@pytest.mark.parametrize("value", [False, 3.5, "3"], ids=repr)
def test_an_optional_number_field_refuses_what_is_no_int(
    build: Build, field: str, value: object
) -> None:
    assert "None or an integer" in _refused(build, field, value)


@pytest.mark.parametrize(("build", "field"), OPTIONAL_INTEGERS, ids=_ids(OPTIONAL_INTEGERS))
def test_an_optional_number_field_takes_none_and_an_int(build: Build, field: str) -> None:
    assert getattr(build(**{field: None}), field) is None
    assert getattr(build(**{field: 7}), field) == 7


def test_a_source_line_below_zero_is_refused() -> None:
    assert "Expected an integer >= 0" in _refused(_source_ref, "line", -1)
    assert str(_source_ref(line=0)) == "a.md"


@pytest.mark.parametrize("value", [True, None, "1.5", [1.0]], ids=repr)
def test_a_point_value_is_a_real_number(value: object) -> None:
    assert "Expected a real number" in _refused(_point, "value", value)


def test_a_point_value_takes_an_int() -> None:
    assert _point(value=3).value == 3


@pytest.mark.parametrize(
    ("build", "field", "what"),
    [
        (_fact, "source", "a SourceRef"),
        (_point, "source", "a SourceRef"),
        (_floor, "source", "a SourceRef"),
        (_recommendation, "source", "a SourceRef"),
        (_profile, "source", "a SourceRef"),
    ],
    ids=["Fact", "Point", "FloorRow", "Recommendation", "ProfileFacts"],
)
@pytest.mark.parametrize("value", [None, "summary.md:3", ("summary.md", 3)], ids=repr)
def test_a_source_is_a_source_ref(build: Build, field: str, what: str, value: object) -> None:
    assert f"Expected {what}" in _refused(build, field, value)


@pytest.mark.parametrize(
    ("field", "what"),
    [("kernel_path", "a Fact"), ("baseline_path", "a Fact"), ("profile", "a ProfileFacts")],
)
@pytest.mark.parametrize("value", ["kernels/k.py", 5, _REF], ids=repr)
def test_a_log_record_field_takes_its_record_or_none(field: str, what: str, value: object) -> None:
    assert f"Expected None or {what}" in _refused(_log, field, value)
    assert getattr(_log(**{field: None}), field) is None


@pytest.mark.parametrize("value", ["no", 1, None], ids=repr)
def test_attempted_is_a_bool(value: object) -> None:
    # "no" is truthy: it would read as an attempted experiment.
    assert "Expected a bool" in _refused(_experiment, "attempted", value)


def test_a_status_word_reads_as_its_status() -> None:
    experiment = _experiment(status="REVERTED")
    assert experiment.status is Status.REVERTED
    assert not experiment.kept


@pytest.mark.parametrize("value", ["reverted", "DROPPED", 5, True], ids=repr)
def test_a_status_that_is_none_of_the_statuses_is_refused(value: object) -> None:
    assert "Expected None or one of 'BASELINE'" in _refused(_experiment, "status", value)


@pytest.mark.parametrize("value", [[], {}, ["memory"], 5], ids=repr)
def test_a_floor_ceiling_of_another_type_is_refused(value: object) -> None:
    assert "Expected None, 'memory' or 'compute'" in _refused(_floor, "ceiling", value)


# ------------------------------------------------------------------ parse_result


def _result_text() -> str:
    row = ResultRow(point="b=1", impl="triton", median=10.0, p20=9.0, p80=11.0, unit="us")
    record = ResultRecord(experiment=1, title="t", status="KEPT", correctness="PASS", rows=(row,))
    return render_result(record)


READERS = [parse_result, measurement_rows]


@pytest.mark.parametrize("read", READERS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("argument", ["refused", "warnings"])
@pytest.mark.parametrize("value", [5, "x", (), {}, True], ids=repr)
def test_a_sink_that_is_no_list_is_refused(
    read: Callable[..., object], argument: str, value: object
) -> None:
    kind = type(value).__name__
    with pytest.raises(InputError, match=rf"^{argument}: Expected None or a list, got {kind}$"):
        read(_result_text(), **{argument: value})


@pytest.mark.parametrize("read", READERS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("value", [5, b"exp_1/result.md", ["exp_1/result.md"]], ids=repr)
def test_a_path_that_is_no_path_is_refused(read: Callable[..., object], value: object) -> None:
    kind = re.escape(type(value).__name__)
    with pytest.raises(InputError, match=rf"^path: Expected None or a path .*, got {kind}$"):
        read(_result_text(), path=value)


def test_lists_given_to_parse_result_are_still_appended_to() -> None:
    refused: list[Any] = []
    warnings: list[str] = []
    record = parse_result(
        _result_text(), path="exp_1/result.md", refused=refused, warnings=warnings
    )
    assert record.experiment == 1
    assert (refused, warnings) == ([], [])

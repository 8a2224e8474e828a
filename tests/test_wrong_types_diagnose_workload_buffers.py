"""Wrong-type arguments to kernelopt.diagnose's records, kernelopt.workload and
kernelopt.buffers: each gets ``<name>: Expected X, got Y`` before anything runs or changes.

The cases of tests/test_public_api_wrong_types.py are not repeated here; these cover the
scalar fields of the diagnosis records, the field each message names, and the flags and
arguments that were silently accepted.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import torch

import kernelopt.buffers as buffers
import kernelopt.diagnose as diagnose
import kernelopt.workload as workload
from kernelopt._errors import FormatError, InputError
from kernelopt.experiments.log import Unread

# ------------------------------------------------------------------ kernelopt.diagnose

_PATHOLOGY = next(iter(diagnose.Pathology))


def _best(**wrong: Any) -> diagnose.BestResult:
    fields: dict[str, Any] = {
        "experiment": 3,
        "label": "exp 3",
        "value": 12.5,
        "unit": "us",
        "kind": "latency",
    }
    return diagnose.BestResult(**{**fields, **wrong})


_RECORDS: list[tuple[Callable[[], object], str]] = [
    (lambda: diagnose.Finding(pathology=_PATHOLOGY, summary="s", confidence=True), "confidence"),
    (lambda: diagnose.Finding(pathology=_PATHOLOGY, summary=None), "summary"),
    (lambda: diagnose.Finding(pathology=_PATHOLOGY, summary="s", missing="abc"), "missing"),
    (lambda: diagnose.Finding(pathology=_PATHOLOGY, summary="s", missing=[5]), "missing"),
    (lambda: diagnose.Finding(pathology=_PATHOLOGY, summary="s", evidence=["q"]), "evidence"),
    (lambda: diagnose.Finding(pathology=_PATHOLOGY, summary="s", actions=5), "actions"),
    (lambda: diagnose.Finding(pathology=_PATHOLOGY, summary="s", experiments=5), "experiments"),
    (lambda: diagnose.Evidence(quote=5), "quote"),
    (lambda: diagnose.Evidence(quote="q", source=Path("log.md")), "source"),
    (lambda: diagnose.Action(text=None), "text"),
    (lambda: diagnose.Action(text="t", catalog_id=5), "catalog_id"),
    (lambda: diagnose.Action(text="t", catalog_id="a", also=5), "also"),
    (lambda: diagnose.CatalogLink(catalog_id="a", path=Path("x.md")), "path"),
    (lambda: diagnose.Check(pathology=_PATHOLOGY, checked="no", sentence="s"), "checked"),
    (lambda: diagnose.Check(pathology=_PATHOLOGY, checked=False, sentence=5), "sentence"),
    (lambda: _best(experiment="3"), "experiment"),
    (lambda: _best(value="12.5"), "value"),
    (lambda: _best(value=True), "value"),
    (lambda: _best(only=1), "only"),
    (lambda: diagnose.TrajectoryPoint(experiment=True, value=1.0), "experiment"),
    (lambda: diagnose.TrajectoryPoint(experiment=1, value=1.0, gain="5 %"), "gain"),
    (lambda: diagnose.TrajectoryPoint(experiment=1, value=1.0, same_run="yes"), "same_run"),
    (lambda: diagnose.LogSummary(root=Path(".")), "root"),
    (lambda: diagnose.LogSummary(root=".", experiments=2.0), "experiments"),
    (lambda: diagnose.LogSummary(root=".", best={"experiment": 3}), "best"),
    (lambda: diagnose.LogSummary(root=".", stall="12"), "stall"),
    (lambda: diagnose.LogSummary(root=".", stall_gain="5 %"), "stall_gain"),
    (lambda: diagnose.LogSummary(root=".", until="3"), "until"),
    (lambda: diagnose.LogSummary(root=".", layouts="seed"), "layouts"),
    (lambda: diagnose.LogSummary(root=".", other_series=5), "other_series"),
    (lambda: diagnose.Diagnosis(summary=None), "summary"),
    (lambda: diagnose.Diagnosis(root_causes=5), "root_causes"),
    (lambda: diagnose.Diagnosis(warnings="w"), "warnings"),
    (lambda: diagnose.Diagnosis(unread=[("a.md", "binary")]), "unread"),
    (lambda: diagnose.Diagnosis(findings=5), "findings"),
    (lambda: diagnose.Diagnosis(checks=[None]), "checks"),
]


@pytest.mark.parametrize(
    ("build", "field"), _RECORDS, ids=[f"{i}-{field}" for i, (_, field) in enumerate(_RECORDS)]
)
def test_a_diagnosis_record_refuses_a_wrong_type_naming_its_field(
    build: Callable[[], object], field: str
) -> None:
    with pytest.raises(InputError, match=rf"^{field}: Expected "):
        build()


def test_diagnosis_records_still_take_what_the_engine_builds() -> None:
    point = diagnose.TrajectoryPoint(experiment=2, value=10, gain=None, point="tiny")
    summary = diagnose.LogSummary(
        root="log",
        layouts=["seed"],
        best=_best(value=10),
        trajectory=[point],
        stall=[4, 5],
        first=1,
        last=5,
    )
    finding = diagnose.Finding(
        pathology=_PATHOLOGY,
        summary="s",
        confidence=1,
        evidence=[diagnose.Evidence(quote="q", experiments=[2])],
        actions=[
            diagnose.Action(text="t", catalog_id="a", also=[diagnose.CatalogLink(catalog_id="b")])
        ],
    )
    diagnosis = diagnose.Diagnosis(
        findings=[finding], summary=summary, unread=[Unread(path="a.md", reason="binary")]
    )
    assert diagnosis.summary.trajectory == (point,)
    assert diagnosis.findings[0].actions[0].catalog_ids == ("a", "b")


def test_entry_links_refuses_bytes_as_the_knowledge_tree() -> None:
    with pytest.raises(InputError, match=r"^knowledge: Expected a path"):
        diagnose.entry_links(diagnose.Diagnosis(), "plan.md", knowledge=b"kb")  # type: ignore[arg-type]


def test_entry_links_takes_a_path_object_as_the_knowledge_tree(tmp_path: Path) -> None:
    entry = tmp_path / "kb" / "optimizations" / "mine.md"
    entry.parent.mkdir(parents=True)
    entry.write_text("# Mine\n", "utf-8")
    action = diagnose.Action(text="t", catalog_id="mine", path="optimizations/mine.md")
    finding = diagnose.Finding(pathology=_PATHOLOGY, summary="s", actions=[action])
    links = diagnose.entry_links(
        diagnose.Diagnosis(findings=[finding]), tmp_path / "plan.md", knowledge=tmp_path / "kb"
    )
    assert links == {"mine": "kb/optimizations/mine.md"}


# ------------------------------------------------------------------ kernelopt.workload


@pytest.mark.parametrize("reader", [workload.profile_from_dict, workload.shortcut_from_dict])
@pytest.mark.parametrize("data", [5, None, [], "x"])
def test_a_non_mapping_reads_as_no_profile_in_words_of_its_own(
    reader: Callable[[object], object], data: object
) -> None:
    with pytest.raises(FormatError, match=r"^data: Expected .* as a dict of its fields") as info:
        reader(data)
    assert "iterable" not in str(info.value)
    assert "keys" not in str(info.value)


def test_read_jsonl_refuses_an_empty_path_as_read_trace_does() -> None:
    with pytest.raises(InputError, match=r"^path: Expected a file path, got an empty path"):
        workload.read_jsonl("")
    with pytest.raises(InputError, match="Expected a file path, got an empty path"):
        workload.read_trace("")


def test_read_jsonl_refuses_a_missing_file_or_a_folder(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"^path: Expected an existing trace file, got no file"):
        workload.read_jsonl(tmp_path / "missing.jsonl")
    with pytest.raises(InputError, match="Expected an existing trace file, got a directory"):
        workload.read_jsonl(tmp_path)


def test_read_jsonl_still_reads_a_file(tmp_path: Path) -> None:
    trace = tmp_path / "calls.jsonl"
    trace.write_text('{"op": "softmax", "args": {"x": {"shape": [2], "dtype": "float32"}}}\n')
    assert workload.read_jsonl(str(trace)).records == 1


def test_parse_call_record_takes_only_a_set_to_add_unknown_dtypes_to() -> None:
    record = {"op": "s", "args": {"x": {"shape": [2], "dtype": "weird"}}}
    with pytest.raises(InputError, match=r"^unknown_dtypes: Expected a set of str or None"):
        workload.parse_call_record(record, unknown_dtypes=frozenset())  # type: ignore[arg-type]
    seen: set[str] = set()
    workload.parse_call_record(record, unknown_dtypes=seen)
    assert seen == {"weird"}


def test_register_rule_refuses_a_replace_that_is_no_bool() -> None:
    rule = workload.ShortcutRule(id="dominant-shape", description="off", check=lambda o, t: ())
    before = workload.registered_rules()
    with pytest.raises(InputError, match=r"^replace: Expected a bool, got 'no'"):
        workload.register_rule(rule, replace="no")  # type: ignore[arg-type]
    assert workload.registered_rules() == before


def test_register_signature_refuses_a_replace_that_is_no_bool() -> None:
    signature = workload.OpSignature(name="softmax", ops=("softmax",))
    before = workload.registered_signatures()
    with pytest.raises(InputError, match=r"^replace: Expected a bool, got 1"):
        workload.register_signature(signature, replace=1)  # type: ignore[arg-type]
    assert workload.registered_signatures() == before


# ------------------------------------------------------------------ kernelopt.buffers

_INPUTS_WRONG = (
    r"^inputs: Expected a mapping of str to object, a sequence of object or a torch.Tensor"
)


def test_resolve_out_refuses_wrong_inputs_without_an_out_too() -> None:
    # As check_out does: a wrong inputs fails on the first call, given out or not.
    with pytest.raises(InputError, match=_INPUTS_WRONG + r", got int"):
        buffers.resolve_out(None, (2, 3), torch.float32, "cpu", inputs=5)  # type: ignore[arg-type]


def test_check_out_refuses_a_str_as_its_inputs() -> None:
    with pytest.raises(InputError, match=_INPUTS_WRONG + r", got str"):
        buffers.check_out(torch.empty(2), (2,), torch.float32, "cpu", inputs="x")


def test_check_out_still_reads_inputs_given_as_a_generator() -> None:
    x = torch.empty(2)
    with pytest.raises(InputError, match="overlapping input 0"):
        buffers.check_out(x, (2,), torch.float32, "cpu", inputs=(t for t in [x]))  # type: ignore[arg-type]


def test_resolve_out_refuses_a_scope_that_is_no_buffer_scope() -> None:
    with pytest.raises(InputError, match=r"^scope: Expected a BufferScope or None, got str"):
        buffers.resolve_out(None, (2,), torch.float32, "cpu", scope="mine")  # type: ignore[arg-type]


def _launch(scope: buffers.BufferScope, x: torch.Tensor) -> torch.Tensor:
    return x


@pytest.mark.parametrize("scope", [None, 5, buffers.BufferPool()])
def test_a_launcher_refuses_a_scope_that_is_no_buffer_scope(scope: object) -> None:
    with pytest.raises(InputError, match=r"^scope: Expected a BufferScope, got "):
        buffers.PersistentLauncher(_launch, scope=scope)  # type: ignore[arg-type]


def test_a_launcher_refuses_no_function() -> None:
    scope = buffers.BufferScope("wrong-types", pool=buffers.BufferPool())
    with pytest.raises(
        InputError, match=r"^fn: Expected a callable fn\(scope, ...\), got NoneType"
    ):
        buffers.PersistentLauncher(None, scope=scope)  # type: ignore[arg-type, var-annotated]


def test_check_no_stale_reads_refuses_a_strict_that_is_no_bool() -> None:
    calls: list[int] = []

    def launcher(x: torch.Tensor) -> torch.Tensor:
        calls.append(1)
        return x

    with pytest.raises(InputError, match=r"^strict: Expected a bool, got 'no'"):
        buffers.check_no_stale_reads(
            launcher,
            lambda i: (torch.ones(2),),
            buffers=buffers.BufferPool(),
            strict="no",  # type: ignore[arg-type]
        )
    assert calls == []  # refused before the launcher ran

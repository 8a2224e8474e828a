"""Free text in every hand-off field reads back as written, or is refused when it is made;
concurrent LEARN writers lose no measurement."""

from __future__ import annotations

import importlib
import tempfile
import threading
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from kernelopt import InputError
from kernelopt.bench import Bottleneck, ProfileReport, Stage, TrialPoint
from kernelopt.catalog import parse_entry
from kernelopt.experiments import Correctness
from kernelopt.workflow import (
    Action,
    Change,
    Constraints,
    DesignerPrompt,
    NewVersion,
    OptimizationTask,
    PerfRow,
    ProfilerPrompt,
    TrialCheck,
    learn,
    observe_rows,
    parse_designer_prompt,
    parse_handoff,
    parse_performance,
    parse_profile,
    parse_profiler_prompt,
    parse_task,
    parse_version,
    profile_from_rows,
    update_devlog,
)

from .conftest import anchor_row, bench_row

# Any character but surrogates, and the ones markdown gives a meaning: pipes, backticks,
# hashes, brackets, list markers, separators, and every kind of line break.
free = st.one_of(
    st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=12),
    st.text(alphabet="ab |`#-:;,.[]()*\t\n\r\x0b\x0c\x1c\x85\u2028é µ", min_size=1, max_size=10),
)
SETTINGS = settings(
    max_examples=200, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True
)


def made(build: Any) -> Any:
    """The record ``build`` makes, or a discarded example when its values are refused."""
    try:
        return build()
    except InputError:
        assume(False)


@st.composite
def free_changes(draw: Any) -> Change:
    what, rationale = draw(free), draw(st.one_of(st.just(""), free))
    if draw(st.booleans()):
        return made(lambda: Change(what=what, entry_id="a-b", link="x/y.md", rationale=rationale))
    return made(lambda: Change(what=what, rationale=rationale))


@SETTINGS
@given(st.data())
def test_any_task_text_reads_back(data: st.DataObject) -> None:
    draw = data.draw
    constraints = made(
        lambda: Constraints(
            language=draw(st.one_of(st.none(), free)),
            control_level=draw(st.one_of(st.none(), free)),
            other=draw(st.lists(free, max_size=2)),
        )
    )
    task = made(
        lambda: OptimizationTask(
            kernel=draw(free),
            current=draw(free),
            new_version=draw(free),
            bottleneck=draw(free),
            optimizations=[draw(free_changes())],
            constraints=constraints,
        )
    )
    assert parse_task(task.render()) == task


@SETTINGS
@given(st.data())
def test_any_new_version_text_reads_back(data: st.DataObject) -> None:
    draw = data.draw
    name = draw(st.one_of(st.just(""), free))
    trial = made(lambda: TrialCheck(point=TrialPoint(b=1, s=2, t=3, name=name), why=draw(free)))
    version = made(
        lambda: NewVersion(
            kernel=draw(free),
            version=draw(free),
            changes=[draw(free_changes())],
            created=draw(st.lists(free, max_size=2)),
            modified=draw(st.lists(free, max_size=2)),
            correctness=Correctness.PASS,
            correctness_detail=draw(st.one_of(st.just(""), free)),
            trials=[trial],
            devlog=draw(st.one_of(st.none(), free)),
        )
    )
    assert parse_version(version.render()) == version


@SETTINGS
@given(st.data())
def test_any_prompt_text_reads_back(data: st.DataObject) -> None:
    draw = data.draw
    profiler = made(
        lambda: ProfilerPrompt(
            kernel=draw(free), version=draw(free), point={"b": 1, "s": 2, "t": 3}, devlog=draw(free)
        )
    )
    assert parse_profiler_prompt(profiler.render()) == profiler
    designer = made(
        lambda: DesignerPrompt(
            kernel=draw(free),
            current=draw(free),
            new_version=draw(free),
            language="triton",
            optimizations=[draw(free_changes())],
        )
    )
    assert parse_designer_prompt(designer.render()) == designer


@SETTINGS
@given(st.data())
def test_any_devlog_row_reads_back(data: st.DataObject) -> None:
    draw = data.draw
    row = made(
        lambda: PerfRow(
            version=draw(free),
            point="b=1 s=2 t=3",
            time=1.0,
            gpu=draw(st.one_of(st.just(""), free)),
            date=draw(st.one_of(st.just(""), free)),
        )
    )
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "k.md"
        update_devlog(path, [row])
        assert parse_performance(path.read_text(encoding="utf-8")) == [row]


@pytest.mark.parametrize("text", ["a\rb", "a\x85b", "a\u2028b", "a\x0cb"])
def test_a_devlog_cell_holding_a_line_break_is_refused(text: str) -> None:
    # The devlog is read line by line as str.splitlines splits it: any of these would
    # break the row in two.
    with pytest.raises(InputError, match="one line"):
        PerfRow(version="v2", point="b=1 s=1 t=1", time=1.0, gpu=text)
    with pytest.raises(InputError, match="one line"):
        PerfRow(version=text, point="b=1 s=1 t=1", time=1.0)


@pytest.mark.parametrize(
    "build",
    [
        lambda: NewVersion(kernel="k\rx", version="v", changes=[Change(what="a")]),
        lambda: OptimizationTask(
            kernel="k\rx",
            current="a",
            new_version="b",
            bottleneck="x",
            optimizations=[Change(what="y")],
        ),
        lambda: ProfilerPrompt(kernel="k\rx", version="v", point={"b": 1, "s": 1, "t": 1}),
        lambda: Constraints(other=("keep\rthis",)),
    ],
)
def test_a_carriage_return_in_a_one_line_field_is_refused(build: Any) -> None:
    # Readers take a lone CR for a line end, as CommonMark does.
    with pytest.raises(InputError, match="one non-empty line"):
        build()


def test_a_path_holding_a_semicolon_is_refused() -> None:
    # "### Files:" lists split on ',' and ';' ("Created: a, b; Modified: c").
    with pytest.raises(InputError, match="without commas"):
        NewVersion(kernel="k", version="v", changes=[Change(what="a")], created=["a;b.py"])


@pytest.mark.parametrize(
    "build",
    [
        lambda: NewVersion(kernel="k", version="#", changes=[Change(what="a")]),
        lambda: OptimizationTask(
            kernel="k",
            current="a",
            new_version="#",
            bottleneck="x",
            optimizations=[Change(what="y")],
        ),
    ],
)
def test_a_version_closing_the_heading_with_hashes_is_refused(build: Any) -> None:
    # "## New Version: k #": markdown drops a heading's closing '#' run.
    with pytest.raises(InputError, match="not ending in '#'"):
        build()


def test_parse_handoff_finds_a_hand_off_after_prose_with_cr_line_ends() -> None:
    version = NewVersion(kernel="k", version="v2", changes=[Change(what="fuse")])
    text = "notes\r\r" + version.render().replace("\n", "\r")
    assert parse_version(text) == version
    assert parse_handoff(text) == version


BOM = "\ufeff"  # what editors on Windows put before the first heading of a UTF-8 file


@pytest.mark.parametrize(
    ("parse", "record"),
    [
        (parse_version, NewVersion(kernel="k", version="v2", changes=[Change(what="fuse")])),
        (
            parse_task,
            OptimizationTask(
                kernel="k", current="v1", new_version="v2", bottleneck="b",
                optimizations=[Change(what="fuse")],
            ),
        ),
        (
            parse_profile,
            ProfileReport(
                kernel="k", version="v2", point={"b": 1, "s": 1, "t": 1},
                stages=[Stage(name="all", duration=2.0)], bottleneck=Bottleneck.MEMORY,
                root_cause="Bytes set the floor.",
            ),
        ),
        (
            parse_profiler_prompt,
            ProfilerPrompt(kernel="k", version="v2", point={"b": 1, "s": 1, "t": 1}),
        ),
        (
            parse_designer_prompt,
            DesignerPrompt(
                kernel="k", current="v1", new_version="v2", language="triton",
                optimizations=[Change(what="fuse")],
            ),
        ),
    ],
)  # fmt: skip
def test_a_byte_order_mark_before_the_hand_off_is_not_text(parse: Any, record: Any) -> None:
    assert parse(BOM + record.render()) == record
    if parse in (parse_version, parse_task, parse_profile):
        assert parse_handoff(BOM + record.render()) == record


def test_a_devlog_with_a_byte_order_mark_keeps_it_and_its_section(tmp_path: Path) -> None:
    devlog = tmp_path / "k.md"
    row = PerfRow(version="v2", point="b=1 s=1 t=1", time=2.0)
    devlog.write_text(f"{BOM}## Performance\n\n### v2\n", encoding="utf-8")
    update_devlog(devlog, [row])
    text = devlog.read_text(encoding="utf-8")
    assert text.startswith(f"{BOM}## Performance\n") and text.count("## Performance") == 1
    assert parse_performance(text) == [row]


def test_concurrent_regressions_each_leave_their_evidence(
    knowledge: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Two LEARN runs both find no '<entry>-regression' and both derive it; the second to
    # write must extend what the first created, not fail and lose its measurement.
    module = importlib.import_module("kernelopt.workflow.learn")  # the package re-exports learn()

    both_decided = threading.Barrier(2, timeout=30)
    derive = module.derive_anti_pattern

    def derive_together(*args: Any, **kwargs: Any) -> Any:
        entry = derive(*args, **kwargs)
        both_decided.wait()
        return entry

    monkeypatch.setattr(module, "derive_anti_pattern", derive_together)
    outcomes: list[Any] = []
    errors: list[BaseException] = []

    def run(before: str, after: str) -> None:
        try:
            observation = observe_rows(
                anchor_row(before), anchor_row(after), source=f"runs/{before}-{after}.jsonl"
            )
            outcomes.append(
                learn(observation, entry_id="split-kv-flash-decoding", knowledge=knowledge)
            )
        except BaseException as error:  # reported below, from the main thread
            errors.append(error)

    threads = [
        threading.Thread(target=run, args=("splits8", "splits32")),
        threading.Thread(target=run, args=("splits8", "splits16")),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors
    assert sorted(o.action.value for o in outcomes) == [
        Action.EVIDENCE.value,
        Action.NEW_ANTI_PATTERN.value,
    ]
    path = knowledge / "anti-patterns" / "split-kv-flash-decoding-regression.md"
    entry = parse_entry(path.read_text(encoding="utf-8"))
    changes = sorted(row.change for _, row in entry.evidence_rows)
    assert changes == ["+11.3 % (SLOW)", "+37.1 % (SLOW)"]


def test_the_vs_baseline_table_compares_rows_timed_the_same_way() -> None:
    # A benchmark writes a cold and a CUDA-graph row per point; the order may differ
    # between the two files. A graph time against a cold one is not a change.
    after = [bench_row("v2", 80.0, mode="cold"), bench_row("v2", 66.0, mode="graph")]
    before = [bench_row("v1", 70.0, mode="graph"), bench_row("v1", 90.0, mode="cold")]
    [report] = profile_from_rows(after, kernel="k", version="v2", baseline=before, mode="graph")
    median = next(m for m in report.baseline if m.metric.startswith("Median"))
    assert (median.previous, median.current) == (70.0, 66.0)
    # No baseline row timed that way: no comparison rather than a wrong one.
    [alone] = profile_from_rows(after, kernel="k", version="v2", baseline=before[1:], mode="graph")
    assert alone.baseline == ()

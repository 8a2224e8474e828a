"""Hypothesis strategies for the hand-off records and devlog rows.

``profiles()`` draws reports whose values the rendered text carries exactly (numbers at
the renderer's precision, at most three opportunities, no ``|`` in cells, a one-line
root cause, an unnamed point); ``any_profiles()`` draws reports without those limits,
for the fixed-point property.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from kernelopt.bench import (
    BaselineMetric,
    Bottleneck,
    Opportunity,
    ProfileReport,
    Stage,
    TrialPoint,
)
from kernelopt.experiments import Correctness
from kernelopt.workflow import (
    DESIGN_LANGUAGES,
    Change,
    Constraints,
    DesignerPrompt,
    NewVersion,
    OptimizationTask,
    PerfRow,
    ProfilerPrompt,
    TrialCheck,
)

# Letters, digits, punctuation and a few non-ASCII characters people put in such text.
ALPHABET = "abcdxyzABCXYZ0189 _-./:=+%()<>~µ×é'\""
WORD_ALPHABET = "abcxyzABC0189_-./:=+µ"

words = st.text(alphabet=WORD_ALPHABET, min_size=1, max_size=8)


def line(min_size: int = 1, alphabet: str = ALPHABET) -> st.SearchStrategy[str]:
    """One line of single-spaced text without surrounding spaces."""
    return (
        st.text(alphabet=alphabet, min_size=min_size, max_size=24)
        .map(lambda s: " ".join(s.split()))
        .filter(lambda s: len(s) >= min_size)
    )


def sig4(low: float, high: float) -> st.SearchStrategy[float]:
    return st.floats(low, high, allow_nan=False).map(lambda x: float(f"{x:.4g}"))


def dec1(low: float, high: float) -> st.SearchStrategy[float]:
    return st.floats(low, high, allow_nan=False).map(lambda x: float(f"{x:.1f}"))


axis_names = st.from_regex(r"[a-z][a-z_]{0,4}", fullmatch=True).filter(
    lambda k: k not in ("b", "s", "t")
)


def points(*, named: bool = False) -> st.SearchStrategy[TrialPoint]:
    return st.builds(
        TrialPoint,
        b=st.integers(1, 512),
        s=st.integers(1, 64),
        t=st.integers(1, 1 << 17),
        name=line(0, "abcxyz_-0189 ") if named else st.just(""),
        extra=st.dictionaries(axis_names, st.integers(1, 1024), max_size=2),
    )


pct = st.one_of(st.none(), dec1(0, 1000))  # a share of a measured ceiling may pass 100
occupancy = st.one_of(st.none(), dec1(0, 100))

stages = st.builds(
    Stage,
    name=line(0),
    duration=sig4(0, 1e7),
    unit=st.sampled_from(["us", "ms", "ns", "s"]),
    tc_pct=pct,
    dram_pct=pct,
    occupancy_pct=occupancy,
    bottleneck=line(0),
    key_issue=line(0),
)

entry_ids = st.from_regex(r"[a-z0-9]{1,6}(-[a-z0-9]{1,6}){0,2}", fullmatch=True)

opportunities = st.builds(
    Opportunity,
    name=line(0, ALPHABET.replace("`", "")),
    entry_id=st.one_of(st.just(""), entry_ids),
    gain_pct=st.integers(-20, 100).map(float),
    trigger=line(1),
)


@st.composite
def baseline_metrics(draw: Any) -> BaselineMetric:
    unit = draw(st.sampled_from(["%", "us", "ms", ""]))
    base = draw(line(1, "abcXYZ %#_"))
    metric = f"{base} ({unit})" if unit in ("us", "ms") else base
    return BaselineMetric(
        metric=metric, previous=draw(sig4(0, 1e6)), current=draw(sig4(0, 1e6)), unit=unit
    )


profiles = st.builds(
    ProfileReport,
    kernel=line(1, WORD_ALPHABET + " "),
    version=words,
    point=points(),
    # A profile hand-off has at least one stage: a Stages table without rows is refused.
    stages=st.lists(stages, min_size=1, max_size=3),
    bottleneck=st.sampled_from(list(Bottleneck)),
    root_cause=line(0),
    opportunities=st.lists(opportunities, max_size=3),
    baseline=st.lists(baseline_metrics(), max_size=4),
)

# Cells may hold '|' and newlines (the renderer rewrites them); surrounding spaces are
# stripped by the renderer, so generated text is stripped too.
wild_text = st.text(alphabet=ALPHABET + "|\n  ", max_size=24).map(str.strip)
wild_number = st.floats(-1e9, 1e9, allow_nan=False)

any_profiles = st.builds(
    ProfileReport,
    kernel=line(1, WORD_ALPHABET + " "),
    version=words,
    point=points(named=True),
    stages=st.lists(
        st.builds(
            Stage,
            name=wild_text,
            duration=st.floats(0, 1e9),  # a negative time is refused at construction
            # Any share a Stage holds: none is below 0, and occupancy stops at 100.
            tc_pct=st.one_of(st.none(), st.floats(0, 1e9)),
            dram_pct=st.one_of(st.none(), st.floats(0, 1e9)),
            occupancy_pct=st.one_of(st.none(), st.floats(0, 100)),
            bottleneck=wild_text,
            key_issue=wild_text,
        ),
        min_size=1,
        max_size=3,
    ),
    bottleneck=st.sampled_from(list(Bottleneck)),
    root_cause=wild_text,
    opportunities=st.lists(
        st.builds(
            Opportunity,
            name=line(0, ALPHABET.replace("`", "")),
            entry_id=entry_ids,
            gain_pct=wild_number,
            trigger=line(1),
        ),
        max_size=5,
    ),
    baseline=st.lists(
        st.builds(
            BaselineMetric,
            metric=line(1, "abcXYZ %_"),
            # Values at the shown precision, so that the record itself round-trips.
            previous=sig4(-1e9, 1e9),
            current=sig4(-1e9, 1e9),
            unit=st.sampled_from(["%", "us", ""]),
        ),
        max_size=3,
    ),
)

links = st.from_regex(r"docs/knowledge/[a-z/_-]{1,20}\.md", fullmatch=True)


@st.composite
def changes(draw: Any) -> Change:
    what = draw(line(1).filter(lambda s: "-- rationale:" not in s and not s.startswith("[")))
    rationale = draw(st.one_of(st.just(""), line(1)))
    if draw(st.booleans()):
        return Change(what=what, entry_id=draw(entry_ids), link=draw(links), rationale=rationale)
    return Change(what=what, rationale=rationale)


_LABELS = (
    "language",
    "control level",
    "required control level",
    "register budget",
    "target occupancy",
    "none",
)

constraints = st.builds(
    Constraints,
    language=st.one_of(st.none(), line(1)),
    control_level=st.one_of(st.none(), line(1)),
    register_budget=st.one_of(st.none(), st.integers(1, 255)),
    target_occupancy_pct=st.one_of(st.none(), st.floats(0, 100, allow_nan=False)),
    other=st.lists(
        line(1).filter(
            lambda s: s.lower() != "none" and s.split(":", 1)[0].strip().lower() not in _LABELS
        ),
        max_size=3,
    ),
)

versions = words.filter(lambda s: "->" not in s)

tasks = st.builds(
    OptimizationTask,
    kernel=line(1, WORD_ALPHABET.replace("-", "") + " "),
    current=versions,
    new_version=versions,
    bottleneck=line(1),
    optimizations=st.lists(changes(), min_size=1, max_size=4),
    constraints=constraints,
)

paths = st.from_regex(r"[a-z_/]{1,12}\.(py|md|cu)", fullmatch=True)

trial_checks = st.builds(TrialCheck, point=points(named=True), why=line(1))

new_versions = st.builds(
    NewVersion,
    kernel=line(1, WORD_ALPHABET + " "),
    version=words,
    changes=st.lists(changes(), min_size=1, max_size=3),
    created=st.lists(paths, max_size=3),
    modified=st.lists(paths, max_size=3),
    correctness=st.sampled_from(list(Correctness)),
    correctness_detail=st.one_of(st.just(""), line(1)),
    trials=st.lists(trial_checks, max_size=3),
    devlog=st.one_of(st.none(), paths),
)

perf_rows = st.builds(
    PerfRow,
    # A version is a heading's name: no ":" (nor space or "(", which words hold none of).
    version=words.filter(lambda s: s != "-" and not s.endswith("#") and ":" not in s),
    point=points().map(str),
    time=sig4(1e-3, 1e7),
    unit=st.sampled_from(["us", "ms"]),
    tflop_s=st.one_of(st.none(), sig4(0, 1e4)),
    gb_s=st.one_of(st.none(), sig4(0, 1e5)),
    floor_pct=st.one_of(st.none(), dec1(0, 100)),
    gpu=st.one_of(st.just(""), line(1, "ABCXYZ 0189H")),
    date=st.one_of(st.just(""), st.dates().map(str)),
)

# A prompt keeps no point name (it writes the axes only), so named points test the drop.
profiler_prompts = st.one_of(
    st.builds(ProfilerPrompt, kernel=line(1), version=words, point=points(named=True)),
    st.builds(
        ProfilerPrompt,
        kernel=line(1),
        version=words,
        point=points(named=True),
        devlog=st.one_of(paths, line(1)),
    ),
)

designer_prompts = st.builds(
    DesignerPrompt,
    kernel=line(1),
    current=words,
    new_version=words,
    # "cutile", the catalog's name, is written as the instructions' "cutile-dsl".
    language=st.sampled_from((*DESIGN_LANGUAGES, "cutile")),
    optimizations=st.lists(changes(), min_size=1, max_size=4),
)

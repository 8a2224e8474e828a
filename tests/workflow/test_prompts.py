"""The agents' launch prompts: exact template text, round trips, the task they carry."""

from __future__ import annotations

import attrs
import pytest
from hypothesis import HealthCheck, given, settings

from kernelopt import FormatError, InputError
from kernelopt.bench import DEFAULT_POINTS, TrialPoint
from kernelopt.catalog import Catalog
from kernelopt.workflow import (
    DESIGN_LANGUAGES,
    Change,
    Constraints,
    DesignerPrompt,
    OptimizationTask,
    ProfilerPrompt,
    parse_designer_prompt,
    parse_profiler_prompt,
)

from .strategies import designer_prompts, profiler_prompts

CATALOG = Catalog.builtin()

PROFILER = ProfilerPrompt(
    kernel="mla_decode", version="v3", point=TrialPoint(name="decode", b=32, s=1, t=4096)
)
PROFILER_TEXT = """Profile mla_decode v3 at b=32, s=1, t=4096.
Return compact summary per the output contract.
Update the devlog performance section in docs/kernels/mla_decode.md.
"""

TASK = OptimizationTask(
    kernel="mla_decode",
    current="v2",
    new_version="v3",
    bottleneck="Memory-bound -- 54% of the roofline floor",
    optimizations=[
        Change.of(
            CATALOG.get("split-kv-flash-decoding"),
            "split the KV axis into 8 chunks",
            rationale="32 programs fill a quarter of the GPU",
        ),
        Change(what="fuse the split combine into the last split", rationale="one launch less"),
    ],
    constraints=Constraints(language="triton", register_budget=128),
)
DESIGNER_TEXT = """Create mla_decode v3 from v2.
Language: triton.
Load /design-triton-kernel and the matching reference skill if one exists.
Apply optimizations:
1. [split-kv-flash-decoding](docs/knowledge/optimizations/split-kv-flash-decoding.md) -- split the KV axis into 8 chunks -- rationale: 32 programs fill a quarter of the GPU
2. fuse the split combine into the last split -- rationale: one launch less
Return implementation summary per the output contract.
"""  # noqa: E501


def test_profiler_prompt_is_the_template_text() -> None:
    assert PROFILER.render() == PROFILER_TEXT
    assert PROFILER.devlog == "docs/kernels/mla_decode.md"  # the default follows the kernel
    assert PROFILER.point.name == ""  # the text carries no name, so the record keeps none
    assert parse_profiler_prompt(PROFILER_TEXT) == PROFILER


def test_profiler_prompt_extra_axes_and_devlog() -> None:
    prompt = ProfilerPrompt(
        kernel="mla_decode",
        version="v3",
        point={"b": 32, "s": 16, "t": 4096, "h": 16},
        devlog="notes/mla.md",
    )
    assert prompt.render().splitlines()[0] == "Profile mla_decode v3 at b=32, s=16, t=4096, h=16."
    assert prompt.render().splitlines()[2].endswith(" in notes/mla.md.")
    assert parse_profiler_prompt("Spawn the profiler:\n\n" + prompt.render() + "\nThanks") == prompt
    # One prompt per point of the default trial matrix.
    texts = [ProfilerPrompt(kernel="k", version="v", point=p).render() for p in DEFAULT_POINTS]
    assert [parse_profiler_prompt(t).point.s for t in texts] == [1, 16]


def test_designer_prompt_from_task_is_the_template_text() -> None:
    prompt = DesignerPrompt.from_task(TASK)
    assert prompt.render() == DESIGNER_TEXT
    assert prompt.skill == "/design-triton-kernel"
    assert parse_designer_prompt(DESIGNER_TEXT) == prompt
    # The task hand-off may follow the prompt: its items are not read as the prompt's.
    assert parse_designer_prompt(DESIGNER_TEXT + "\n" + TASK.render()) == prompt


@pytest.mark.parametrize(
    ("given", "written"),
    [
        ("cutile-dsl", "cutile-dsl"),
        ("cutile", "cutile-dsl"),
        ("cute-dsl", "cute-dsl"),
        ("cuda", "cuda"),
    ],
)
def test_languages_are_spelled_as_the_instructions_spell_them(given: str, written: str) -> None:
    bare = OptimizationTask(
        kernel="k", current="a", new_version="b", bottleneck="x", optimizations=[Change(what="y")]
    )
    prompt = DesignerPrompt.from_task(bare, language=given)
    assert prompt.language == written and written in DESIGN_LANGUAGES
    assert f"Load /design-{written}-kernel and" in prompt.render()


def with_language(task: OptimizationTask, language: str | None) -> OptimizationTask:
    return attrs.evolve(task, constraints=Constraints(language=language))


def test_from_task_language_rules() -> None:
    bare = with_language(TASK, None)
    with pytest.raises(InputError, match="language: Expected a language"):
        DesignerPrompt.from_task(bare)
    with pytest.raises(InputError, match="Expected the task's language 'triton'"):
        DesignerPrompt.from_task(TASK, language="cuda")
    assert DesignerPrompt.from_task(TASK, language="triton").language == "triton"
    cutile = with_language(TASK, "cutile")
    assert DesignerPrompt.from_task(cutile, language="cutile-dsl").language == "cutile-dsl"
    with pytest.raises(InputError, match="fortran"):
        DesignerPrompt.from_task(bare, language="fortran")
    with pytest.raises(InputError, match="Expected an OptimizationTask, got str"):
        DesignerPrompt.from_task(TASK.render())  # type: ignore[arg-type]


def test_the_templates_inline_list_reads() -> None:
    text = (
        "Create mla_decode v4 from v3.\nLanguage: cute-dsl.\n"
        "Load /design-cute-dsl-kernel and the matching reference skill if one exists.\n"
        "Apply optimizations: exp2 with the scale folded in -- rationale: one multiply less; "
        "persistent buffers.\n"
        "Return implementation summary per the output contract.\n"
    )
    prompt = parse_designer_prompt(text)
    assert [(c.what, c.rationale) for c in prompt.optimizations] == [
        ("exp2 with the scale folded in", "one multiply less"),
        ("persistent buffers", ""),
    ]


@pytest.mark.parametrize(
    ("inline", "whats"),
    [
        # The template's placeholder "[specific list with rationale]" filled in place.
        (
            "[exp2 with the scale folded in; persistent buffers]",
            ["exp2 with the scale folded in", "persistent buffers"],
        ),
        ("[persistent buffers]", ["persistent buffers"]),
        # Brackets that do not enclose the whole list stay.
        ("[a] b; c [d]", ["[a] b", "c [d]"]),
    ],
)
def test_the_templates_bracketed_inline_list_reads(inline: str, whats: list[str]) -> None:
    text = DESIGNER_TEXT.split("Apply optimizations:")[0] + (
        f"Apply optimizations: {inline}.\nReturn implementation summary per the output contract.\n"
    )
    assert [c.what for c in parse_designer_prompt(text).optimizations] == whats


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow])
@given(profiler_prompts)
def test_profiler_round_trip_property(prompt: ProfilerPrompt) -> None:
    assert parse_profiler_prompt(prompt.render()) == prompt


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow])
@given(designer_prompts)
def test_designer_round_trip_property(prompt: DesignerPrompt) -> None:
    assert parse_designer_prompt(prompt.render()) == prompt


@pytest.mark.parametrize(
    ("text", "line", "match"),
    [
        ("hello\n", None, "Profile <kernel> <version> at b=X"),
        (PROFILER_TEXT.replace("t=4096", "t=big"), 1, "a trial point"),
        (PROFILER_TEXT.replace("at b=32, s=1, ", "at t=1, "), 1, "t twice"),
        (PROFILER_TEXT.replace("Return compact", "Send compact"), 1, "Return compact summary"),
        (PROFILER_TEXT.replace("Update the devlog", "Update a devlog"), 2, "Update the devlog"),
        (PROFILER_TEXT.replace("mla_decode v3 at", "v3 at"), 1, "Profile <kernel> <version>"),
    ],
)
def test_profiler_prompt_errors_name_the_line(text: str, line: int | None, match: str) -> None:
    with pytest.raises(FormatError, match=match) as caught:
        parse_profiler_prompt(text, path="prompt.txt")
    assert caught.value.path == "prompt.txt" and caught.value.line == line
    assert caught.value.section == "Profiler prompt"


@pytest.mark.parametrize(
    ("old", "new", "line", "match"),
    [
        ("Language: triton.", "Language: fortran.", 2, "fortran"),
        ("/design-triton-kernel", "/design-cuda-kernel", 3, "skill of the language"),
        ("Load /design", "Read /design", 2, "Load /design-<language>-kernel"),
        # Neither the link's text nor its path (no knowledge file) names an id.
        (
            "1. [split-kv-flash-decoding](docs/knowledge/",
            "1. [Split Kv](docs/",
            5,
            "an optimization item",
        ),
        ("Return implementation", "Send implementation", 4, "Return implementation summary"),
        ("Create mla_decode v3 from v2.", "Create v3 from v2.", 1, "Create <kernel>"),
    ],
)
def test_designer_prompt_errors_name_the_line(old: str, new: str, line: int, match: str) -> None:
    with pytest.raises(FormatError, match=match) as caught:
        parse_designer_prompt(DESIGNER_TEXT.replace(old, new), path="prompt.txt")
    assert caught.value.line == line and caught.value.section == "Designer prompt"


def test_designer_prompt_needs_an_optimization() -> None:
    text = "\n".join(line for line in DESIGNER_TEXT.splitlines() if not line[0].isdigit())
    with pytest.raises(FormatError, match="numbered optimizations") as caught:
        parse_designer_prompt(text)
    assert caught.value.line == 4
    with pytest.raises(InputError, match="at least one optimization"):
        DesignerPrompt(kernel="k", current="a", new_version="b", language="cuda", optimizations=[])


def test_records_refuse_what_they_could_not_write_back() -> None:
    with pytest.raises(
        InputError, match=r"ProfilerPrompt\.version: Expected a name without spaces"
    ):
        ProfilerPrompt(kernel="k", version="v 2", point={"b": 1, "s": 1, "t": 1})
    with pytest.raises(InputError, match=r"ProfilerPrompt\.kernel"):
        ProfilerPrompt(kernel="a\nb", version="v2", point={"b": 1, "s": 1, "t": 1})
    with pytest.raises(InputError, match="at least one axis"):
        ProfilerPrompt(kernel="k", version="v2", point={})
    with pytest.raises(InputError, match="axis names"):
        ProfilerPrompt(kernel="k", version="v2", point=TrialPoint(b=1, s=1, t=1, extra={"h q": 1}))
    with pytest.raises(InputError, match="Expected a TrialPoint, a mapping"):
        ProfilerPrompt(kernel="k", version="v2", point=5)  # type: ignore[arg-type]
    with pytest.raises(InputError, match="Expected Change items"):
        DesignerPrompt(
            kernel="k",
            current="a",
            new_version="b",
            language="cuda",
            optimizations=["fuse"],  # type: ignore[list-item]
        )
    with pytest.raises(InputError, match="Expected markdown text"):
        parse_designer_prompt(None)  # type: ignore[arg-type]


def test_an_unreadable_prompt_point_says_expected_once() -> None:
    # The point's own message was nested: "Expected a trial point, got Expected a ...".
    with pytest.raises(FormatError) as caught:
        parse_profiler_prompt(PROFILER_TEXT.replace("t=4096", "t=4096, b=2"), path="prompt.txt")
    assert str(caught.value).count("Expected") == 1
    assert "(b twice)" in str(caught.value) and caught.value.line == 1

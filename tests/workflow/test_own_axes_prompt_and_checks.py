"""The profiler prompt and the new version's trial checks take a kernel's own axes, as the
profile hand-off does: a GEMV's ``b=1, k=4096, n=11008`` was refused for having no s, t."""

from __future__ import annotations

import pytest

from kernelopt._errors import InputError
from kernelopt.bench import TrialPoint
from kernelopt.workflow import (
    Change,
    NewVersion,
    ProfilerPrompt,
    TrialCheck,
    from_dict,
    parse_profiler_prompt,
    parse_version,
    to_dict,
)


def test_profiler_prompt_names_a_point_of_the_kernels_own_axes() -> None:
    prompt = ProfilerPrompt(kernel="int4_gemv", version="v2", point={"b": 1, "k": 4096, "n": 11008})
    assert prompt.point == "b=1 k=4096 n=11008"
    text = prompt.render()
    assert text.splitlines()[0] == "Profile int4_gemv v2 at b=1, k=4096, n=11008."
    assert parse_profiler_prompt(text) == prompt
    assert from_dict(to_dict(prompt), ProfilerPrompt) == prompt


def test_profiler_prompt_reads_own_axes_in_any_order() -> None:
    text = (
        "Profile top_p v1 at vocab=128256, batch=8.\n"
        "Return compact summary per the output contract.\n"
        "Update the devlog performance section in docs/kernels/top_p.md.\n"
    )
    assert parse_profiler_prompt(text).point == "batch=8 vocab=128256"


def test_a_b_s_t_prompt_is_as_before() -> None:
    prompt = ProfilerPrompt(
        kernel="mla_decode", version="v2", point=TrialPoint(b=32, s=1, t=4096, name="decode")
    )
    assert prompt.point == TrialPoint(b=32, s=1, t=4096)
    assert prompt.render().startswith("Profile mla_decode v2 at b=32, s=1, t=4096.\n")
    assert isinstance(parse_profiler_prompt(prompt.render()).point, TrialPoint)


def test_trial_check_of_own_axes_keeps_its_name() -> None:
    check = TrialCheck(point={"tokens": 64, "hidden": 7168}, why="one decode step", name="small")
    assert check.point == "hidden=7168 tokens=64"
    assert check.render() == "small [hidden=7168, tokens=64] -- one decode step"
    bare = TrialCheck(point="hidden=7168, tokens=4096", why="prefill")
    version = NewVersion(
        kernel="fp8_quant", version="v3", changes=[Change(what="fuse")], trials=[check, bare]
    )
    text = version.render()
    assert "1. small [hidden=7168, tokens=64] -- one decode step" in text
    assert "2. [hidden=7168, tokens=4096] -- prefill" in text
    assert parse_version(text) == version
    assert from_dict(to_dict(version), NewVersion) == version


def test_trial_check_of_b_s_t_is_as_before() -> None:
    named = TrialCheck(point=TrialPoint(b=32, s=1, t=4096, name="decode"), why="memory-bound")
    assert named.name == "decode" and named.point == TrialPoint(b=32, s=1, t=4096, name="decode")
    assert named.render() == "decode [b=32, s=1, t=4096] -- memory-bound"
    # Named either way, the check is one record.
    assert (
        TrialCheck(point={"b": 32, "s": 1, "t": 4096}, why="memory-bound", name="decode") == named
    )
    with pytest.raises(InputError, match=r"TrialCheck\.name: Expected the point's own name"):
        TrialCheck(point=TrialPoint(b=32, s=1, t=4096, name="decode"), why="x", name="other")
    with pytest.raises(InputError, match=r"TrialCheck\.name: Expected a point name"):
        TrialCheck(point="tokens=64", why="x", name="[small]")

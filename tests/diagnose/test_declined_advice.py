"""Item 7 and declined options: advice a note lists as declined or out of scope is answered.

A note that lists an option under a heading or lead line declining it ("Rejected ideas",
"Remaining opportunities (Not in kernel.cl scope)") records that the author weighed it:
the log's reader keeps those options (``ExperimentLog.declined``), and a recommendation
naming the same idea, made before or beside that note, is not ignored research.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from kernelopt._errors import InputError
from kernelopt.diagnose import Diagnosis, Pathology, diagnose
from kernelopt.diagnose.detectors.ignored_prior_research import declined_by
from kernelopt.experiments import read_log
from kernelopt.experiments.log import DeclinedOption, ExperimentLog, Recommendation, SourceRef
from kernelopt.experiments.readers._files import TextFile
from kernelopt.experiments.readers._markdown import code_mask, headings
from kernelopt.experiments.readers.documents import declined_options, recommendations_in
from tests.conftest import write_files

from .conftest import UNRELATED_TITLES

P = Pathology

_HEADER = (
    "| Exp | Description | Latency | Unit | Correct | Status | Tags |\n"
    "|---|---|---|---|---|---|---|\n"
)
_DOUBLE_BUFFERING = "Host-side: double-buffering to hide upload latency"
_DMA_BUF = "DMA-BUF import to skip the host copies"
_SCOPED_OUT = (
    "## Remaining Host-Level Opportunities (Not in kernel.cl scope)\n"
    "- DMA-BUF zero-copy: frame already in device memory\n"
    "- Double-buffering: overlap upload with compute for streaming workloads\n"
)


def _profile(advice: Sequence[str]) -> str:
    """A profile after exp 2 whose Recommendation section lists ``advice``."""
    return (
        "## Profile: resize exp 2 | 1920x1080\n\n"
        "## Recommendation\n"
        "Kernel-level optimizations exhausted. Focus shifts to:\n"
        + "".join(f"{rank}. {item}\n" for rank, item in enumerate(advice, start=1))
    )


def _log(root: Path, advice: Sequence[str], files: dict[str, str]) -> Path:
    """A seed log: a baseline, a first kernel (exp 2), three unrelated attempts after the
    profile that advises ``advice``; ``files`` adds notes under ``experiments/``."""
    titles = ["first kernel", *UNRELATED_TITLES[:3]]
    rows = ["| 1 | eager baseline | 100 | us | PASS | BASELINE |  |\n"]
    rows += [
        f"| {n} | {title} | {100 - n} | us | PASS | KEPT |  |\n"
        for n, title in enumerate(titles, start=2)
    ]
    written = {
        "experiments/summary.md": _HEADER + "".join(rows),
        "experiments/profile.md": _profile(advice),
        **{f"experiments/{name}": text for name, text in files.items()},
    }
    return write_files(root, written)


def _check(diagnosis: Diagnosis) -> str:
    return next(c.sentence for c in diagnosis.checks if c.pathology is P.IGNORED_PRIOR_RESEARCH)


def _file(text: str, path: str = "experiments/notes.md") -> TextFile:
    return TextFile(path=path, text=text, lines=tuple(text.split("\n")))


# --- which headings decline ------------------------------------------------------------


@pytest.mark.parametrize(
    "heading",
    [
        "Remaining Host-Level Opportunities (Not in kernel.cl scope)",
        "Out of scope",
        "Out-of-scope ideas",
        "Outside the scope of this effort",
        "Beyond scope",
        "Not part of this scope",
        "Rejected ideas",
        "Remaining optimization space (not pursued this iteration)",
    ],
)
def test_a_heading_that_declines_or_scopes_out_lists_declined_options(heading: str) -> None:
    options = declined_options(_file(f"# Wrap-up\n\n## {heading}\n- Persistent kernel launch\n"))
    assert options == [
        DeclinedOption(
            text="Persistent kernel launch",
            source=SourceRef(path="experiments/notes.md", line=4),
            heading=heading,
        )
    ]


@pytest.mark.parametrize(
    "heading",
    ["Scope", "In scope", "In kernel.cl scope", "Scope of work", "Next steps (in scope)"],
)
def test_a_plain_scope_heading_declines_nothing(heading: str) -> None:
    assert declined_options(_file(f"## {heading}\n- Persistent kernel launch\n")) == []


def test_a_scoped_out_list_is_no_advice_and_a_scoped_list_still_is() -> None:
    text = (
        "## Remaining opportunities (Not in kernel.cl scope)\n- Double-buffer the host upload\n"
        "## Remaining opportunities (in scope)\n- Split the transpose into two passes\n"
    )
    file = _file(text)
    mask = code_mask(file.lines)
    found = recommendations_in(file, 1, len(file.lines), headings(file.lines, mask), mask, offset=0)
    assert [item.text for item in found] == ["Split the transpose into two passes"]


def test_a_lead_line_declines_its_list_but_not_the_nested_reasons() -> None:
    text = (
        "Some prose first.\n\n"
        "Rejected ideas:\n\n"
        "- Split-K: too few tiles\n"
        "  - the grid already fills the device\n"
        "- Persistent kernel\n"
    )
    options = declined_options(_file(text))
    assert [(o.text, o.source.line, o.heading) for o in options] == [
        ("Split-K: too few tiles", 5, "Rejected ideas"),
        ("Persistent kernel", 7, "Rejected ideas"),
    ]


def test_an_experiment_verdict_or_a_wrapped_sentence_opens_no_declined_list() -> None:
    text = (
        "## Exp 5: rejected\n"
        "- slower by 3%\n\n"
        "## Decision: dropped\n"
        "- fails correctness at 4096\n\n"
        "Every item in reach has now been tried, shipped,\n"
        "or ruled out with real evidence:\n"
        "- Shipped and verified: G0.1, G0.2\n"
    )
    assert declined_options(_file(text)) == []


# --- what the log records ---------------------------------------------------------------


def test_the_log_records_the_declined_options_with_file_and_line(tmp_path: Path) -> None:
    root = _log(tmp_path, [_DOUBLE_BUFFERING], {"CONVERGENCE.md": _SCOPED_OUT})
    log = read_log(root)
    heading = "Remaining Host-Level Opportunities (Not in kernel.cl scope)"
    assert [(str(o.source), o.experiment, o.heading) for o in log.declined] == [
        ("experiments/CONVERGENCE.md:2", None, heading),
        ("experiments/CONVERGENCE.md:3", None, heading),
    ]
    assert log.declined[1].text.startswith("Double-buffering: overlap upload")


def test_an_experiment_folder_places_its_declined_options(tmp_path: Path) -> None:
    root = write_files(
        tmp_path,
        {
            "experiments/exp_1/result.md": "# Experiment 1: baseline\n\n- Status: BASELINE\n"
            "- Latency: 100 us\n",
            "experiments/exp_2/result.md": "# Experiment 2: tiles\n\n- Status: KEPT\n"
            "- Latency: 90 us\n\n## Rejected ideas\n- Persistent kernel launch\n",
        },
    )
    assert [(o.text, o.experiment) for o in read_log(root).declined] == [
        ("Persistent kernel launch", 2)
    ]
    assert read_log(root, until=2).declined == ()


def test_a_loose_note_under_until_cannot_be_placed(tmp_path: Path) -> None:
    root = _log(tmp_path, [_DOUBLE_BUFFERING], {"CONVERGENCE.md": _SCOPED_OUT})
    assert read_log(root).declined
    assert read_log(root, until=4).declined == ()


def test_the_declined_options_default_to_none_and_refuse_other_items() -> None:
    assert ExperimentLog(root=".").declined == ()
    with pytest.raises(InputError) as caught:
        ExperimentLog(root=".", declined=["Persistent kernel"])  # type: ignore[list-item]
    assert str(caught.value).startswith("declined: Expected a sequence of DeclinedOption")


def test_a_devlog_entry_places_the_options_it_declines(corpus: Path) -> None:
    # The "not pursued this iteration" list stands in the entry of exp 20 (its line 188).
    log = read_log(corpus / "gdn-prefill-devlog")
    assert {o.experiment for o in log.declined} == {20}
    assert [o.source.line for o in log.declined] == [221, 222, 223, 224]


# --- matching a recommendation to a declined option -------------------------------------


def _advice(text: str, experiment: int | None = 2) -> Recommendation:
    return Recommendation(
        text=text, source=SourceRef(path="experiments/profile.md", line=5), experiment=experiment
    )


def _option(text: str, experiment: int | None = None) -> DeclinedOption:
    return DeclinedOption(
        text=text,
        source=SourceRef(path="experiments/CONVERGENCE.md", line=2),
        heading="Out of scope",
        experiment=experiment,
    )


@pytest.mark.parametrize(
    ("advice", "option"),
    [
        (_DOUBLE_BUFFERING, "Double-buffering: overlap upload with compute"),
        (_DMA_BUF, "DMA-BUF zero-copy: frame already in device memory"),
        ("Remove clFinish between the kernels", "clFinish removal: event-chain instead"),
        ("Try a dmabuf import of the frame", "DMA-BUF zero-copy: frame already on device"),
    ],
)
def test_a_shared_technique_name_matches(advice: str, option: str) -> None:
    assert declined_by(_advice(advice), [_option(option)]) is not None


@pytest.mark.parametrize(
    ("advice", "option"),
    [
        # The same reason ("upload latency"), another idea.
        (
            "Host-side: pinned staging buffers to hide upload latency",
            "Double-buffering: overlap upload with compute for streaming workloads",
        ),
        # The name of the setting both speak of, not of the idea.
        (
            "Hand-written CUDA chunked kernel replacing CuTe-DSL for medium sequences",
            "Fuse gate kernel into CuTe-DSL gb_warp: save ~5us/call",
        ),
        # A caveat in parentheses names no idea.
        (
            "CUDA graphs via torch.cuda.CUDAGraph (unclear if compatible with TVM FFI)",
            "Bypass TVM FFI: save ~10-15us/call",
        ),
        # A qualifier compound is no technique.
        ("Host-side: persistent worker thread", "Host-side: pinned staging buffers"),
    ],
)
def test_a_near_miss_does_not_match(advice: str, option: str) -> None:
    assert declined_by(_advice(advice), [_option(option)]) is None


def test_an_option_declined_before_the_advice_does_not_answer_it() -> None:
    option = "Double-buffering: overlap upload with compute"
    assert declined_by(_advice(_DOUBLE_BUFFERING, 5), [_option(option, 4)]) is None
    assert declined_by(_advice(_DOUBLE_BUFFERING, 5), [_option(option, 5)]) is not None
    assert declined_by(_advice(_DOUBLE_BUFFERING, None), [_option(option, 1)]) is not None


# --- the check --------------------------------------------------------------------------


def test_advice_a_later_note_scopes_out_is_not_ignored(tmp_path: Path) -> None:
    root = _log(tmp_path, [_DOUBLE_BUFFERING, _DMA_BUF], {"CONVERGENCE.md": _SCOPED_OUT})
    diagnosis = diagnose(root)
    assert diagnosis.finding(P.IGNORED_PRIOR_RESEARCH) is None
    assert _check(diagnosis) == (
        "Each of the 2 recommendations followed by 3+ attempts was declined in a note of the log, "
        "not ignored (experiments/CONVERGENCE.md:2 and experiments/CONVERGENCE.md:3, under "
        "\u201cRemaining Host-Level Opportunities (Not in kernel.cl scope)\u201d)."
    )


def test_advice_the_note_does_not_list_is_still_ignored(tmp_path: Path) -> None:
    advice = "Host-side: pinned staging buffers to hide upload latency"
    root = _log(tmp_path, [_DOUBLE_BUFFERING, advice], {"CONVERGENCE.md": _SCOPED_OUT})
    diagnosis = diagnose(root)
    finding = diagnosis.finding(P.IGNORED_PRIOR_RESEARCH)
    assert finding is not None
    assert [e.quote for e in finding.evidence] == [advice]


def test_the_opencl_adreno_host_advice_was_scoped_out(corpus: Path) -> None:
    diagnosis = diagnose(corpus / "opencl-adreno")
    assert diagnosis.finding(P.IGNORED_PRIOR_RESEARCH) is None
    sentence = _check(diagnosis)
    assert "experiments/CONVERGENCE.md:28 and experiments/CONVERGENCE.md:29" in sentence
    assert "(Not in kernel.cl scope)" in sentence


def test_a_top3_item_a_later_note_declines_is_taken_up(tmp_path: Path) -> None:
    profile = (
        "## Profile: resize exp 2 | 1920x1080\n"
        "### Bottleneck: Compute-bound\n"
        "Root cause: FLOPs set the floor.\n"
        "### Top 3 Opportunities (ranked by estimated impact)\n"
        "1. Warp Specialization (Producer/Consumer Warpgroups) (`warp-specialization`) -- "
        "est. 57% gain\n"
    )
    root = _log(
        tmp_path,
        [],
        {"wrap-up.md": "## Rejected ideas\n- Warp specialization: too few warps to split\n"},
    )
    (root / "experiments" / "profile.md").write_text(profile, encoding="utf-8")
    diagnosis = diagnose(root)
    assert diagnosis.finding(P.IGNORED_PRIOR_RESEARCH) is None
    assert _check(diagnosis).endswith(
        "was acted on: a note declines `warp-specialization` (experiments/wrap-up.md:2, "
        "under \u201cRejected ideas\u201d)."
    )

"""A ``Top N opportunities`` section opened by a lead line, plain or bold and alone on its
line (``Top 3 opportunities:``, ``**Top 3 opportunities**``), right over a list or a table,
is read as the same section under a heading is, in profile.md and in a result or a note;
prose that mentions a top 3, and a lead line in a code block, open no such section."""

from __future__ import annotations

from pathlib import Path

import pytest

from kernelopt.diagnose import Pathology, diagnose
from kernelopt.experiments import ExperimentLog, read_log

from ..conftest import UNRELATED_TITLES as _UNRELATED
from ..conftest import summary_table as _summary
from ..conftest import write_files

_HEADING = "### Top 3 Opportunities"

# The lead lines as writers put them over their ranked list or table.
_LEADS = [
    "Top 3 opportunities:",
    "Top 3 opportunities",
    "**Top 3 opportunities**",
    "**Top 3 opportunities:**",
    "**Top 3 opportunities**:",
    "*Top 3 opportunities*",
    "__Top 3 Opportunities (ranked by estimated impact)__",
    "Top three opportunities:",
]

_TABLE = (
    "| # | opportunity | est. gain |\n"
    "|---|---|---|\n"
    "| 1 | Split the KV sequence (`split-kv-flash-decoding`) | 30% |\n"
    "| 2 | Fuse the softmax into the KV loop (`kernel-fusion`) | 20% |\n"
    "| 3 | Producer and consumer warpgroups (`warp-specialization`) | 10% |\n"
)
_LIST = (
    "1. Split the KV sequence (`split-kv-flash-decoding`) -- est. 30% gain\n"
    "2. Fuse the softmax into the KV loop (`kernel-fusion`) -- est. 20% gain\n"
    "3. Producer and consumer warpgroups (`warp-specialization`) -- est. 10% gain\n"
)
_EXPECTED = [
    ("Split the KV sequence", ("split-kv-flash-decoding",)),
    ("Fuse the softmax into the KV loop", ("kernel-fusion",)),
    ("Producer and consumer warpgroups", ("warp-specialization",)),
]


def _log(root: Path, files: dict[str, str]) -> ExperimentLog:
    # No catalog: an entry id is one the file wrote, never one guessed from its words.
    return read_log(write_files(root, files), catalog=())


def _profile(top: str, body: str, *, gap: str = "\n") -> str:
    """A profile.md whose Top section opens with ``top`` (a heading or a lead line) at
    line 5, over ``body`` after ``gap``."""
    return (
        "## Profile: mla_decode exp 1 | b=32\n"
        "### Bottleneck: Memory-bound\n"
        "Root cause: the KV cache is read once per head.\n"
        "\n"
        f"{top}\n{gap}{body}"
    )


def _opportunities(root: Path, profile: str) -> list[tuple[str, tuple[str, ...], int]]:
    log = _log(root, {"experiments/profile.md": profile})
    assert log.profile is not None
    return [(r.text, r.catalog_ids, r.source.line) for r in log.profile.opportunities]


# --- profile.md ------------------------------------------------------------------------------


@pytest.mark.parametrize("body", [_TABLE, _LIST], ids=["table", "list"])
@pytest.mark.parametrize("lead", _LEADS)
def test_a_lead_line_over_a_list_or_table_reads_as_the_heading_does(
    tmp_path: Path, lead: str, body: str
) -> None:
    under_heading = _opportunities(tmp_path / "heading", _profile(_HEADING, body))
    assert [(text, ids) for text, ids, _ in under_heading] == _EXPECTED
    # The lead line stands where the heading stood: the same items at the same lines.
    assert _opportunities(tmp_path / "lead", _profile(lead, body)) == under_heading


@pytest.mark.parametrize("gap", ["", "\n", "\n\n\n"], ids=["none", "one", "three"])
def test_blank_lines_between_the_lead_line_and_its_list_are_allowed(
    tmp_path: Path, gap: str
) -> None:
    found = _opportunities(tmp_path, _profile("**Top 3 opportunities**", _LIST, gap=gap))
    assert [(text, ids) for text, ids, _ in found] == _EXPECTED
    assert found[0][2] == 5 + len(gap) + 1


def test_a_lead_line_naming_n_reads_the_first_n_items(tmp_path: Path) -> None:
    found = _opportunities(tmp_path, _profile("Top 2 opportunities (by estimated gain):", _LIST))
    assert [(text, ids) for text, ids, _ in found] == _EXPECTED[:2]


def test_the_section_of_a_lead_line_ends_with_its_list(tmp_path: Path) -> None:
    profile = _profile(
        "Top 3 opportunities:",
        "1. Split the KV sequence (`split-kv-flash-decoding`) -- est. 30% gain\n"
        "   wrapped onto a second line\n"
        "\n"
        "2. Fuse the softmax into the KV loop (`kernel-fusion`) -- est. 20% gain\n"
        "\n"
        "Other things seen while profiling:\n"
        "\n"
        "- Register spills (`register-pressure`) in the epilogue\n",
    )
    # The list after the prose is no part of the Top section, as it would be under a
    # heading that runs to the next heading.
    assert [(text, ids) for text, ids, _ in _opportunities(tmp_path, profile)] == _EXPECTED[:2]


def test_the_section_of_a_lead_line_ends_with_its_table(tmp_path: Path) -> None:
    profile = _profile(
        "**Top 3 opportunities**",
        _TABLE.replace(
            "| 3 | Producer and consumer warpgroups (`warp-specialization`) | 10% |\n", ""
        )
        + "\nThe profiler also flagged:\n\n"
        "- Register spills (`register-pressure`) in the epilogue\n",
    )
    assert [(text, ids) for text, ids, _ in _opportunities(tmp_path, profile)] == _EXPECTED[:2]


def test_the_section_of_a_lead_line_ends_at_the_next_heading(tmp_path: Path) -> None:
    profile = _profile(
        "Top 3 opportunities:",
        "1. Split the KV sequence (`split-kv-flash-decoding`) -- est. 30% gain\n"
        "### Stages\n"
        "- Register spills (`register-pressure`) in the epilogue\n",
        gap="",
    )
    assert [(text, ids) for text, ids, _ in _opportunities(tmp_path, profile)] == _EXPECTED[:1]


def test_the_first_top_section_is_read_whether_a_heading_or_a_lead_line(tmp_path: Path) -> None:
    profile = _profile("Top 3 opportunities:", _LIST[: _LIST.index("2.")]) + (
        "\n### Top 3 Opportunities\n"
        "1. Producer and consumer warpgroups (`warp-specialization`) -- est. 10% gain\n"
    )
    assert [(text, ids) for text, ids, _ in _opportunities(tmp_path, profile)] == _EXPECTED[:1]


_RANKED_TABLE = (
    "| Rank | Kernel | Share |\n"
    "|---|---|---|\n"
    "| 1 | flash_fwd_splitkv | 61% |\n"
    "| 2 | rotary_embedding | 19% |\n"
)


@pytest.mark.parametrize(
    "prose",
    [
        # A sentence that mentions a top 3, with an unrelated table after it.
        "the top 3 kernels take 80 % of the time.\n\nThe kernels, by time:\n\n" + _RANKED_TABLE,
        # Sentences over a list or a table: they say something, they open nothing.
        "Top 3 opportunities were found by ncu.\n\n" + _RANKED_TABLE,
        "Top 3 opportunities are split-KV, fusion and warpgroups!\n\n" + _LIST,
        # A field whose value is written beside it, not under it.
        "Top 3 opportunities: split-KV, fusion and warpgroups\n\n" + _LIST,
        # A lead line with prose, not a list or a table, under it.
        "Top 3 opportunities:\n\nSee the notes of exp 4.\n\n" + _LIST,
        # The number alone names no opportunities, as "### Top 3" does not.
        "**Top 3**\n\n" + _LIST,
        # A list item or a line indented under one is no lead line.
        "- Top 3 opportunities:\n" + _LIST,
        "- Profiled the decode kernel\n  Top 3 opportunities:\n\n" + _LIST,
    ],
)
def test_prose_mentioning_a_top_3_opens_no_section(tmp_path: Path, prose: str) -> None:
    assert _opportunities(tmp_path, _profile("Notes from the profiler:", prose)) == []


def test_a_lead_line_in_a_code_block_opens_no_section(tmp_path: Path) -> None:
    fenced = "```\nTop 3 opportunities:\n\n" + _LIST + "```\n\n" + _LIST
    assert _opportunities(tmp_path, _profile("The template:", fenced)) == []
    # Nor does one whose list is in a code block.
    fenced_list = "**Top 3 opportunities**\n\n```\n" + _LIST + "```\n"
    assert _opportunities(tmp_path, _profile("The template:", fenced_list)) == []


def test_diagnose_judges_a_lead_line_top_3_as_the_heading_one(tmp_path: Path) -> None:
    def finding_of(root: Path, top: str) -> tuple[str, list[str | None], list[str]]:
        profile = "## Profile: mla_decode exp 1 | b=32\n" + f"{top}\n\n" + _TABLE
        write_files(
            root,
            {
                "experiments/summary.md": _summary([*_UNRELATED, "fewer asserts"]),
                "experiments/profile.md": profile,
            },
        )
        finding = diagnose(root).finding(Pathology.IGNORED_PRIOR_RESEARCH)
        assert finding is not None
        return (
            finding.summary,
            [action.catalog_id for action in finding.actions],
            [evidence.source for evidence in finding.evidence],
        )

    under_heading = finding_of(tmp_path / "heading", _HEADING)
    assert "The Top 3 Opportunities list of experiments/profile.md:6-8" in under_heading[0]
    assert finding_of(tmp_path / "lead", "Top 3 opportunities:") == under_heading


# --- a result or a note ----------------------------------------------------------------------

# Lines: 1 title, 3 latency, 5 Analysis heading, 6 prose, 8 the Top section's lead or
# heading, 10-11 table header, 12-14 rows, 16 Next steps heading, 17 its item.
_RESULT = (
    "# Exp 2: retile the KV loop\n"
    "\n"
    "- Latency: 98 us\n"
    "\n"
    "## Analysis\n"
    "The KV loop is memory-bound at this size.\n"
    "\n"
    "{top}\n"
    "\n"
    "| Rank | Opportunity | Entry | Est. gain |\n"
    "|---|---|---|---|\n"
    "| 1 | Split the KV sequence across CTAs | `split-kv-flash-decoding` | 30% |\n"
    "| 2 | Fuse the softmax | kernel-fusion | 20% |\n"
    "| 3 | None. | — | — |\n"
    "\n"
    "## Next steps\n"
    "- Try a persistent kernel with warp specialization\n"
)


def _recommendations(root: Path, result: str) -> list[tuple[str, tuple[str, ...], int]]:
    log = read_log(
        write_files(
            root,
            {
                "experiments/summary.md": _summary(["retile the KV loop", "narrower masks"]),
                "experiments/exp_2/result.md": result,
            },
        ),
        catalog=(),
    )
    return [(r.text, r.catalog_ids, r.source.line) for r in log.recommendations]


@pytest.mark.parametrize("lead", ["Top 3 opportunities:", "**Top 3 opportunities**"])
def test_a_lead_line_table_in_a_result_reads_as_the_heading_one(tmp_path: Path, lead: str) -> None:
    under_heading = _recommendations(
        tmp_path / "heading", _RESULT.format(top="### Top 3 opportunities")
    )
    assert under_heading[:2] == [
        ("Split the KV sequence across CTAs", ("split-kv-flash-decoding",), 12),
        ("Fuse the softmax", ("kernel-fusion",), 13),
    ]
    assert _recommendations(tmp_path / "lead", _RESULT.format(top=lead)) == under_heading


def test_a_lead_line_list_in_a_note_gives_names_and_entry_ids(tmp_path: Path) -> None:
    note = (
        "# Retile the KV loop\n\n"
        "## Change\nTiles of 64 keys.\n\n## Result\nLatency: 80 us\n\n"
        "**Top 2 opportunities:**\n\n" + _LIST
    )
    log = _log(tmp_path, {"notes/retile.md": note})
    # The names and ids as the heading form reads them, not each item's whole text; the
    # lead line names two, so two are read.
    assert [(r.text, r.catalog_ids, r.source.line) for r in log.recommendations] == [
        ("Split the KV sequence", ("split-kv-flash-decoding",), 11),
        ("Fuse the softmax into the KV loop", ("kernel-fusion",), 12),
    ]


def test_a_lead_line_table_under_next_steps_is_read_once_and_is_no_advice_itself(
    tmp_path: Path,
) -> None:
    result = (
        "# Exp 2: retile the KV loop\n\n- Latency: 98 us\n\n"
        "## Next steps\n"
        "**Top 3 opportunities**\n\n" + _LIST
    )
    # Read as the Top section, not again as the section's items nor its lead as advice.
    assert [(text, ids) for text, ids, _ in _recommendations(tmp_path, result)] == _EXPECTED

"""What a profile hand-off's reader leaves out: a ProfileWarning users filter by name, and
one plain line on stderr from the commands, not Python's two-line warning format.

The library raises :class:`kernelopt.workflow.ProfileWarning`; ``kernelopt learn`` and
``kernelopt report`` print every warning raised while they run as
``kernelopt COMMAND: warning: ...``, leaving stdout and the exit code as they are.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import kernelopt.workflow as workflow
import kernelopt.workflow.observe as observe_module
import kernelopt.workflow.profile as profile_module
import kernelopt.workflow.task as task_module
import kernelopt.workflow.version as version_module
from kernelopt import FormatError
from kernelopt.bench import Bottleneck, Opportunity, ProfileReport
from kernelopt.cli import main
from kernelopt.workflow import parse_profile, to_dict
from kernelopt.workflow.profile import ProfileWarning

from .conftest import memory_bound_report

REPORT = memory_bound_report()
TEXT = REPORT.render()
HEAD = TEXT.partition("(none:")[0]  # everything up to the Top 3's items
FIRST_ITEM_LINE = HEAD.count("\n") + 1
VERDICT_LINE = TEXT.splitlines().index("### Bottleneck: Memory-bound") + 1
PROSE = HEAD + "Split-KV would help most.\n"
PROSE_REASON = (
    "Expected the Top 3 as a numbered list ('name (`entry-id`) -- est. 30% gain -- trigger: "
    "dram_pct=40') or a table with a Rank or Name column, got 'Split-KV would help most.'"
)
PROSE_NOTE = (
    f"[Top 3 Opportunities]: {PROSE_REASON}; the Top 3 could not be read: read as no opportunities"
)
# What the prose Top 3 reads as: no opportunities, and why, printed in the Top 3's place.
PROSE_READ = memory_bound_report(top3_unread=PROSE_REASON)
SPLIT_KV = Opportunity(
    name="Split-KV flash decoding", entry_id="split-kv", gain_pct=41.0, trigger="dram_pct=48.3"
)
SPLIT_KV_ITEM = (
    "1. Split-KV flash decoding (`split-kv`) -- est. 41% gain -- trigger: dram_pct=48.3\n"
)


def _said(text: str) -> tuple[ProfileReport, list[str]]:
    """The report of ``text`` (read as ``profile.md``) and the ProfileWarnings it gave."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        report = parse_profile(text, path="profile.md")
    return report, [str(w.message) for w in caught if w.category is ProfileWarning]


def _write(folder: Path, text: str, name: str = "profile.md") -> str:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return str(path)


# --- the name users filter by ----------------------------------------------------------


def test_profile_warning_is_exported_by_the_workflow_package() -> None:
    assert "ProfileWarning" in workflow.__all__
    assert workflow.ProfileWarning is profile_module.ProfileWarning
    assert issubclass(workflow.ProfileWarning, UserWarning)


def test_a_filter_naming_the_exported_class_silences_or_refuses_the_reading() -> None:
    exported = workflow.ProfileWarning
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warnings.filterwarnings("ignore", category=exported)
        assert parse_profile(PROSE).opportunities == ()
    with warnings.catch_warnings():
        warnings.filterwarnings("error", category=exported)
        with pytest.raises(exported, match="the Top 3 could not be read"):
            parse_profile(PROSE)


# --- `kernelopt report profile FILE.md`: one plain line on stderr -------------------------


def test_report_profile_prints_the_warning_as_one_plain_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _write(tmp_path, PROSE)
    assert main(["report", "profile", path]) == 0
    out, err = capsys.readouterr()
    assert out == PROSE_READ.render()  # says the Top 3 could not be read, not that none fired
    assert err == f"kernelopt report: warning: {path}:{FIRST_ITEM_LINE} {PROSE_NOTE}\n"


def test_report_profile_json_keeps_stdout_json_and_the_warning_on_stderr(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _write(tmp_path, PROSE)
    assert main(["report", "profile", path, "--json"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out) == to_dict(PROSE_READ)
    assert err == f"kernelopt report: warning: {path}:{FIRST_ITEM_LINE} {PROSE_NOTE}\n"


def test_report_profile_check_lists_the_warning_as_a_problem(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _write(tmp_path, PROSE)
    assert main(["report", "profile", path, "--check"]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert err == f"{path}: 1 problem\n  - {path}:{FIRST_ITEM_LINE} {PROSE_NOTE}\n"


def test_each_warning_of_several_hand_offs_is_a_line_of_its_own(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _write(tmp_path, PROSE + "\n" + PROSE)
    assert main(["report", "profile", path]) == 0
    _, err = capsys.readouterr()
    second = FIRST_ITEM_LINE + PROSE.count("\n") + 1
    assert err.splitlines() == [
        f"kernelopt report: warning: {path}:{FIRST_ITEM_LINE} {PROSE_NOTE}",
        f"kernelopt report: warning: {path}:{second} {PROSE_NOTE}",
    ]


def test_a_newline_in_the_path_does_not_split_the_warning_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _write(tmp_path, PROSE, name="pro\nfile.md")
    assert main(["report", "profile", path]) == 0
    _, err = capsys.readouterr()
    assert err.count("\n") == 1
    assert err.startswith(f"kernelopt report: warning: {tmp_path}/pro\\nfile.md:")


def test_the_warning_is_no_longer_python_s_format_and_the_library_still_raises_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _write(tmp_path, PROSE)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert main(["report", "profile", path]) == 0
    _, err = capsys.readouterr()
    assert caught == []  # said by the command, not passed on to Python's display
    assert "ProfileWarning:" not in err and ".py:" not in err
    # The command's way of printing ends with it: the library warns as before.
    with pytest.warns(ProfileWarning, match="the Top 3 could not be read"):
        parse_profile(PROSE)


def test_filters_in_force_still_apply_to_the_command(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _write(tmp_path, PROSE)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", category=ProfileWarning)
        assert main(["report", "profile", path]) == 0
    out, err = capsys.readouterr()
    assert (out, err) == (PROSE_READ.render(), "")


def test_a_warning_made_an_error_fails_the_reading_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # `python -W error`: the hand-off is refused as a malformed one is, not with a traceback.
    path = _write(tmp_path, PROSE)
    with warnings.catch_warnings():
        warnings.filterwarnings("error", category=ProfileWarning)
        assert main(["report", "profile", path]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert err == f"{path}:{FIRST_ITEM_LINE} {PROSE_NOTE}\n"


# --- the other workflow commands: any warning raised while they run ---------------------


def _warning_then(result: Callable[..., Any], category: type[Warning]) -> Callable[..., Any]:
    """``result``, after warning as code under the command might (a library's warning)."""

    def call(*args: Any, **kwargs: Any) -> Any:
        warnings.warn("the rows hold a point twice", category, stacklevel=2)
        return result(*args, **kwargs)

    return call


@pytest.mark.parametrize(
    ("module", "name", "argv", "command"),
    [
        (task_module, "parse_task", ["report", "task", "FILE"], "report"),
        (version_module, "parse_version", ["report", "version", "FILE"], "report"),
        (observe_module, "observe_files", ["learn", "--entry", "x"], "learn"),
    ],
)
def test_every_workflow_command_prints_a_warning_as_one_plain_line(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    module: Any,
    name: str,
    argv: list[str],
    command: str,
) -> None:
    def refuse(*_args: Any, **_kwargs: Any) -> Any:
        raise FormatError("Expected a hand-off, got none", path="FILE")

    monkeypatch.setattr(module, name, _warning_then(refuse, UserWarning))
    # One heading of each kind: the command counts them before it reads the one.
    file = _write(tmp_path, "## Optimization Task: a\n## New Version: a\n", name="hand-off.md")
    rows = _write(tmp_path, "", name="rows.jsonl")
    argv = [file if arg == "FILE" else arg for arg in argv]
    if command == "learn":
        argv += ["--before", rows, "--after", rows, "--knowledge", str(tmp_path / "tree")]
    main(argv)
    _, err = capsys.readouterr()
    # The warning's line comes first, whatever the command then says of its error.
    assert err.splitlines()[0] == f"kernelopt {command}: warning: the rows hold a point twice"


def test_report_profile_rows_prints_a_warning_as_one_plain_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import kernelopt.workflow.from_rows as from_rows

    monkeypatch.setattr(
        from_rows, "profile_from_rows", _warning_then(lambda *_a, **_k: [REPORT], UserWarning)
    )
    rows = _write(tmp_path, "", name="rows.jsonl")
    argv = ["report", "profile", "--rows", rows, "--kernel", "mla_decode", "--version", "v2"]
    assert main(argv) == 0
    out, err = capsys.readouterr()
    assert out == TEXT
    assert err == "kernelopt report: warning: the rows hold a point twice\n"


def test_a_warning_other_than_a_user_warning_keeps_its_category_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(
        profile_module, "parse_profiles", _warning_then(lambda *_a, **_k: [REPORT], RuntimeWarning)
    )
    path = _write(tmp_path, TEXT)
    assert main(["report", "profile", path]) == 0
    _, err = capsys.readouterr()
    assert err == "kernelopt report: warning: RuntimeWarning: the rows hold a point twice\n"


# --- what the reader dropped without a word ----------------------------------------------


def test_words_after_the_bottleneck_verdict_are_named_not_dropped() -> None:
    text = TEXT.replace(
        "### Bottleneck: Memory-bound", "### Bottleneck: Memory-bound -- 54% of the floor"
    )
    report, said = _said(text)
    assert report == REPORT
    assert said == [
        f"profile.md:{VERDICT_LINE} [Bottleneck]: Expected the verdict alone ('Memory-bound', "
        "'Compute-bound' or 'Latency-bound'), got 'Memory-bound -- 54% of the floor'; read as "
        "Memory-bound, and not read: '-- 54% of the floor' (write it under 'Root cause:')"
    ]


@pytest.mark.parametrize("verdict", ["Memory-bound", "memory bound", "MEMORY", "Memory-bound."])
def test_the_verdict_alone_reads_without_a_warning(verdict: str) -> None:
    report, said = _said(TEXT.replace("Bottleneck: Memory-bound", f"Bottleneck: {verdict}"))
    assert (report.bottleneck, said) == (Bottleneck.MEMORY, [])


@pytest.mark.parametrize("verdict", ["Memoryless", "Computed", "Latencyish"])
def test_a_word_that_only_starts_like_a_verdict_is_refused(verdict: str) -> None:
    # "Memoryless" read as Memory-bound: a verdict the text does not give.
    text = TEXT.replace("Bottleneck: Memory-bound", f"Bottleneck: {verdict}")
    with pytest.raises(FormatError) as caught:
        parse_profile(text, path="profile.md")
    assert str(caught.value) == (
        f"profile.md:{VERDICT_LINE} [Bottleneck]: Expected 'Memory-bound', 'Compute-bound' "
        f"or 'Latency-bound', got '{verdict}'"
    )


def test_bullets_under_the_top_3_items_are_named_not_dropped() -> None:
    text = HEAD + SPLIT_KV_ITEM + "   - needs a combine kernel\n   - and one launch more\n"
    report, said = _said(text)
    assert report.opportunities == (SPLIT_KV,)
    assert said == [
        f"profile.md:{FIRST_ITEM_LINE + 1} [Top 3 Opportunities]: Expected the Top 3 as one "
        "list of opportunities, got 2 other items beside it; not read: "
        f"line {FIRST_ITEM_LINE + 1}: 'needs a combine kernel'; "
        f"line {FIRST_ITEM_LINE + 2}: 'and one launch more'"
    ]


def test_a_table_after_the_top_3_list_is_named_not_dropped() -> None:
    table = "| Rank | Opportunity | Est. Gain |\n|--|--|--|\n| 1 | Fused combine | 5% |\n"
    report, said = _said(HEAD + SPLIT_KV_ITEM + "\n" + table)
    assert report.opportunities == (SPLIT_KV,)
    table_line = FIRST_ITEM_LINE + 2
    assert said == [
        f"profile.md:{table_line} [Top 3 Opportunities]: Expected the Top 3 as a list or a "
        f"table, not both, got a table at line {table_line} beside the list at line "
        f"{FIRST_ITEM_LINE}; the list read, the table not read"
    ]


def test_the_rendered_text_still_reads_without_a_warning() -> None:
    full = ProfileReport(
        kernel=REPORT.kernel,
        version=REPORT.version,
        point=REPORT.point,
        stages=REPORT.stages,
        bottleneck=Bottleneck.LATENCY,
        root_cause=REPORT.root_cause,
        opportunities=(SPLIT_KV,),
    )
    report, said = _said(full.render())
    assert (report, said) == (full, [])

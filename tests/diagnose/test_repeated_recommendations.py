"""A recommendation repeated in a later note is advice again, not an answer to itself."""

from __future__ import annotations

from pathlib import Path

from kernelopt.diagnose import Pathology, diagnose
from kernelopt.diagnose.detectors.ignored_prior_research import _normalized, _Notes
from kernelopt.experiments import Recommendation, SourceRef, read_log

P = Pathology

_IDEA = "Try a persistent grid that claims tiles from a shared counter"

_HEADER = (
    "| Exp | Date | Description | Latency | Unit | Speedup | Correct | Status | Tags |\n"
    "|---|---|---|---|---|---|---|---|---|\n"
)
# Titles that share no distinctive term with the idea: none of them acts on it.
_TITLES = [
    "baseline",
    "first triton kernel",
    "BLOCK_N=64",
    "num_warps=8",
    "num_stages=3",
    "hoist reciprocal",
    "reorder argument checks",
    "narrower masks",
    "rename helper variables",
]


def _log(root: Path, notes: dict[int, str], titles: list[str] | None = None) -> Path:
    """A summary of nine attempts; ``notes`` maps an experiment to its result's notes."""
    rows = "".join(
        f"| {n} | 2026-12-01 | {title} | {100.0 - n / 10:g} | us |  | PASS | "
        f"{'BASELINE' if n == 1 else 'REVERTED'} |  |\n"
        for n, title in enumerate(titles or _TITLES, start=1)
    )
    (root / "experiments").mkdir(parents=True)
    (root / "experiments" / "summary.md").write_text(_HEADER + rows, encoding="utf-8")
    for number, note in notes.items():
        result = root / "experiments" / f"exp_{number}" / "result.md"
        result.parent.mkdir()
        result.write_text(
            f"# Experiment {number}: {_TITLES[number - 1]}\n\nStatus: REVERTED\n\n"
            f"- Latency: {100.0 - number / 10:g} us\n\n{note}\n",
            encoding="utf-8",
        )
    return root


def _next_steps(*items: str) -> str:
    return "## Next steps\n" + "".join(f"- {item}\n" for item in items)


def _sentence(root: Path) -> str:
    return next(
        c.sentence for c in diagnose(root).checks if c.pathology is P.IGNORED_PRIOR_RESEARCH
    )


def test_a_repeated_recommendation_does_not_answer_itself(tmp_path: Path) -> None:
    root = _log(tmp_path / "log", {3: _next_steps(_IDEA), 6: _next_steps(_IDEA)})
    # Read as two recommendations: after exp 3 and after exp 6.
    assert [(r.text, r.experiment) for r in read_log(root).recommendations] == [
        (_IDEA, 3),
        (_IDEA, 6),
    ]
    found = diagnose(root).finding(P.IGNORED_PRIOR_RESEARCH)
    assert found is not None
    # Reported once, as one idea recommended twice.
    assert found.summary == (
        "2 recommendations from earlier plans/results were never acted on in the 6+ attempts "
        f"that followed (made after exps 3, 6); e.g. \u201c{_IDEA}\u201d (recommended 2 times)."
    )
    assert [e.quote for e in found.evidence] == [f"{_IDEA} [x2]"]
    assert [e.source for e in found.evidence] == ["experiments/exp_3/result.md:8"]


def test_a_longer_recommendation_holding_it_does_not_answer_it(tmp_path: Path) -> None:
    longer = f"{_IDEA}, and fuse the epilogue into it"
    root = _log(tmp_path / "log", {3: _next_steps(_IDEA), 6: _next_steps(longer)})
    found = diagnose(root).finding(P.IGNORED_PRIOR_RESEARCH)
    assert found is not None
    assert f"e.g. \u201c{_IDEA}\u201d (recommended 2 times)" in found.summary


_WHY_NOT = (
    "## Notes\nWe did not try 'a persistent grid that claims tiles from a shared counter' "
    "because the tail tiles are too few to balance."
)


def test_a_note_discussing_it_still_answers_it(tmp_path: Path) -> None:
    root = _log(tmp_path / "log", {3: _next_steps(_IDEA), 6: _WHY_NOT})
    assert diagnose(root).finding(P.IGNORED_PRIOR_RESEARCH) is None
    assert _sentence(root).startswith("The 1 recommendation followed by 3+ attempts was acted on")


def test_a_note_discussing_and_repeating_it_answers_the_first(tmp_path: Path) -> None:
    # Its prose answers exp 3's; its own "Next steps" is new advice the attempts after it
    # (exps 7 to 9) were to act on.
    root = _log(tmp_path / "log", {3: _next_steps(_IDEA), 6: f"{_WHY_NOT}\n\n{_next_steps(_IDEA)}"})
    found = diagnose(root).finding(P.IGNORED_PRIOR_RESEARCH)
    assert found is not None
    assert found.summary == (
        "1 recommendation from earlier plans/results was never acted on in the 3+ attempts "
        f"that followed (made after exp 6); e.g. \u201c{_IDEA}\u201d."
    )


def test_a_repeat_that_a_later_attempt_acts_on_is_not_reported(tmp_path: Path) -> None:
    titles = [*_TITLES[:7], "persistent grid claiming tiles from a shared counter", *_TITLES[8:]]
    root = _log(tmp_path / "log", {3: _next_steps(_IDEA), 6: _next_steps(_IDEA)}, titles)
    assert diagnose(root).finding(P.IGNORED_PRIOR_RESEARCH) is None
    assert _sentence(root).startswith(
        "Each of the 2 recommendations followed by 3+ attempts was acted on"
    )


def test_a_repeat_with_a_link_does_not_answer_it(tmp_path: Path) -> None:
    # The log's reader keeps a link's words only: both read as the idea, and the words
    # after the link in exp 6's copy ("that claims tiles from a shared counter") are no
    # answer either.
    linked = (
        "Try a [persistent grid](../docs/persistent.md) that claims tiles from a shared counter"
    )
    root = _log(tmp_path / "log", {3: _next_steps(_IDEA), 6: _next_steps(linked)})
    assert [r.text for r in read_log(root).recommendations] == [_IDEA, _IDEA]
    found = diagnose(root).finding(P.IGNORED_PRIOR_RESEARCH)
    assert found is not None
    assert [e.quote for e in found.evidence] == [f"{_IDEA} [x2]"]


def test_a_repeat_with_a_link_is_cut_as_its_text_reads(tmp_path: Path) -> None:
    # The log's reader keeps a link's words only; the note holds the link as written.
    note = tmp_path / "exp_6" / "result.md"
    note.parent.mkdir()
    note.write_text(
        "# Experiment 6\n\n## Next steps\n"
        "- Try a [persistent grid](../docs/persistent.md) that claims tiles from a shared "
        "counter\n\n## Notes\nThe tail is short.\n",
        encoding="utf-8",
    )
    made = [Recommendation(text=_IDEA, source=SourceRef(path="exp_6/result.md", line=4))]
    text = _Notes(str(tmp_path), made).text("exp_6/result.md")
    assert text == "# experiment 6 ## next steps - \n ## notes the tail is short."
    assert _normalized("claims tiles from a shared") not in text


def test_sentences_of_one_paragraph_are_each_cut(tmp_path: Path) -> None:
    # Advice sentences of a conclusion are placed at their paragraph's first line.
    note = tmp_path / "exp_6" / "result.md"
    note.parent.mkdir()
    note.write_text(
        "# Experiment 6\n\n## Conclusion\nThe gain is small.\n"
        "The next step is a persistent grid. It ran.\n"
        "We recommend a shared counter for the tiles.\n",
        encoding="utf-8",
    )
    made = [
        Recommendation(text=text, source=SourceRef(path="exp_6/result.md", line=4))
        for text in ("The next step is a persistent grid", "We recommend a shared counter")
    ]
    text = _Notes(str(tmp_path), made).text("exp_6/result.md")
    assert text == ("# experiment 6 ## conclusion the gain is small. \n. it ran. \n for the tiles.")

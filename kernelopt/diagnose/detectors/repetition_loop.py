"""1. Repetition loop: variants of the same idea, again and again, with no new best.

Looks at the trailing stall (the recent attempts over which the best improved by less than
``min_gain``) and groups its attempts by axis: a catalog tag they share, a tuning knob they
all change (``BLOCK_N``), or a distinctive term of their titles (``max_s_q``) other than the
kernel's own name (``seesaw`` for ``seesaw.py``). An axis with ``min_experiments`` attempts
is a loop. The catalog's measuring techniques (CUDA-event instrumentation, the roofline)
are no axis: profiling again is no variant of an idea. Nor is an attempt that only measured
the kernel: its title says it profiled or timed it ("roofline analysis of the kernel",
"time each stage with CUDA events"), it changed no knob, and it names no technique other
than a measuring one; the words of such titles ('analysis', 'stage') are no axis either.

A knob counts as changed by an attempt when its title names it, or when its value differs
from the kernel the attempt may have started from: the knobs of the kept experiments before
it, and the configuration of the attempt just before it (a reverted attempt whose tiles the
next one kept). A ``Knobs:`` line that lists a whole configuration does not make every
attempt "vary" every knob in it, nor does a value carried over from the attempt before.

Nor is the version the stall started from a new axis. A catalog tag an attempt's words
match only through words the kept experiment before the stall already holds (its title, the
implementations its result timed, its tags) names that kernel, as the kernel's own name
does: after a kept "fused single-block softmax", three attempts titled "fused softmax,
num_warps=8|2|16" vary the knob ``num_warps``, not kernel fusion, and the word 'fused' is
no term of theirs either. Such words stand as the axis only when the attempts share no
other (no knob, no technique named in words of their own, no other term), as three
reworkings of a bound a kept shortcut introduced share only its name. Attempts that name a
technique in words of their own still share its tag.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Sequence

import attrs

from kernelopt._errors import InputError
from kernelopt._words import count_text
from kernelopt.diagnose.context import (
    MEASUREMENT,
    Context,
    attempts_text,
    experiments_text,
    salient_terms,
)
from kernelopt.diagnose.detectors._base import Outcome, found, not_found
from kernelopt.diagnose.detectors.local_minimum import recorded_ab_gain
from kernelopt.diagnose.model import Action, Finding, Pathology, Severity
from kernelopt.diagnose.params import RepetitionLoopParams
from kernelopt.diagnose.presence import present_in
from kernelopt.diagnose.progress import Step, contest_words
from kernelopt.experiments.log import Experiment
from kernelopt.experiments.readers import knobs_of
from kernelopt.experiments.records import Correctness, Status
from kernelopt.experiments.tagging import Tagger, default_tagger

__all__ = ["NEXT_IDEA", "changed_knobs", "detect", "next_idea"]

_PATHOLOGY = Pathology.REPETITION_LOOP
# Points at other findings of the plan: see kernelopt.diagnose.engine.
NEXT_IDEA = "Take the next idea from the missing-fundamental or prior-research items of this plan."
# How much each kind of axis is worth as evidence that attempts try "the same idea".
_WEIGHT = {"tag": 0.85, "knob": 0.8, "term": 0.65}


_NOT_KEPT = (Status.REVERTED, Status.NEUTRAL, Status.FAILED)


def _kept(experiment: Experiment) -> bool:
    """Whether later attempts start from ``experiment``'s kernel: it was not reverted,
    neutral or failed, and did not fail correctness."""
    return experiment.status not in _NOT_KEPT and experiment.correctness is not Correctness.FAIL


def _as_written(name: str, title: str) -> str:
    """Knob ``name`` lower-cased, with the words the title hyphenates onto it: ``split-k``
    for the ``K`` of "split-K=8". The knob is split-K; ``K`` alone is a GEMM's reduction
    size, and "K=4096" in another title is no change of it."""
    hyphenated = re.search(
        r"(?<![A-Za-z0-9_-])((?:[A-Za-z][A-Za-z0-9]*-)+)" + re.escape(name) + r"(?![A-Za-z0-9_])",
        title,
    )
    return (hyphenated.group(1) + name if hyphenated else name).lower()


def changed_knobs(experiments: tuple[Experiment, ...]) -> dict[int, set[str]]:
    """Per experiment number, the knobs (lower-cased, as the title writes them: ``split-k``)
    the attempt changed: named in its title, or set to another value than both the kept
    kernel before it and the attempt before it had.

    An attempt is made from the kept kernel or from the attempt before it (a reverted one
    whose tiles it kept): a value either of them already had is carried, not varied."""
    current: dict[str, str] = {}
    previous: dict[str, str] = {}  # the configuration the attempt before ran
    changed: dict[int, set[str]] = {}
    for experiment in experiments:
        title = experiment.description
        knobs = {_as_written(name, title): value for name, value in experiment.knobs.items()}
        named = {_as_written(name, title) for name in knobs_of(title)}
        moved = {
            name
            for name, value in knobs.items()
            if current.get(name, value) != value and previous.get(name) != value
        }
        changed[experiment.number] = named | moved
        if experiment.attempted:
            previous = {**current, **knobs}
        if _kept(experiment):
            current.update(knobs)
    return changed


def _stall_base(ctx: Context, first: Experiment) -> Experiment | None:
    """The kept experiment the stall started from: the latest kept attempt before
    ``first``, the stall's first attempt; None when none came before it."""
    base = None
    for experiment in ctx.experiments:
        if experiment is first or experiment.number == first.number:
            break
        if experiment.attempted and _kept(experiment):
            base = experiment
    return base


def _phrase(text: str) -> str:
    """``text`` lower-cased, with runs of ``-``, ``_`` and spaces as one space: how the
    catalog's keywords are compared (``split-KV`` = ``split kv``)."""
    return re.sub(r"[\s_\-]+", " ", text.lower()).strip()


@attrs.frozen
class _Held:
    """What the kept experiment a stall started from names itself by.

    ``said``: the catalog phrases its title says (``fused`` in "fused single-block
    softmax"; one after "without" or "no" is not said). ``names``: the implementations
    its result rows timed, its tags and their catalog names, as one comparable text.
    ``entries``: the catalog entries one of whose phrases it holds, the only tags an
    attempt can have inherited from it.
    """

    said: frozenset[str] = frozenset()
    names: str = ""
    entries: frozenset[str] = frozenset()

    def holds(self, phrase: str) -> bool:
        """Whether ``phrase`` (compared as :func:`_phrase` writes it) names the base."""
        if phrase in self.said:
            return True
        if phrase not in self.names:  # most phrases: no pattern to compile
            return False
        whole = r"(?<![a-z0-9])" + re.escape(phrase) + r"(?![a-z0-9])"
        return re.search(whole, self.names) is not None


def _held(ctx: Context, base: Experiment, tagger: Tagger) -> _Held:
    """What ``base``, the kept experiment the stall started from, names itself by."""
    said = frozenset(_phrase(text) for _, text, _ in tagger.matches(base.description))
    entries = [getattr(ctx.entry(tag), "name", "") for tag in base.tags]
    parts = [*(row.impl for row in base.floors), *base.tags, *entries]
    held = _Held(said=said, names=" | ".join(_phrase(part) for part in parts if part))
    # A tagger's phrases are written as _phrase writes them, so a tag whose every phrase
    # the base lacks cannot be matched only through the base's words.
    ids = {i for phrase, found in tagger.phrases.items() if held.holds(phrase) for i in found}
    return attrs.evolve(held, entries=frozenset(ids))


def _tagger(ctx: Context) -> Tagger:
    """A tagger over the diagnosis's catalog, as the log readers tagged the experiments
    with; an empty one without a catalog, or with one whose entries carry no keywords (the
    experiments' tags were then given, not matched)."""
    if ctx.catalog is None:
        return Tagger(())
    try:
        return default_tagger(ctx.catalog)[0]
    except InputError:
        return Tagger(())


def _inherited(
    experiment: Experiment, tagger: Tagger, held: _Held | None
) -> tuple[set[str], set[str]]:
    """The tags of ``experiment`` matched only through words the stall's base holds
    (``held``; None when the stall has no kept experiment before it), and those words'
    salient terms.

    Only an attempt whose tags are those its words match can have any: one whose
    ``Tags:`` line gives others keeps them all, the author's word on what it tried.
    """
    if held is None or not held.entries.intersection(experiment.tags):
        # No tag of the attempt has a phrase the base holds: none can be inherited, and
        # its text need not be scanned again (a stall may run to a thousand attempts).
        return set(), set()
    matches = tagger.matches(experiment.text or experiment.description)
    if tuple(dict.fromkeys(entry for entry, _, _ in matches)) != experiment.tags:
        return set(), set()
    inherited: set[str] = set()
    words: set[str] = set()
    for tag in experiment.tags:
        said = [text for entry, text, _ in matches if entry == tag]
        if all(held.holds(_phrase(text)) for text in said):
            inherited.add(tag)
            # As written: 'max_s_q' is a term, 'max s q' none.
            words |= salient_terms(" ".join(said))
    return inherited, words


def _kernel_names(ctx: Context) -> set[str]:
    """Names of the kernel itself (``seesaw`` for ``seesaw.py``, ``mla_decode``): titles say
    them whatever idea they try, so they are not an axis an effort repeats."""
    names = set()
    for source in (*ctx.kernels, *ctx.log.kernels):
        stem = source.path.replace("\\", "/").rsplit("/", 1)[-1].split(".", 1)[0].lower()
        if stem.startswith("exp_"):
            continue
        names.add(stem)
        names.update(part for part in re.split(r"[_\-]", stem) if len(part) >= 5)
    return names


# Words of a title that measures the kernel rather than changes it: profiling, a
# roofline, timings, diagnostics, the profilers and timers themselves.
_MEASURING = re.compile(
    r"\b(?:profil\w*|roofline\w*|diagnos\w*|instrument\w*|timings?|timelines?"
    r"|breakdowns?|ncu|nsight|nsys|do_bench|elapsed_time|cuda[\s_-]*events?"
    r"|time (?:each|every) \w+)\b",
    re.IGNORECASE,
)


def _measures_only(experiment: Experiment, knobs: set[str]) -> bool:
    """Whether an attempt measured the kernel rather than changed it: its title says it
    profiled or timed (``roofline analysis per stage``, ``time each stage with CUDA
    events``), it changed none of ``knobs``, and its only catalog tags are measuring
    techniques. A title that also names another technique or sets a knob is a change."""
    return (
        not knobs
        and all(tag in MEASUREMENT for tag in experiment.tags)
        and _MEASURING.search(experiment.description) is not None
    )


def _shared(
    groups: dict[tuple[str, str], list[Experiment]], least: int
) -> list[tuple[tuple[str, str], list[Experiment]]]:
    """The axes of ``groups`` that ``least`` attempts or more share, with those attempts."""
    return [(axis, members) for axis, members in groups.items() if len(members) >= least]


def _axes(
    experiment: Experiment,
    knobs: set[str],
    exclude: set[str],
    inherited: frozenset[str] | set[str] = frozenset(),
) -> set[tuple[str, str]]:
    """The axes ``experiment`` may share with others: its catalog tags but measuring ones
    and ``inherited`` ones (named only through the stall's base), the knobs it changed, and
    its title's salient terms but those of ``exclude``."""
    axes = {
        ("tag", tag) for tag in experiment.tags if tag not in MEASUREMENT and tag not in inherited
    }
    axes |= {("knob", name) for name in knobs}
    axes |= {("term", term) for term in salient_terms(experiment.description) - exclude}
    return axes


def _spelling(name: str, members: list[Experiment]) -> str:
    """``name`` as the log writes it (``block_n`` -> ``BLOCK_N``)."""
    pattern = re.compile(
        r"(?<![A-Za-z0-9_])" + re.escape(name) + r"(?![A-Za-z0-9_])", re.IGNORECASE
    )
    for experiment in members:
        match = pattern.search(experiment.description) or next(
            (pattern.search(k) for k in experiment.knobs if pattern.search(k)), None
        )
        if match:
            return match.group(0)
    return name


def _axis_words(kind: str, name: str, ctx: Context, members: list[Experiment]) -> str:
    if kind == "tag":
        entry = ctx.entry(name)
        return f"{getattr(entry, 'name', name)} ({name})" if entry is not None else name
    if kind == "knob":
        return f"the knob {_spelling(name, members)}"
    return f"'{_spelling(name, members)}'"


def _snapshot_texts(ctx: Context, experiment: Experiment) -> tuple[str, ...] | None:
    """The texts of ``experiment``'s full kernel snapshots, in path order; None where it
    left none."""
    found = ctx.snapshots.get(experiment.number)
    if not found:
        return None
    return tuple(source.text for source in sorted(found, key=lambda source: source.path))


def _repeats(ctx: Context, attempts: Sequence[Experiment]) -> dict[int, list[Experiment]]:
    """The attempts of ``attempts`` that repeat an earlier attempt that was not kept, by
    the number of the earliest such attempt: the same knob values (one knob at least), the
    same tags, and, where both left a full kernel snapshot, the same kernel text.

    A repeat of a reverted or failed attempt runs what the log already answered; one of a
    kept experiment builds on it, and is no repeat."""
    repeated: dict[int, list[Experiment]] = defaultdict(list)
    for attempt in attempts:
        if not attempt.knobs:
            continue
        for earlier in ctx.experiments:
            if earlier.number >= attempt.number:
                break
            if not earlier.attempted or _kept(earlier) or earlier.knobs != attempt.knobs:
                continue
            if set(earlier.tags) != set(attempt.tags):
                continue
            ours, theirs = _snapshot_texts(ctx, attempt), _snapshot_texts(ctx, earlier)
            if ours is not None and theirs is not None and ours != theirs:
                continue  # the same knobs on another kernel text: a new change
            repeated[earlier.number].append(attempt)
            break
    return repeated


def _failed_correctness(experiment: Experiment) -> bool:
    """Whether ``experiment`` failed its correctness check (its result says FAIL)."""
    return experiment.correctness is Correctness.FAIL


def _repeats_text(ctx: Context, attempts: Sequence[Experiment]) -> str:
    """The repeats among ``attempts`` (see :func:`_repeats`) as a sentence naming both
    numbers (``"Exp 5 repeats exp 2: the same knob values (ROWS=8) and tags."``); ``""``
    where there are none.

    A passing attempt with the knobs and tags of one that failed correctness is its fix:
    the technique was never measured right before it, so the sentence says it fixes the
    failure, not that it repeats it."""
    sentences = []
    for number, later in _repeats(ctx, attempts).items():
        earlier = next(e for e in ctx.experiments if e.number == number)
        pairs = [f"{name}={value}" for name, value in earlier.knobs.items()]
        knobs = ", ".join(pairs[:4]) + (", …" if len(pairs) > 4 else "")
        fixes = [e for e in later if not _failed_correctness(e)]
        if _failed_correctness(earlier) and fixes:
            who = experiments_text([e.number for e in fixes])
            sentences.append(
                f"{who[0].upper()}{who[1:]} {'retries' if len(fixes) == 1 else 'retry'} "
                f"{earlier.mention} ({knobs}), which failed correctness: a fix, not a repeat."
            )
            later = [e for e in later if e not in fixes]
            if not later:
                continue
        who = experiments_text([e.number for e in later])
        sentences.append(
            f"{who[0].upper()}{who[1:]} {'repeats' if len(later) == 1 else 'repeat'} "
            f"{earlier.mention}: the same knob values ({knobs}) and tags."
        )
    return " ".join(sentences)


def _beat(value: float | None, best: float | None, min_gain: float) -> bool:
    """Whether higher-is-better ``value`` is ``min_gain`` or more better than ``best``
    (latencies are negative)."""
    if value is None or best is None or best == 0.0:
        return False
    return (value - best) / abs(best) >= min_gain


def _why_not_best(experiment: Experiment, contested: bool, many: bool) -> str:
    """Why an attempt that timed faster than the best is no new best, as the words after
    "but" (``"failed correctness"``, ``"were reverted"``); ``many`` for several attempts."""
    was, are = ("were", "are") if many else ("was", "is")
    if experiment.correctness is Correctness.FAIL:
        return "failed correctness"
    if experiment.status is Status.REVERTED:
        return f"{was} reverted"
    if experiment.status is Status.NEUTRAL:
        return f"{was} marked neutral"
    if experiment.status is Status.FAILED:
        return f"{was} marked failed"
    if contested:
        return f"{are} {contest_words(experiment)} by {'their' if many else 'its'} own A/B"
    return f"{are} not counted as a new best"


def _why_key(experiment: Experiment, step: Step | None) -> str:
    """The reason an attempt that timed faster is no new best, as a key to group attempts
    by: its correctness, its status, or ``"contested"`` and what its own A/B says of it
    (``"contested slower"``, ``"contested not shown faster"``)."""
    if experiment.correctness is Correctness.FAIL:
        return "correctness"
    if experiment.status in _NOT_KEPT:
        return str(experiment.status)
    if step is not None and step.contested is not None:
        return f"contested {contest_words(experiment)}"
    return "other"


def _listed(values: Sequence[str], limit: int = 6) -> str:
    """``values`` joined, the first ``limit`` of them and an ellipsis for the rest."""
    return ", ".join(values[:limit]) + (", …" if len(values) > limit else "")


def _times_text(ctx: Context, members: Sequence[Experiment]) -> str:
    """The numbers of ``members`` as one series (``"264.9 us, 331.8 us"``), or, where they
    were timed on different devices, one series per device: ``"on cpu: 77712 us, 66734 us;
    on NVIDIA H100: 8.1 us; timed on different devices, compared only within one"``. A
    host-clock time beside a GPU time is no gain or loss; ``""`` where none has a number."""
    timed = [(e, ctx.value_at(e)) for e in members]
    timed = [(e, value) for e, value in timed if value]
    devices = dict.fromkeys(e.gpu or "" for e, _ in timed)
    if len(devices) < 2:
        return _listed([value for _, value in timed])
    series = []
    for device in devices:
        values = []
        for experiment, _ in ((e, v) for e, v in timed if (e.gpu or "") == device):
            value = ctx.value_text(experiment)
            if ctx.progress.points and experiment.headline_point:
                value = f"{value} at {experiment.headline_point}"
            values.append(value)
        series.append(f"on {device or 'an unnamed device'}: {_listed(values)}")
    return "; ".join(series) + "; timed on different devices, compared only within one"


def _outcome_text(ctx: Context, members: Sequence[Experiment], min_gain: float) -> str:
    """What became of ``members`` against the best, in words that agree with their
    numbers: ``"none moved the best by 5% (264.9 us, 331.8 us)"`` where none timed 5%
    faster than it, else which timed faster and why none is a new best (reverted, failed
    correctness, slower by its own A/B)."""
    values = _times_text(ctx, members)
    moved = f"none moved the best by {min_gain:.0%}"
    plain = moved + (f" ({values})" if values else "")
    progress = ctx.progress
    best = progress.best()
    key = progress.best_key()
    if best is None or key not in best.values:
        return plain
    steps = {id(step.experiment): step for step in progress.steps}
    groups: dict[str, list[Experiment]] = defaultdict(list)
    for experiment in members:
        step = steps.get(id(experiment))
        value = step.values.get(key) if step is not None else None
        if not _beat(value, best.values[key], min_gain):
            groups[""].append(experiment)
            continue
        groups[_why_key(experiment, step)].append(experiment)
    if list(groups) == [""]:
        return plain
    parts = []
    for reason, group in groups.items():
        numbers = experiments_text([e.number for e in group])
        times = _times_text(ctx, group)
        shown = f" ({times})" if times else ""
        if not reason:
            parts.append(f"{numbers}{shown} did not move it by {min_gain:.0%}")
            continue
        contested = reason.startswith("contested ")
        said = _why_not_best(group[0], contested, many=len(group) > 1)
        parts.append(f"{numbers} timed faster{shown} but {said}")
    return (
        f"none is a new best over {best.experiment.mention}'s {ctx.value_at(best.experiment)}: "
        + "; ".join(parts)
    )


def _since_text(ctx: Context, count: int, measured: bool, min_gain: float) -> str:
    """The attempts a loop is looked for in, in words: those since the best last moved, or,
    in a log without a comparable number (no best to move), those whose outcome is known.
    Why there is no best to move: one experiment reports numbers no other reports
    (:meth:`Context.lone_number`), several do but never the same one twice
    (:meth:`Context.unshared_numbers`), or none reports one."""
    if measured:
        return f"{attempts_text(count)} since the best last moved by {min_gain:.0%} or more"
    lone, unshared = ctx.lone_number(), ctx.unshared_numbers()
    if lone:
        why = (
            f"Only {lone}, and a gain needs the same number from two experiments, so none can "
            "be tracked yet"
        )
    elif unshared:
        why = (
            f"No two experiments report the same metric at the same point ({unshared}), so no "
            "best can be tracked yet"
        )
    else:
        why = (
            "No experiment reports a comparable number (latency, speedup or throughput), so "
            "no best can be tracked"
        )
    return (
        f"{why}; {attempts_text(count).lower()} with a known outcome (reverted, neutral or failed)"
    )


def next_idea(ctx: Context) -> Action | None:
    """A step to take instead of the repeated one, where the plan has no missing-fundamental
    or prior-research item to take it from: the catalog's highest-ranked optimization for
    the kernel's family (an entry of that family or an ancestor's, not one for every
    kernel) that no experiment was tagged with, the kernel's source does not show, the
    recorded calls do not rule out (:func:`ruled_out_by_workload`), and that changes the
    kernel (a way of measuring it is no next idea). None without a catalog that ranks
    entries, or where every such entry is tried."""
    query = getattr(ctx.catalog, "query", None)
    if query is None:
        return None
    try:
        matches = query(family=ctx.family, kind="optimization")
    except Exception:  # a family a user's catalog does not know
        return None
    from kernelopt.diagnose.detectors.missing_fundamental import (
        ruled_out_by_workload,
        workload_ops,
    )

    tried = {tag for e in ctx.experiments for tag in e.tags}
    # The recorded calls rule an entry out as they do a fundamental: causal tile skipping
    # (s_q >= 128) is no next idea for a decode kernel whose every call has s_q of 1 or 16.
    ops, profile_path, _ = workload_ops(ctx, ctx.family) if ctx.family else ([], None, False)
    for match in matches:
        entry = match.entry
        if entry.id in tried or entry.id in MEASUREMENT:
            continue
        if ctx.kernels and present_in(entry, ctx.kernels) is not None:
            continue
        if ruled_out_by_workload(entry, ops, profile_path) is not None:
            continue
        # An entry for every kernel (dot input precision, autotuning) says nothing of this
        # one: the pick is the family's own, where the kernel has a family.
        if ctx.family and set(getattr(entry, "families", ())) <= {"any"}:
            continue
        where = f"the {ctx.family} family" if ctx.family else "any kernel"
        return ctx.action(
            f"Try {entry.name} next: the catalog's first pick for {where} that no experiment "
            "tried and the kernel does not show yet.",
            entry.id,
        )
    return None


def detect(ctx: Context, params: RepetitionLoopParams) -> Outcome:
    """Find the largest group of stalled attempts that share an axis."""
    progress = ctx.progress
    if not ctx.experiments:
        return not_found(
            _PATHOLOGY, "No experiments were read, so no repetition can be seen.", ["experiments"]
        )
    stall = progress.counted(progress.stall(params.min_gain))
    # A kept attempt whose own A/B recorded a gain of min_gain moved the best (as item 2
    # reads it): the attempts after it are those that did not.
    movers = [
        i for i, step in enumerate(stall) if (recorded_ab_gain(step) or 0.0) >= params.min_gain
    ]
    if movers:
        stall = stall[movers[-1] + 1 :]
    measured = any(s.values for s in progress.steps)
    if len(stall) < params.min_experiments:
        return not_found(
            _PATHOLOGY,
            _since_text(ctx, len(stall), measured, params.min_gain)
            + f": too few to repeat an idea (needs {params.min_experiments}).",
        )
    # Axes an attempt shares beyond the version the stall started from, and every axis.
    groups: dict[tuple[str, str], list[Experiment]] = defaultdict(list)
    every_axis: dict[tuple[str, str], list[Experiment]] = defaultdict(list)
    changed = changed_knobs(ctx.experiments)
    kernel_names = _kernel_names(ctx)
    base = _stall_base(ctx, stall[0].experiment)
    # Words that name the version the stall started from ('fused' after a kept fused
    # kernel) say what the attempts start from, not what they vary.
    tagger = _tagger(ctx) if base is not None else Tagger(())
    held = _held(ctx, base, tagger) if base is not None else None
    measuring: list[int] = []
    for step in stall:
        knobs = changed.get(step.experiment.number, set())
        if _measures_only(step.experiment, knobs):
            # Profiling a kernel again (per-stage times, a roofline) is no variant of an
            # idea: it is what a stalled effort should do before its next change. Its
            # title's words ('analysis', 'stage') name what was measured, not an idea tried.
            measuring.append(step.experiment.number)
            continue
        inherited, base_words = _inherited(step.experiment, tagger, held)
        for axis in _axes(step.experiment, knobs, kernel_names | base_words, inherited):
            groups[axis].append(step.experiment)
        for axis in _axes(step.experiment, knobs, kernel_names):
            every_axis[axis].append(step.experiment)
    # A knob, technique or term the attempts vary ranks before the words that name the
    # version they start from; those stand only when the attempts share nothing else
    # (three reworkings of the max_s_q bound a kept max_s_q shortcut introduced).
    candidates = _shared(groups, params.min_experiments) or _shared(
        every_axis, params.min_experiments
    )
    if not candidates:
        since = (
            f"The {count_text(len(stall), 'attempt')} since the last {params.min_gain:.0%} gain"
            if measured
            else _since_text(ctx, len(stall), measured, params.min_gain)
        )
        if len(measuring) == len(stall):
            return not_found(
                _PATHOLOGY,
                since + " measured the kernel (profiling, timing) rather than changed it "
                f"({experiments_text(measuring)}): no idea to repeat.",
            )
        repeats = _repeats_text(ctx, [step.experiment for step in stall])
        return not_found(
            _PATHOLOGY,
            since
            + f" {'tries' if len(stall) == 1 else 'try'} different ideas (no catalog tag, knob or "
            f"term shared by {params.min_experiments} or more of them)"
            + (
                f"; {experiments_text(measuring)} measured the kernel rather than changed it."
                if measuring
                else "."
            )
            + (f" {repeats}" if repeats else ""),
        )
    # The biggest group wins; ties go to tags, then knobs, then terms.
    order = {"tag": 0, "knob": 1, "term": 2}
    candidates.sort(key=lambda item: (-len(item[1]), order[item[0][0]], item[0][1]))
    (kind, name), members = candidates[0]
    same = [
        (a, m) for a, m in candidates[1:] if {e.number for e in m} == {e.number for e in members}
    ]
    numbers = [e.number for e in members]
    words = _axis_words(kind, name, ctx, members)
    also_words = []
    for (k, n), m in same:
        text = _axis_words(k, n, ctx, m)
        if n != name and text not in also_words:
            also_words.append(text)
    also = ", ".join(also_words[:2])
    # Each number with its trial point: numbers of two points side by side are not a gain.
    repeats = _repeats_text(ctx, members)
    summary = (
        f"{len(members)} of the last {count_text(len(stall), 'attempt')} "
        f"({experiments_text(numbers)}) {'varies' if len(members) == 1 else 'vary'} "
        f"{words}"
        + (f" (also {also})" if also else "")
        + f" and {_outcome_text(ctx, members, params.min_gain)}."
        + (f" {repeats}" if repeats else "")
    )
    confidence = min(
        0.95, _WEIGHT[kind] * (0.75 + 0.25 * min(1.0, len(members) / (2 * params.min_experiments)))
    )
    actions = []
    if kind == "knob":
        actions.append(
            ctx.action(
                f"Stop changing {_spelling(name, members)} one value at a time: sweep it once, "
                f"with the other knobs, "
                "in a small pruned search, then move on to the design.",
                "pruned-autotuning",
            )
        )
    else:
        actions.append(
            ctx.action(
                f"Stop iterating on {words}: {count_text(len(members), 'variant')} gained less "
                f"than {params.min_gain:.0%}{' together' if len(members) > 1 else ''}."
            )
        )
    # Kept only when the plan has such items (the engine checks once every detector ran).
    actions.append(ctx.action(NEXT_IDEA))
    finding = Finding(
        pathology=_PATHOLOGY,
        summary=summary,
        experiments=numbers,
        severity=Severity.HIGH if len(members) >= 2 * params.min_experiments else Severity.MEDIUM,
        confidence=round(confidence, 2),
        evidence=[ctx.evidence(e) for e in members[:8]],
        actions=actions,
    )
    return found(finding)

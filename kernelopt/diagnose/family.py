"""Which kernel family a log is about, from CLAUDE.md, kernel file names and experiments.

The family decides which catalog entries are fundamental (split-KV for decode attention,
online softmax for attention, ...). It is inferred from words: CLAUDE.md and kernel paths
weigh most, experiment titles less. A kernel path is read as the words of its components
(``kernels/mla_decode.py`` reads "kernels mla decode py"). Where two families score alike,
the one named by the stronger source wins: a heading of CLAUDE.md (what the effort is
about), then its other lines and the kernel paths, then experiment titles. A family is only
named when the words say so clearly; ``diagnose(family=...)`` overrides it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import attrs

from kernelopt.experiments.log import ExperimentLog, Fact, SourceRef

__all__ = ["FamilyGuess", "infer_family"]

_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (family, re.compile(pattern, re.IGNORECASE))
    for family, pattern in (
        ("mla-decode", r"\bmla\b|multi[- ]head latent|flashmla|latent attention"),
        (
            "decode-attention",
            # A KV cache alone is no attention (a cache append writes one): it counts only
            # beside an attention word.
            r"\bdecod(?:e|ing)\b[^.\n]{0,40}\b(?:attention|attn)\b|flash[- "
            r"]decoding|paged attention|\bkv[- ]?cache\b[^.\n]{0,60}\b(?:attention|attn|"
            r"softmax|sdpa)\b|\b(?:attention|attn|softmax|sdpa)\b[^.\n]{0,60}\bkv[- ]?cache\b",
        ),
        (
            "linear-attention",
            r"gated delta|\bgdn\b|linear[- ]attention|delta[- "
            r"]rule|\bmamba\b|\bssm\b|retention|recurrent state",
        ),
        ("attention", r"\battention\b|\bsdpa\b|flash[- ]?attn|flash[- ]attention|\bfmha\b|\bmha\b"),
        ("softmax", r"\bsoftmax\b"),
        ("gemm", r"\bgemm\b|\bmatmul\b|\bcublas\b|\bmma\b kernel|\bgemv\b"),
        (
            "normalization",
            r"\blayer ?norm\b|\brms ?norm\b|\blayernorm\b|\brmsnorm\b|\bnormali[sz]ation kernel",
        ),
        ("reduction", r"\breduction\b|\breduce kernel\b|\bsum kernel\b|\bargmax\b"),
        ("elementwise", r"\belementwise\b|\belement-wise\b|\bpointwise\b|\bresize\b|\btranspose\b"),
    )
)
# A kernel that writes the KV cache (vLLM's reshape_and_cache, a cache append, scatter or
# store) is a copy, not attention, even where its line names the attention it serves; a
# line that says the write is fused into an attention kernel still counts.
_CACHE_WRITE = re.compile(
    r"reshape_and_cache|\bkv[- ]?cache[- ](?:append|write|scatter|store|update|insert)",
    re.IGNORECASE,
)
_FUSED = re.compile(r"\bfus(?:e|ed|es|ing|ion)\b", re.IGNORECASE)
_ATTENTION_FAMILIES = frozenset(
    {"mla-decode", "decode-attention", "attention", "linear-attention", "softmax"}
)
# A more specific family wins over its parent when both are supported.
_SPECIFIC = {"mla-decode": "decode-attention", "decode-attention": "attention"}


@attrs.frozen(kw_only=True)
class FamilyGuess:
    """The inferred family, its score, and the facts that named it."""

    family: str | None
    score: float
    facts: tuple[Fact, ...] = ()
    by_kernel: bool = False
    """Whether the kernel's own name (its file's path) names the family, not only words
    about it (a CLAUDE.md line, an experiment title)."""


# How strong a source is, for ties: a heading of CLAUDE.md names what the effort is about;
# its other lines and the kernel paths describe it; an experiment title names one attempt
# (a softmax rescale fused into an MLA decode kernel is not a softmax kernel).
_HEADING, _DESCRIPTION, _TITLE = 3, 2, 1
# Path components join words with these (``mla_decode.py``): ``\b`` does not split on ``_``.
_PATH_JOINER = re.compile(r"[/\\_.\-]+")


def _path_words(path: str) -> str:
    """``path`` as the words of its components: ``kernels/mla_decode.py`` reads
    ``kernels mla decode py``."""
    return _PATH_JOINER.sub(" ", path)


def _weighted_facts(log: ExperimentLog) -> Iterable[tuple[Fact, str, float, int, bool]]:
    """Each fact, the text its families are matched in, its weight, its strength, and
    whether it is the kernel's name (a kernel path) rather than words about it."""
    for fact in log.project[:200]:
        strength = _HEADING if fact.text.lstrip().startswith("#") else _DESCRIPTION
        yield fact, fact.text, 3.0, strength, False
    for source in log.kernels:
        fact = Fact(text=source.path, source=SourceRef(path=source.path))
        yield fact, _path_words(source.path), 3.0, _DESCRIPTION, True
    if log.kernel_path is not None:
        yield log.kernel_path, _path_words(log.kernel_path.text), 3.0, _DESCRIPTION, True
    for experiment in log.experiments[-200:]:
        ref = experiment.source or SourceRef(path="")
        description = experiment.description
        yield Fact(text=description, source=ref), description, 1.0, _TITLE, False


def infer_family(log: ExperimentLog) -> FamilyGuess:
    """Guess the kernel family of ``log``; ``family`` is None when no family is clear."""
    scores: dict[str, float] = {}
    strengths: dict[str, int] = {}
    facts: dict[str, list[Fact]] = {}
    by_kernel: set[str] = set()
    for fact, text, weight, strength, kernel in _weighted_facts(log):
        cache_write = _CACHE_WRITE.search(text) is not None and not _FUSED.search(text)
        for family, pattern in _PATTERNS:
            if cache_write and family in _ATTENTION_FAMILIES:
                continue
            if pattern.search(text):
                scores[family] = scores.get(family, 0.0) + weight
                strengths[family] = max(strengths.get(family, 0), strength)
                facts.setdefault(family, []).append(fact)
                if kernel:
                    by_kernel.add(family)
    if not scores:
        return FamilyGuess(family=None, score=0.0)
    # A tie goes to the family the stronger source names; the name only keeps the choice
    # the same from run to run.
    best = max(scores, key=lambda f: (scores[f], strengths[f], f))
    # decode-attention evidence also counts for MLA decode when MLA is named.
    for specific, parent in _SPECIFIC.items():
        if specific in scores and best in (parent, "attention") and scores[specific] >= 3.0:
            best = specific
            break
    if scores[best] < 3.0:
        return FamilyGuess(family=None, score=scores[best], facts=tuple(facts[best][:3]))
    return FamilyGuess(
        family=best,
        score=scores[best],
        facts=tuple(facts[best][:3]),
        by_kernel=best in by_kernel,
    )

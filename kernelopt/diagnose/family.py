"""Which kernel family a log is about, from CLAUDE.md, kernel file names and experiments.

The family decides which catalog entries are fundamental (split-KV for decode attention,
online softmax for attention, ...). It is inferred from words: CLAUDE.md and kernel paths
weigh most, experiment titles less. A family is only named when the words say so clearly;
``diagnose(family=...)`` overrides it.
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
            r"\bdecod(?:e|ing)\b[^.\n]{0,40}\b(?:attention|attn|kv[- ]?cache)\b|flash[- "
            r"]decoding|paged attention|\bkv[- ]?cache\b",
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
# A more specific family wins over its parent when both are supported.
_SPECIFIC = {"mla-decode": "decode-attention", "decode-attention": "attention"}


@attrs.frozen(kw_only=True)
class FamilyGuess:
    """The inferred family, its score, and the facts that named it."""

    family: str | None
    score: float
    facts: tuple[Fact, ...] = ()


def _weighted_facts(log: ExperimentLog) -> Iterable[tuple[Fact, float]]:
    for fact in log.project[:200]:
        yield fact, 3.0
    for source in log.kernels:
        yield Fact(text=source.path, source=SourceRef(path=source.path)), 3.0
    if log.kernel_path is not None:
        yield log.kernel_path, 3.0
    for experiment in log.experiments[-200:]:
        ref = experiment.source or SourceRef(path="")
        yield Fact(text=experiment.description, source=ref), 1.0


def infer_family(log: ExperimentLog) -> FamilyGuess:
    """Guess the kernel family of ``log``; ``family`` is None when no family is clear."""
    scores: dict[str, float] = {}
    facts: dict[str, list[Fact]] = {}
    for fact, weight in _weighted_facts(log):
        for family, pattern in _PATTERNS:
            if pattern.search(fact.text):
                scores[family] = scores.get(family, 0.0) + weight
                facts.setdefault(family, []).append(fact)
    if not scores:
        return FamilyGuess(family=None, score=0.0)
    # decode-attention evidence also counts for MLA decode when MLA is named.
    best = max(scores, key=lambda f: (scores[f], f))
    for specific, parent in _SPECIFIC.items():
        if specific in scores and best in (parent, "attention") and scores[specific] >= 3.0:
            best = specific
            break
    if scores[best] < 3.0:
        return FamilyGuess(family=None, score=scores[best], facts=tuple(facts[best][:3]))
    return FamilyGuess(family=best, score=scores[best], facts=tuple(facts[best][:3]))

"""Tagging experiments with catalog entries through their keywords."""

from __future__ import annotations

import attrs

from kernelopt.experiments import Tagger
from kernelopt.experiments.tagging import default_tagger


@attrs.frozen
class _Entry:
    id: str
    name: str
    keywords: tuple[str, ...]


ENTRIES = (
    _Entry(
        "split-kv-flash-decoding",
        "Split-KV Flash Decoding",
        ("split-kv", "num_splits", "flash decoding"),
    ),
    _Entry("split-kv-lse-combine", "Split-KV LSE Combine", ("lse combine",)),
    _Entry("cuda-graphs", "CUDA Graphs", ("cuda graph", "tc")),
)


def test_spellings_differing_in_separators_match() -> None:
    tagger = Tagger(ENTRIES)
    for text in (
        "try split-KV",
        "split kv with 16 splits",
        "SPLIT_KV on",
        "num_splits=16",
        "Flash-Decoding",
    ):
        assert tagger.tags(text) == ("split-kv-flash-decoding",), text
    assert tagger.tags("an LSE-combine kernel, then CUDA graphs") == (
        "split-kv-lse-combine",
        "cuda-graphs",
    )


def test_negation_short_phrases_and_order() -> None:
    tagger = Tagger(ENTRIES)
    assert tagger.tags("no split-KV yet") == ()
    assert tagger.tags("without cuda graphs") == ()
    assert tagger.tags("tc% is low") == ()  # two-letter keywords would tag everything
    assert tagger.tags("cuda graph, then split-kv") == ("cuda-graphs", "split-kv-flash-decoding")
    assert "split kv flash decoding" in tagger.phrases  # the entry name tags too


def test_default_tagger_uses_the_given_catalog() -> None:
    tagger, problem = default_tagger(ENTRIES)
    assert problem is None and tagger.tags("cuda graph") == ("cuda-graphs",)
    empty, problem = default_tagger(())
    assert problem is None and empty.tags("cuda graph") == ()

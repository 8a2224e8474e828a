"""Every real log of the corpus reads into what a person reading it would write down."""

from __future__ import annotations

from pathlib import Path

import pytest

from kernelopt.experiments import Correctness, ExperimentLog, Status, read_log

LOGS = (
    "gdn-decode-experiments",
    "gdn-prefill-devlog",
    "gemm-flipfloppers",
    "opencl-adreno",
    "triton-lora-optimus",
    "triton-transformer-agent",
)


def _read(corpus: Path, name: str, **kwargs: object) -> ExperimentLog:
    return read_log(corpus / name, **kwargs)  # type: ignore[arg-type]


def test_corpus_is_complete(corpus: Path) -> None:
    assert sorted(p.name for p in corpus.iterdir() if p.is_dir()) == sorted(LOGS)


@pytest.mark.parametrize("name", LOGS)
def test_every_log_loads_with_sources(corpus: Path, name: str) -> None:
    log = _read(corpus, name)
    assert log.experiments, name
    for experiment in log.experiments:
        assert experiment.sources, experiment.label
        for ref in experiment.refs.values():
            assert (corpus / name / ref.path).is_file()
            assert 0 <= ref.line <= len((corpus / name / ref.path).read_text().split("\n"))


def test_opencl_adreno(corpus: Path) -> None:
    log = _read(corpus, "opencl-adreno")
    by = {e.number: e for e in log.experiments}
    assert sorted(by) == [1, 5, 6, 7, 8, 9, 10]
    # Total_ms is the metric the log's NEW BEST claims follow. Exp 1's summary row (0.879)
    # stands alone: exp_1/result.md (0.714 at 320x240) and CONVERGENCE.md (0.718) agree.
    assert [by[n].latency for n in sorted(by)] == [0.714, 0.579, 0.724, 0.719, 0.603, 0.584, 0.569]
    assert {by[n].unit for n in by} == {"ms"}
    assert by[1].status is Status.BASELINE
    assert (by[5].correctness, by[5].status) == (Correctness.FAIL, Status.FAILED)
    assert by[6].status is by[7].status is Status.NEUTRAL
    assert by[8].status is by[9].status is by[10].status is Status.KEPT
    assert by[7].knobs == {"wg_size": "{32,64,128,256}"}
    assert "seed" in log.layouts and log.kernel_path is not None
    assert any(u.path == "solution/kernel/kernel.cl" for u in log.unread)  # named, not copied
    # "within 2x of the memory floor ... OR compute-bound": no bottleneck is stated.
    assert log.profile is not None and log.profile.bottleneck is None
    assert len(log.lessons) > 10


def test_gdn_prefill_devlog(corpus: Path) -> None:
    log = _read(corpus, "gdn-prefill-devlog")
    assert [s.kind for s in log.series] == ["devlog", "jsonl"]
    assert len(log.experiments) == 28 and len(log.series[1].experiments) == 48
    dates = [e.date[:10] for e in log.experiments]
    assert dates == sorted(dates) and dates[0] == "2026-04-15" and dates[-1] == "2026-04-22"
    by_title = {e.description: e for e in log.experiments}
    warp = by_title["Warp-Cooperative Sequential Kernel"]
    assert (warp.number, warp.latency, warp.status) == (26, 0.1969, Status.KEPT)
    assert by_title["L1 Broadcast in Sequential Kernel"].latency == 0.2098
    cache = by_title["(T, num_seqs) Cache for max_s_q"]
    assert (cache.correctness, cache.status) == (Correctness.FAIL, Status.FAILED)
    assert by_title["Gate Kernel First"].status is Status.NEUTRAL
    assert not by_title["Modal B200 Profiling Analysis"].attempted
    assert not next(e for e in log.experiments if e.description.startswith("Model C")).attempted
    texts = [r.text for r in log.recommendations]
    assert any(t.startswith("Hand-written CUDA chunked kernel") for t in texts)
    before = _read(corpus, "gdn-prefill-devlog", until=26)
    assert [e.number for e in before.experiments] == list(range(1, 26))
    # The NCU and Modal profiling entries are dated 04-21, after exp 7 (04-19): before exp 8
    # the log holds no profiling note, and the 04-22 entry's NCU line is cut before exp 26.
    assert _read(corpus, "gdn-prefill-devlog", until=8).profiling == ()
    assert all(f.source.line > 54 for f in before.profiling)


def test_gemm_flipfloppers(corpus: Path) -> None:
    log = _read(corpus, "gemm-flipfloppers")
    assert [e.number for e in log.experiments] == list(range(1, 18))
    by = {e.number: e for e in log.experiments}
    assert by[14].correctness is by[17].correctness is Correctness.FAIL
    assert by[5].correctness is Correctness.PASS  # "all PASS" after the gated accuracy issue
    assert not by[9].attempted  # G0.4 skipped
    # Steps 7, 8 and 11 state their gains in prose ("tiny 1.307→1.378x"); steps 5, 10 and 12
    # give the same regimes' speedups in tables. "padded" names no regime a table measures.
    prose = {n: {p.name: p.value for p in by[n].points} for n in (7, 8, 11)}
    assert prose == {
        7: {"tiny": 1.378, "default": 1.150, "large_batch": 1.255},
        8: {"tiny": 1.496, "default": 1.205, "long_seq": 2.193, "large_batch": 1.362},
        11: {"tiny": 2.585, "default": 1.392, "long_seq": 2.301},
    }
    causal = {p.name: p.value for p in by[13].points}
    assert causal == {"default_causal": 1.747, "causal_padded": 1.753}
    archives = [s for s in log.series if s.kind == "archive-json"]
    assert sorted(len(s.experiments) for s in archives) == [7, 7]


def test_triton_transformer_agent(corpus: Path) -> None:
    log = _read(corpus, "triton-transformer-agent")
    by = {e.number: e for e in log.experiments}
    assert sorted(by) == [0, 1, 2, 3, 4, 5, 6, 7, 18, 19, 20, 21, 22, 23]
    assert (by[0].status, by[0].speedup) == (Status.BASELINE, 0.8)
    assert [by[n].speedup for n in range(1, 8)] == [0.699, 1.001, 1.044, 1.038, 1.06, 1.072, 1.078]
    assert by[7].status is Status.REVERTED  # investigated, no change merged
    assert by[18].status is by[20].status is by[22].status is Status.REVERTED  # DISCARDED
    assert by[23].status is Status.KEPT and by[23].correctness is Correctness.PASS
    assert not by[19].attempted and not by[21].attempted  # hypotheses only
    assert all(e.correctness is not Correctness.FAIL for e in log.experiments)


def test_triton_lora_optimus(corpus: Path) -> None:
    log = _read(corpus, "triton-lora-optimus")
    labels = [e.label for e in log.experiments]
    assert labels[:5] == [
        "bridge-cache-p128",
        "strict-signature-p1",
        "field-policy-qkv",
        "triton-cached-field-v0",
        "triton-counter-expand-v1",
    ]
    assert labels[-1] == "cuda-event-timing-v11" and len(labels) == 13
    assert log.experiments[1].correctness is Correctness.FAIL
    # "`26 passed`" beside "still fails strict parity": the tally does not make it pass.
    policy = log.experiments[2]
    assert (policy.correctness, policy.status) == (Correctness.FAIL, Status.FAILED)
    assert log.experiments[0].correctness is Correctness.PASS  # "close but not exact"
    # The summary row and the file of the same id are one experiment.
    expand = log.experiments[4]
    assert {s.path for s in expand.sources} == {
        "experiments/summary.md",
        "experiments/triton-counter-expand-v1.md",
    }
    assert any("vLLM-owned custom operator" in r.text for r in log.recommendations)


def test_gdn_decode_experiments(corpus: Path) -> None:
    log = _read(corpus, "gdn-decode-experiments")
    primary = log.experiments
    assert [e.description for e in primary] == [
        "Tile-2 CTA reuse",
        "Warp-broadcast scalar path",
        "Precompute g/beta helper kernel",
        "CTA-shared q/k cache",
    ]
    # "Failed" in this table means slower, not wrong.
    assert [(e.latency, e.unit, e.status) for e in primary] == [
        (3.789, "us", Status.REVERTED),
        (4.15, "us", Status.REVERTED),
        (9.369, "us", Status.REVERTED),
        (3.779, "us", Status.REVERTED),
    ]
    assert all(e.correctness is Correctness.UNKNOWN for e in primary)
    tsv = next(s for s in log.series if s.kind == "tsv").experiments
    assert len(tsv) == 5
    assert [e.correctness for e in tsv if "98of100" in e.label] == [Correctness.FAIL]
    assert [e.status for e in tsv if "baseline" in e.label] == [Status.BASELINE]

"""Diagnoses of the real public logs: what a careful engineer reading each log would say.

- opencl-adreno: a converged, healthy run (3 dead ends then 3 kept wins; exp 5 is a driver
  bug logged as a dead end, one failure, not a wall): no pathology.
- gdn-prefill-devlog: a long plateau of reverted micro-changes (04-18…04-21, the max_s_q
  variants above all) before the 04-22 warp-cooperative redesign. Before the redesign
  (--until 26): local minimum and a repetition loop on max_s_q. On the full log the plateau is
  over (three kept structural gains); what remains is that a custom chunked kernel for
  medium sequences, recommended again and again, was never tried.
- gemm-flipfloppers: every regime improved; BF16 failed twice (steps 14, 17), not three in a
  row: no pathology.
- triton-transformer-agent: legacy steps 1–7 gained, agent steps 18–23 are tooling work or
  superseded before measurement: no pathology.
- triton-lora-optimus: no comparable headline across notes; each note recommends a vLLM
  custom op as the next production lever and none tries it: ignored prior research.
- gdn-decode-experiments: four attempts on the Kernel7 hotspots, all slower ("Failed" means
  slower there, not wrong): no wall, and four is under the plateau threshold.
"""

from __future__ import annotations

from pathlib import Path

from kernelopt.diagnose import Diagnosis, Pathology, diagnose

P = Pathology


def _diagnose(corpus: Path, name: str, **kwargs: object) -> Diagnosis:
    diagnosis = diagnose(corpus / name, **kwargs)  # type: ignore[arg-type]
    assert len(diagnosis.checks) == 9
    assert all("internal error" not in c.sentence for c in diagnosis.checks)
    return diagnosis


def _sentence(diagnosis: Diagnosis, pathology: Pathology) -> str:
    return next(c.sentence for c in diagnosis.checks if c.pathology is pathology)


def test_opencl_adreno_is_healthy(corpus: Path) -> None:
    diagnosis = _diagnose(corpus, "opencl-adreno")
    assert diagnosis.findings == ()
    assert "exp 5" in _sentence(diagnosis, P.CORRECTNESS_WALL)  # seen, and not called a wall
    assert diagnosis.summary.best.experiment == 10  # type: ignore[union-attr]


def test_gdn_prefill_plateau_is_detected_before_the_breakthrough(corpus: Path) -> None:
    before = _diagnose(corpus, "gdn-prefill-devlog", until=26)
    plateau = before.finding(P.LOCAL_MINIMUM)
    assert plateau is not None
    assert plateau.experiments[-1] == 25 and set(plateau.experiments) <= set(range(13, 26))
    assert len(plateau.experiments) >= 10
    loop = before.finding(P.REPETITION_LOOP)
    assert loop is not None and "max_s_q" in loop.summary
    assert {15, 16, 18, 19, 25} <= set(loop.experiments)
    assert before.summary.best.value == 0.2031  # type: ignore[union-attr]
    assert before.finding(P.CORRECTNESS_WALL) is None  # one correctness failure (exp 15)


def test_gdn_prefill_before_its_first_profile(corpus: Path) -> None:
    # Every profiler note of the devlog is in an entry dated 04-21 or later; exp 7 is 04-19.
    early = _diagnose(corpus, "gdn-prefill-devlog", until=8)
    blind = early.finding(P.WRONG_BOTTLENECK)
    assert blind is not None and blind.summary.startswith("No profiling data")
    assert "cuda-event-instrumentation" in {a.catalog_id for a in blind.actions}


def test_gdn_prefill_after_the_breakthrough(corpus: Path) -> None:
    after = _diagnose(corpus, "gdn-prefill-devlog")
    assert after.finding(P.LOCAL_MINIMUM) is None and after.finding(P.REPETITION_LOOP) is None
    ignored = after.finding(P.IGNORED_PRIOR_RESEARCH)
    assert ignored is not None and "chunked kernel" in ignored.summary
    assert after.summary.best.value == 0.186  # type: ignore[union-attr]
    assert [p.experiment for p in after.summary.trajectory][-3:] == [26, 27, 28]
    # More new bests than the header lists: it says it shows the latest.
    # The NCU entry of 04-21 states the bound: "Diagnosis: Kernel is latency-bound".
    bound = _sentence(after, P.WRONG_BOTTLENECK)
    assert bound.startswith("The kernel is latency-bound (logs/prefill/optimization_log.md:178)")
    count = len(after.summary.trajectory)
    assert count > 6 and f"New bests (the latest 6 of {count}): " in after.render_plan()


def test_gemm_flipfloppers_is_healthy(corpus: Path) -> None:
    diagnosis = _diagnose(corpus, "gemm-flipfloppers")
    assert diagnosis.findings == ()
    # G0.2 and G0.3 (steps 7, 8) state their new bests in prose: "tiny 1.307→1.378x".
    assert {7, 8} <= {p.experiment for p in diagnosis.summary.trajectory}
    assert "2 failures in the log (exp 14: '" in _sentence(diagnosis, P.CORRECTNESS_WALL)
    assert "'; exp 17: '" in _sentence(diagnosis, P.CORRECTNESS_WALL)


def test_triton_transformer_agent_is_healthy(corpus: Path) -> None:
    diagnosis = _diagnose(corpus, "triton-transformer-agent")
    assert diagnosis.findings == ()
    assert diagnosis.summary.best.experiment == 6  # type: ignore[union-attr]  # step 7 merged nothing


def test_triton_lora_optimus_ignores_its_own_recommendation(corpus: Path) -> None:
    diagnosis = _diagnose(corpus, "triton-lora-optimus")
    assert diagnosis.pathologies == (P.IGNORED_PRIOR_RESEARCH,)
    ignored = diagnosis.finding(P.IGNORED_PRIOR_RESEARCH)
    assert ignored is not None and "custom operator" in ignored.summary
    assert any(
        e.source.startswith("experiments/triton-counter-inplace-v3.md:") for e in ignored.evidence
    )
    # No note reports a number the others report, so there is no best to count from.
    loop = _sentence(diagnosis, P.REPETITION_LOOP)
    assert "No two experiments report the same metric at the same point" in loop
    assert "since the best last moved" not in loop


def test_gdn_decode_experiments_has_no_wall(corpus: Path) -> None:
    diagnosis = _diagnose(corpus, "gdn-decode-experiments")
    assert diagnosis.findings == ()
    assert "4 attempts" in _sentence(diagnosis, P.LOCAL_MINIMUM)
    # The other series the log holds are named, not silently left out.
    assert diagnosis.summary.other_series == (
        "gdn_prefill/benchmarks [tsv]: 5 experiments",
        "experiment.md [notes]: 1 experiment",
    )
    assert "Also read, not judged: gdn_prefill/benchmarks [tsv]" in diagnosis.render_plan()

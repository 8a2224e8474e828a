"""Step 7: LEARN, the profile hand-off, and the devlog: what the loop keeps for next time.

The loop's last step is mandatory whenever an iteration confirmed, refined or refuted
something: the measured verdicts of steps 4 to 6 become evidence in the knowledge base.
``kernelopt.workflow.learn`` decides what to write from the verdict:

    FAST  → an evidence row (Config | Before | After | Change) on the entry applied
    SLOW  → an anti-pattern derived from the entry (or a row on an existing one)
    SAME / UNCLEAR → nothing: a change inside the noise teaches nothing

Step 4 already recorded split-KV. This step records persistent buffers and CUDA graphs
(step 5) and tensor-descriptor tiles (step 6) from the rows in ``runs/bench.jsonl``, each
judged again from its raw samples, into the log's tree ``LOG/docs/knowledge``. Then the
profiler's hand-off for the best version, and the devlog's performance tables.

Run: ``python examples/mla_decode/07_learn.py [--log DIR] [--gpu|--cpu]``.
"""

from __future__ import annotations

import _steps

S = _steps.setup(7, __doc__ or "")

from kernelopt.bench import (
    BenchRow,
    Ceilings,
    Measurement,
    Roofline,
    TrialPoint,
    mla_decode_cost,
    profile_report,
    read_rows,
)
from kernelopt.catalog import Catalog, KnowledgeTree, SourceType, lint_tree
from kernelopt.diagnose import diagnose
from kernelopt.workflow import (
    PerfRow,
    learn,
    observe_rows,
    perf_rows_from_bench,
    read_performance,
    update_devlog,
)

rows = read_rows(S.bench_rows)
source = str(S.bench_rows.relative_to(S.log))
ceilings = S.ceilings()
print(f"   {len(rows)} benchmark rows in {source}")

# %% ------------------------------------------------------------------------------------
# LEARN from each A/B of steps 5 and 6: the row without the change, the row with it, the
# catalog entry the change applied. observe_rows judges the pair again from the raw samples
# kept in the rows (kernelopt.bench.judge on the paired samples; compare also had the
# baseline's second timing, so a borderline verdict can differ), then learn writes.
_steps.banner("LEARN")
changes = [
    ("triton_split_kv_alloc", "triton_split_kv_buffers", "buffer-persistence"),
    ("triton_split_kv_events", "triton_split_kv_graph", "cuda-graphs"),
    ("triton_split_kv", "triton_hopper", "block-pointers-tma"),
]


def point_of(row: BenchRow) -> TrialPoint:
    c = row.config
    return TrialPoint(b=int(c["b"]), s=int(c["s"]), t=int(c["t"]), extra={"h": int(c["h"])})


touched: set[str] = set()
for before_impl, after_impl, entry_id in changes:
    # One A/B per point: the last row of each side there (step 4 also wrote split-KV rows;
    # step 6's, written later, are the baseline of its own comparison with Hopper).
    points = {str(point_of(r)): point_of(r) for r in rows if r.impl == after_impl}
    for point in points.values():
        before = _steps.find_row(rows, before_impl, point)
        after = _steps.find_row(rows, after_impl, point)
        if before is None or after is None:
            continue
        observation = observe_rows(before, after, source=source)
        outcome = learn(
            observation,
            entry_id=entry_id,
            knowledge=S.knowledge,
            family="mla-decode",
            language="triton",
            kernel="mla_decode",
            allow_host_clock=not S.gpu,  # the CPU path's scratch tree, labelled (CPU)
        )
        if outcome.entry_id:
            touched.add(outcome.entry_id)
        where = f" → {outcome.path.relative_to(S.log)}" if outcome.path else ""
        verdict = observation.verdict.value
        print(f"   {entry_id} at {point}: {verdict} → {outcome.action.value}{where}")
if not S.gpu:
    print("   [CPU] No cuda-graphs rows: step 5 skips graphs without a GPU.")
    print("   [CPU] Verdicts compare interpreter speeds; this scratch log's tree says so (CPU).")

# %% ------------------------------------------------------------------------------------
# The tree after LEARN: the user's entries merged over the built-ins (a user entry with a
# built-in id overrides it), checked by lint, and its index regenerated from the entries.
_steps.banner(f"The knowledge tree {S.knowledge.relative_to(S.log)}")
tree = KnowledgeTree(S.knowledge)
tree.write_index()
merged = tree.catalog()
mine = sorted(
    p.relative_to(S.knowledge).as_posix() for p in S.knowledge.rglob("*.md") if p.name != "index.md"
)
builtin = len(Catalog.builtin())
written = f"{len(mine)} entr{'y' if len(mine) == 1 else 'ies'} written here"
print(f"   {written}; {len(merged)} merged with the {builtin} built-in ones")
for name in mine:
    print(f"     {name}")
errors = [p for p in lint_tree(S.knowledge) if p.is_error]
print(f"   lint: {len(errors)} errors")
assert not errors, errors

for entry_id in sorted(touched | {"split-kv-flash-decoding"}):
    if entry_id not in merged:
        continue
    entry = merged.get(entry_id)
    local = [e for e in entry.evidence if e.source_type is SourceType.LOCAL_EXPERIMENT]
    if not local:
        continue
    print(f"\n   # {entry.name} ({entry.kind.value}) — local evidence:")
    for block in local:
        print(f"     Source: {block.source}")
        for row in block.rows:
            print(f"     | {row.config} | {row.before} | {row.after} | {row.change} |")
        if block.notes:
            print(f"     {_steps.clip(block.notes.splitlines()[0], 160)}")

print("\n   index.md (regenerated):")
for line in (S.knowledge / "index.md").read_text(encoding="utf-8").splitlines():
    print(f"     {_steps.clip(line, 160)}")

# %% ------------------------------------------------------------------------------------
# PROFILE hand-off (Profiler → Orchestrator) for the fastest Triton version at the first
# trial point, against the torch eager baseline: roofline, bottleneck, the catalog's
# opportunities for its metrics. It is kept as experiments/profile.md, the log's profile.
_steps.banner("Profile hand-off")
point = S.points()[0]
if ceilings is not None:
    contenders = ("triton_naive", "triton_split_kv", "triton_split_kv_buffers", "triton_hopper")
    latest = [_steps.find_row(rows, impl, point) for impl in contenders]
    candidates = [r for r in latest if r is not None]
    best = min(candidates, key=lambda r: r.median)
    eager = _steps.find_row(rows, "torch_eager", point)
    cost = mla_decode_cost(b=point.b, s_q=point.s, h_q=point.extra["h"], seqlens=point.t)
    report = profile_report(
        kernel="mla_decode",
        version=best.impl.removeprefix("triton_"),
        point=point,
        measurement=Measurement(samples=best.samples, gpu=best.gpu),
        baseline=None if eager is None else Measurement(samples=eager.samples, gpu=eager.gpu),
        roofline=Roofline(ceilings=ceilings, cost=cost),
        extra_metrics={k: v for k, v in best.metrics.items() if k in ("kv_splits", "waves")},
        catalog=merged,
    )
else:
    # No ceilings on the CPU: this run cannot be placed on a roofline. The hand-off below
    # shows the form with this project's H200 measurements instead (shared/anchors/
    # h200-2026-12-02.json: a peer split-KV Triton kernel, 8 splits, at b=32 s=1 t=4096
    # h=16: 74.18 us with CUDA events, 66.53 us in a CUDA graph; torch eager 116.4 us).
    print("   [CPU] No ceilings here, so no profile of this run. The form, from the H200 anchors:")
    point = TrialPoint(b=32, s=1, t=4096, extra={"h": 16})
    h200 = Ceilings(
        gpu="NVIDIA H200",
        copy_bytes_per_s=_steps.H200_COPY_BYTES_PER_S,
        matmul_flop_per_s=_steps.H200_MATMUL_FLOP_PER_S,
        source=_steps.H200_SOURCE,
    )
    report = profile_report(
        kernel="mla_decode (peer Triton, H200 anchors)",
        version="splits8",
        point=point,
        measurement=Measurement(samples=[74.18] * 5),
        graph=Measurement(samples=[66.53] * 5, mode="graph"),
        baseline=Measurement(samples=[116.4] * 5),
        roofline=Roofline(ceilings=h200, cost=mla_decode_cost(b=32, s_q=1, h_q=16, seqlens=4096)),
        catalog=merged,
    )
text = report.render()
print(text)
if ceilings is not None:
    (S.experiments / "profile.md").write_text(text, encoding="utf-8")
    print("   wrote experiments/profile.md")

# %% ------------------------------------------------------------------------------------
# The devlog (docs/kernels/mla_decode.md): one table per version, one row per trial point;
# the profiler updates it after every profile, ANALYZE reads it first. Rows written again
# for the same version and point replace the old ones; nothing else in the file changes.
_steps.banner(f"Devlog {S.devlog.relative_to(S.log)}")
if not S.devlog.exists():
    S.devlog.parent.mkdir(parents=True, exist_ok=True)
    S.devlog.write_text(
        "# mla_decode\n\nAbsorbed MLA decode over a paged latent cache (see CLAUDE.md).\n\n"
        "## Design\n\nnaive → split-KV with an LSE merge → Hopper tiles; persistent out/lse.\n",
        encoding="utf-8",
    )
versions = (
    "torch_eager",
    "triton_naive",
    "triton_split_kv",
    "triton_hopper",
    "triton_split_kv_graph",
)


def devlog_rows(
    bench: list[BenchRow], versions: tuple[str, ...], ceilings: Ceilings | None
) -> list[PerfRow]:
    """The devlog rows of ``versions``: the last of each version, point and GPU.

    Steps 2 and 4 both timed some versions at the same points, and a later row replaces an
    earlier one of the same version, point and GPU: written all at once, a new devlog would
    report rows "replaced" that were never in it. The dict keeps each key where it first
    came and the row it last got: the rows, in the order, that the devlog would end with.
    """
    made = perf_rows_from_bench([r for r in bench if r.impl in versions], ceilings=ceilings)
    return list({perf.key: perf for perf in made}.values())


update = update_devlog(S.devlog, devlog_rows(rows, versions, ceilings))
print(f"   {_steps.devlog_update_words(update)}")
text = S.devlog.read_text(encoding="utf-8")
print(text[text.index("## Performance") :])
if not S.gpu:
    print(
        "   [CPU] Times are interpreter times; TFLOP/s, GB/s and Of floor read '-': nothing "
        "was placed on a roofline."
    )
best_by_point: dict[str, tuple[float, str]] = {}
for perf in read_performance(S.devlog):
    if perf.point not in best_by_point or perf.time < best_by_point[perf.point][0]:
        best_by_point[perf.point] = (perf.time, perf.version)
for where, (time, version) in sorted(best_by_point.items()):
    print(f"   ANALYZE next round: best at {where}: {version} {time:.4g} us")

# %% ------------------------------------------------------------------------------------
# And round again: a clean-context diagnosis of the log as it stands now.
_steps.banner("Diagnosis of the log now")
diagnosis = diagnose(S.log, catalog=S.knowledge)
for check in diagnosis.checks:
    mark = "x" if check.checked else " "
    print(f"   [{mark}] {check.pathology.value}: {_steps.clip(check.sentence, 140)}")

_steps.finish(S)  # last: later steps build on this log from here on

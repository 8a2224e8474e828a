"""Step 3: a clean-context diagnosis of the log so far, and the plan it leads to.

``kernelopt.diagnose`` reads only what is on disk (CLAUDE.md, the kernel source, the
experiment folders, the profiles, the workload profile), never imports or runs the
kernel, and answers the nine items of the plateau checklist. Here, two experiments in,
the log is too short for a plateau; what it can already show is a *missing fundamental*:
a technique the catalog marks as standard for decode attention that no experiment tried
and the kernel source does not contain. For this kernel that is split-KV
(flash-decoding): with b = 32 sequences and one latent KV head, the naive kernel starts
32 programs per row tile on a GPU with 132 multiprocessors, and each walks 4096 keys alone.

The diagnosis is kept as ``experiments/diagnosis.md``; the change chosen from it becomes
the task of the next experiment, ``experiments/exp_3/plan.md`` (step 4 carries it out).
Later diagnoses recognise that file as kernelopt's own plan: its checklist is neither
profiling data nor advice the next experiments could ignore (an action still open is
found again by the check that made it).

Run: ``python examples/mla_decode/03_diagnose.py [--log DIR] [--gpu|--cpu]``.
The same diagnosis from the shell, right after this step (``--until 3`` leaves out the
plan of experiment 3 that this step writes):
``kernelopt diagnose LOG --until 3 --write-plan LOG/experiments/diagnosis.md``.
"""

from __future__ import annotations

import _steps

S = _steps.setup(3, __doc__ or "")

from kernelopt.catalog import Catalog
from kernelopt.diagnose import Pathology, diagnose, entry_links, render_plan
from kernelopt.experiments import experiment_dir, write_plan
from kernelopt.workflow import Change, Constraints, OptimizationTask

FUNDAMENTAL = "split-kv-flash-decoding"
POINTS = S.points()

# %% ------------------------------------------------------------------------------------
# Diagnose the log as it stood before experiment 3 (until=3 reads nothing numbered 3 or
# later: on this first pass it cuts nothing, and a diagnosis of a longer log with the same
# cut judges these two experiments alone, though against kernels/mla_decode.py as it
# stands then, which a kept version replaces). The family (mla-decode) comes from CLAUDE.md;
# the kernel is the file the log names, kernels/mla_decode.py; experiments are tagged with
# the catalog entries their titles and tags name.
_steps.banner("The nine checks")
diagnosis = diagnose(S.log, until=_steps.EXP_SPLIT_KV)
summary = diagnosis.summary
print(
    f"   family {summary.family} (from {summary.family_source}); kernel {summary.kernel}; "
    f"{summary.experiments} experiments read"
)
if summary.best is not None:
    best = summary.best
    print(f"   best so far: {best.value:g} {best.unit} (exp {best.experiment})")
    if not S.gpu:
        print(
            "   [CPU] The log's times are host timings (torch eager on the CPU, the Triton "
            "interpreter on tiny shapes): they say nothing about a GPU, and the checks below "
            "do not count them as profiling data."
        )
for check in diagnosis.checks:
    mark = "x" if check.checked else " "
    print(f"   [{mark}] {check.pathology.value}: {_steps.clip(check.sentence, 150)}")

# %% ------------------------------------------------------------------------------------
# The missing fundamental, with its evidence and the catalog entries it links. A finding
# carries where every claim comes from (file:line), so the plan can be checked by hand.
_steps.banner("Missing fundamental")
finding = diagnosis.finding(Pathology.MISSING_FUNDAMENTAL)
if finding is None:
    raise SystemExit(
        "Expected the diagnosis to name a missing fundamental on this log, got none: "
        + next(c.sentence for c in diagnosis.checks if c.pathology is Pathology.MISSING_FUNDAMENTAL)
    )
print(f"   {finding.summary}")
print(f"   severity {finding.severity.value}, confidence {finding.confidence:.2f}")
for evidence in finding.evidence:
    print(
        f"   evidence: {_steps.clip(evidence.quote, 100)}"
        + (f"  ({evidence.source})" if evidence.source else "")
    )
named = [entry for action in finding.actions for entry in action.catalog_ids]
print(f"   actions link: {', '.join(str(n) for n in named)}")
if FUNDAMENTAL not in named:
    raise SystemExit(f"Expected the finding to name {FUNDAMENTAL}, got {named}")

# %% ------------------------------------------------------------------------------------
# The catalog entry the action links (kernelopt/catalog/knowledge/optimizations/
# split-kv-flash-decoding.md; `kernelopt catalog show split-kv-flash-decoding`): when it
# applies, why it works, how to write it, the evidence behind it, how it interacts.
_steps.banner(f"The catalog entry: {FUNDAMENTAL}")
catalog = Catalog.builtin()
entry = catalog.get(FUNDAMENTAL)
print(f"   # {entry.name}  ({entry.kind.value}, {entry.scope}; file {entry.relative_path})")
print("   When to apply:")
for context in entry.contexts:
    print(f"     - {context}")
for condition in (*entry.triggers, *entry.shape_conditions):
    print(f"     - when `{condition}`")
print("   Mechanism:", _steps.clip(entry.mechanism.split("\n\n")[0], 400))
print("   Implementation:")
for line in entry.implementation.strip().splitlines()[:14]:
    print(f"     {line}")
for block in entry.evidence:
    print(f"   Evidence ({block.source_type.value}, {block.source}):")
    for row in block.rows:
        print(f"     {row.config} | {row.before} → {row.after} | {row.change}")
print("   Pitfalls:", *(f"\n     - {p}" for p in entry.pitfalls))
print("   Interactions:", ", ".join(f"{i.target} ({i.relation.value})" for i in entry.interactions))

# %% ------------------------------------------------------------------------------------
# Keep the diagnosis on disk (experiments/diagnosis.md, in the seed's plan form: the nine
# checks answered, the most likely root cause, actions linking catalog entries, evidence,
# missing data), then choose what the next experiment does. Its plan.md states that one
# change, as the orchestrator's task for the designer: a reader of the log (and the next
# diagnosis) sees exactly what experiment 3 set out to try, and that the rest of the
# diagnosis's actions are still open.
# Its links to the entries resolve from where the file lies, as `kernelopt diagnose
# --write-plan` writes them.
diagnosis_path = S.experiments / "diagnosis.md"
links = entry_links(diagnosis, diagnosis_path)
diagnosis_path.write_text(render_plan(diagnosis, links=links), encoding="utf-8")
_steps.banner(f"Diagnosis written to {diagnosis_path.relative_to(S.log)}; its actions:")
for found in diagnosis.findings:  # ranked: severity, then cause before symptom
    for action in found.actions:
        text = _steps.clip(action.text, 110)
        ids = f" ({', '.join(action.catalog_ids)})" if action.catalog_ids else ""
        print(f"   - [{found.pathology.value}] {text}{ids}")

# The plan's links lead from its own folder to the entries' files, as a markdown file reads them.
plan_path = experiment_dir(S.experiments, _steps.EXP_SPLIT_KV) / "plan.md"
task = OptimizationTask(
    kernel="mla_decode",
    current="naive",
    new_version="split_kv",
    bottleneck=f"missing fundamental ({diagnosis_path.relative_to(S.log)}): {entry.name}",
    optimizations=[
        Change.of(
            entry,
            "cut each sequence's keys into pieces (a wave model picks how many) and run one "
            "program per (row tile, piece)",
            rationale=f"b={POINTS[0].b} sequences give too few programs to fill the GPU",
            relative_to=plan_path,
        ),
        Change.of(
            catalog.get("split-kv-lse-combine"),
            "merge the pieces' fp32 partial outputs by their base-2 LSEs",
            rationale="the merged result is the exact softmax over all keys",
            relative_to=plan_path,
        ),
    ],
    constraints=Constraints(language="triton", other=("keep MLADecodePlan's plan/run interface",)),
)
task.validate(catalog)  # every linked entry exists, every link matches its file
path = write_plan(S.experiments, _steps.EXP_SPLIT_KV, task.render(), overwrite=True)
_steps.banner(f"The task of experiment {_steps.EXP_SPLIT_KV}, written to {path.relative_to(S.log)}")
print(task.render().rstrip())

_steps.finish(S)  # last: later steps build on this log from here on

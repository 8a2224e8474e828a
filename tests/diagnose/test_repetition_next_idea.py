"""A repetition loop's plan names a step to take, not only one to stop.

Where the plan has no missing-fundamental or prior-research item to take the next idea
from, the loop's own actions name the catalog's first pick for the kernel's family that no
experiment tried, with its id, instead of stopping at "Stop iterating on X".
"""

from __future__ import annotations

from kernelopt.catalog import Catalog
from kernelopt.diagnose import Pathology
from kernelopt.diagnose.engine import diagnose_log
from kernelopt.experiments.records import Status

from .conftest import exp, log_of

P = Pathology


def _loop_log():  # type: ignore[no-untyped-def]
    experiments = [
        exp(1, 100.0, status=Status.BASELINE, description="torch baseline"),
        exp(2, 50.0, description="fused norm kernel", tags=("kernel-fusion",)),
        *(
            exp(
                n,
                49.8,
                status=Status.REVERTED,
                description=f"eviction hint v{n}",
                tags=("l2-eviction-hints",),
                metrics={"dram_pct": 50.0},
            )
            for n in (3, 4, 5, 6)
        ),
    ]
    return log_of(experiments)


def test_a_loop_without_idea_items_names_the_catalogs_next_pick() -> None:
    catalog = Catalog.builtin()
    diagnosis = diagnose_log(_loop_log(), family="normalization", catalog=catalog)
    loop = diagnosis.finding(P.REPETITION_LOOP)
    assert loop is not None
    assert diagnosis.finding(P.MISSING_FUNDAMENTAL) is None
    assert loop.actions[0].text.startswith("Stop iterating on")
    picked = loop.actions[-1]
    tried = {"kernel-fusion", "l2-eviction-hints"}
    first = next(
        m.entry.id
        for m in catalog.query(family="normalization", kind="optimization")
        if m.entry.id not in tried and set(m.entry.families) != {"any"}
    )
    assert picked.catalog_id == first
    assert picked.text.startswith(f"Try {catalog.get(first).name} next: the catalog's first pick")
    assert "Take the next idea" not in " ".join(a.text for a in loop.actions)


def test_the_pick_is_the_familys_own_and_fits_the_recorded_calls() -> None:
    # The MLA decode log has tried or shows every decode-attention entry; causal tile
    # skipping (s_q >= 128) fails at every recorded call (s_q of 1 or 16), and an entry for
    # every kernel (tl.dot input precision for fp32 operands) says nothing of this one.
    from pathlib import Path

    from kernelopt.diagnose import diagnose

    root = Path(__file__).resolve().parents[2] / "docs" / "kernels" / "mla_decode"
    loop = diagnose(root).finding(P.REPETITION_LOOP)
    assert loop is not None
    picked = {a.catalog_id for a in loop.actions}
    assert not picked & {"causal-tile-skipping", "dot-input-precision"}

"""Item 4 under ``until``: a bound stated in a devlog entry counts when the entry stood."""

from __future__ import annotations

from pathlib import Path

from kernelopt.diagnose import Pathology, diagnose

_ENTRY = """## {date} - {title} ({status})

{body}- **Result**: avg **{ms}ms**
- **Status**: {status}

"""
_BOUND = "- **Diagnosis**: NCU shows the kernel is **latency-bound** at 6.2% achieved occupancy.\n"


def _devlog(root: Path, bound_in: int) -> Path:
    """Five entries, oldest first; entry ``bound_in`` holds the NCU note that names the bound."""
    entries = [
        _ENTRY.format(
            date=f"2026-04-1{n}",
            title=f"variant {n}",
            status="ACCEPTED" if n == 1 else "REVERTED",
            body=_BOUND if n == bound_in else "",
            ms=f"0.2{n}00",
        )
        for n in range(1, 6)
    ]
    path = root / "logs" / "optimization_log.md"
    path.parent.mkdir(parents=True)
    path.write_text("# Optimization Log\n\n" + "".join(entries), encoding="utf-8")
    return root


def _bound(root: Path, until: int | None) -> str:
    diagnosis = diagnose(root, until=until)
    return next(c.sentence for c in diagnosis.checks if c.pathology is Pathology.WRONG_BOTTLENECK)


def test_a_bound_stated_before_the_cut_is_the_kernels_bound(tmp_path: Path) -> None:
    root = _devlog(tmp_path, bound_in=2)
    for until in (None, 3, 5):
        assert _bound(root, until).startswith("The kernel is latency-bound ("), until


def test_a_bound_stated_after_the_cut_is_not_known_then(tmp_path: Path) -> None:
    root = _devlog(tmp_path, bound_in=4)
    assert _bound(root, None).startswith("The kernel is latency-bound (")
    assert "chosen blind" in _bound(root, 3)  # the NCU entry is exp 4: no profile before it

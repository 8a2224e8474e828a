"""Item 8 on a kernel source that holds kernels only.

A snapshot of the ``@triton.jit`` function alone (a log that kept the kernel, not the
script that launched it) says nothing of what the caller allocates on every call: the item
says it could not check, and names the launcher as the data it missed.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kernelopt.catalog import Catalog
from kernelopt.diagnose import Pathology, diagnose, diagnose_log
from kernelopt.diagnose.source import device_only
from kernelopt.experiments import KernelSource

from .conftest import FakeCatalog, FakeEntry, exp, kernel, log_of

P = Pathology
REPO = Path(__file__).resolve().parents[2]
MLA_LOG = REPO / "docs" / "kernels" / "mla_decode"

KERNEL_ONLY = '''"""v2: the kernel; the timing script is not in the log."""
import triton
import triton.language as tl

LOG2E = 1.4426950408889634
BLOCK: tl.constexpr = 64


@triton.jit
def _fwd(Q, O, n, BLOCK_N: tl.constexpr):
    offs = tl.arange(0, BLOCK_N)
    tl.store(O + offs, tl.load(Q + offs) * LOG2E)
'''
# The same kernel with a launcher that allocates nothing itself.
WITH_LAUNCHER = (
    KERNEL_ONLY
    + """

def launch(q, dst):
    _fwd[(1,)](q, dst, q.numel(), BLOCK_N=64)
"""
)
# ... and with one that allocates its output on every call.
ALLOCATING = (
    KERNEL_ONLY
    + """

def launch(q):
    o = torch.empty_like(q)
    _fwd[(1,)](q, o, q.numel(), BLOCK_N=64)
    return o
"""
)


def _item8(text: str, catalog: Catalog) -> tuple[str, tuple[str, ...], bool]:
    log = log_of([exp(1, 10.0), exp(2, 9.0)], kernels=(kernel(text),))
    diagnosis = diagnose_log(log, catalog=catalog)
    check = next(c for c in diagnosis.checks if c.pathology is P.BUFFER_PERSISTENCE)
    return check.sentence, check.missing, check.checked


def test_a_kernel_only_source_is_not_called_clean(catalog: Catalog) -> None:
    sentence, missing, checked = _item8(KERNEL_ONLY, catalog)
    assert not checked
    assert sentence == (
        "The kernel source read (kernels/k.py) holds kernels only, no host code that launches "
        "them, so its per-call allocations could not be checked."
    )
    assert any("host launcher" in m for m in missing)
    # A launcher that allocates nothing is host code that was checked and found clean.
    sentence, missing, checked = _item8(WITH_LAUNCHER, catalog)
    assert not checked
    assert sentence == "No per-call allocation shows in the host code of kernels/k.py."
    assert missing == ()
    # One that allocates every call is the finding, as before.
    assert _item8(ALLOCATING, catalog)[2]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (KERNEL_ONLY, True),
        (WITH_LAUNCHER, False),
        (KERNEL_ONLY + "\nout = torch.empty(4)\n", False),  # runs at import
        (KERNEL_ONLY + "\nclass Plan:\n    pass\n", False),
        (KERNEL_ONLY + "\n_fwd[(1,)](q, o, 4, BLOCK_N=64)\n", False),  # a script's launch
        ("def broken(:\n", False),  # does not parse: may hold anything
        # A CuTe DSL launcher is decorated too, and launches.
        (
            "import cutlass.cute as cute\n\n@cute.kernel\ndef k(x):\n    pass\n\n"
            "@cute.jit\ndef run(x):\n    k(x).launch(grid=[1, 1, 1], block=[128, 1, 1])\n",
            False,
        ),
    ],
)
def test_what_holds_kernels_only(text: str, expected: bool) -> None:
    assert device_only([kernel(text)]) is expected


def test_device_only_needs_python_sources() -> None:
    text = "__global__ void k(float* o) { o[0] = 1.0f; }\n"
    cuda = KernelSource(path="k.cu", text=text, language="cuda", role="kernel")
    assert device_only([cuda]) is False  # a CUDA file may hold its launcher
    assert device_only([]) is False


def test_item5_leaves_buffer_persistence_open_on_kernels_alone() -> None:
    # Buffer persistence is a launcher's technique: kernels alone neither show it nor its
    # absence, so items 5 and 8 agree that the launcher is what is missing.
    catalog = FakeCatalog(
        [
            FakeEntry(
                "buffer-persistence", "Persistent buffers", ("persistent buffers",), ("any",)
            ),
            FakeEntry("split-kv-flash-decoding", "Split-KV", ("num_splits",), ("any",)),
        ]
    )

    def item5(text: str) -> tuple[bool, str, tuple[str, ...], object]:
        log = log_of([exp(1, 10.0), exp(2, 9.0)], kernels=(kernel(text),))
        diagnosis = diagnose_log(log, catalog=catalog, family="gemm")  # type: ignore[arg-type]
        check = next(c for c in diagnosis.checks if c.pathology is P.MISSING_FUNDAMENTAL)
        return (
            check.checked,
            check.sentence,
            check.missing,
            diagnosis.finding(P.MISSING_FUNDAMENTAL),
        )

    checked, sentence, missing, finding = item5(KERNEL_ONLY)
    assert checked and finding is not None
    assert "Split-KV (split-kv-flash-decoding) is standard" in sentence
    assert "Persistent buffers" not in sentence
    assert "buffer-persistence could not be checked" in sentence
    assert any("host launcher" in m for m in missing)
    # With the launcher in the log, a launcher that allocates every call lacks it.
    checked, sentence, missing, finding = item5(ALLOCATING)
    assert checked and "Persistent buffers (buffer-persistence)" in sentence
    assert "could not be checked" not in sentence and not any("host" in m for m in missing)


def test_the_mla_log_before_its_package_kernel_names_the_missing_launcher() -> None:
    # Until exp 4 moved the kernel into the package, the log's kernel is exp 2's snapshot:
    # the Triton kernel alone, launched by a timing script the log did not keep.
    diagnosis = diagnose(MLA_LOG, until=3)
    check = next(c for c in diagnosis.checks if c.pathology is P.BUFFER_PERSISTENCE)
    assert check.sentence.startswith("The kernel source read (experiments/exp_2/v2.py) holds")
    assert "could not be checked" in check.sentence
    # Item 5 no longer calls buffer persistence missing on that evidence.
    assert diagnosis.finding(P.MISSING_FUNDAMENTAL) is None
    item5 = next(c for c in diagnosis.checks if c.pathology is P.MISSING_FUNDAMENTAL)
    assert "buffer-persistence could not be checked" in item5.sentence

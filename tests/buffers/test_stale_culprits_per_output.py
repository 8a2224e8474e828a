"""check_no_stale_reads names, for each output that changed, the buffers behind that output.

A launcher with several outputs, each reduced from its own persistent workspace (the
partial sums of a split reduction), was reported with every stale buffer against every
output: the second output was said to read the first output's partial sums.
"""

from __future__ import annotations

import pytest
import torch

from kernelopt._errors import KernelOptError
from kernelopt.buffers import BufferPool, BufferScope, check_no_stale_reads, persistent_buffers

GROUP_ROWS = 2


def inputs(i: int) -> tuple[torch.Tensor]:
    generator = torch.Generator().manual_seed(i)
    return (torch.randn(6, 5, generator=generator),)


def _groups(x: torch.Tensor) -> int:
    return -(-x.shape[0] // GROUP_ROWS)


@persistent_buffers(pool=BufferPool())
def split_sums(
    buffers: BufferScope, x: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Row-wise output, then two column reductions through one partial buffer each.

    Bug: the partial buffers hold one group more than the first pass writes, and the
    second pass sums all of them, so each reduced output reads one stale row of its own
    partial buffer, and only of its own.
    """
    groups = _groups(x)
    partial_sum = buffers.empty("partial_sum", (groups + 1, x.shape[1]), x.dtype, x.device)
    partial_sq = buffers.empty("partial_sq", (groups + 1, x.shape[1]), x.dtype, x.device)
    for g in range(groups):
        rows = x[g * GROUP_ROWS : (g + 1) * GROUP_ROWS]
        partial_sum[g] = rows.sum(dim=0)
        partial_sq[g] = (rows * rows).sum(dim=0)
    return x * 2.0, partial_sum.sum(dim=0), partial_sq.sum(dim=0)


def _label(name: str, x: torch.Tensor) -> str:
    return f"{name} ({_groups(x) + 1}, {x.shape[1]}) torch.float32"


def test_each_reduced_output_names_only_its_own_partial_buffer() -> None:
    report = check_no_stale_reads(split_sums, inputs, calls=2, strict=False)
    x = inputs(0)[0]
    assert [(s.call, s.output, s.culprits) for s in report.stale] == [
        (0, "result[1]", (_label("partial_sum", x),)),
        (0, "result[2]", (_label("partial_sq", x),)),
        (1, "result[1]", (_label("partial_sum", x),)),
        (1, "result[2]", (_label("partial_sq", x),)),
    ]


def test_the_message_keeps_its_shape_with_one_culprit_per_output() -> None:
    with pytest.raises(KernelOptError) as raised:
        check_no_stale_reads(split_sums, inputs, calls=1)
    x = inputs(0)[0]
    assert str(raised.value) == (
        "Expected results unchanged when the persistent buffers hold poison between calls, "
        f"got call 0: result[1] differs at 5/5 elements; stale buffer: {_label('partial_sum', x)}"
        f"; call 0: result[2] differs at 5/5 elements; stale buffer: {_label('partial_sq', x)}"
    )


def test_an_output_that_reads_two_stale_buffers_names_both_and_the_others_one() -> None:
    @persistent_buffers(pool=BufferPool())
    def sums_and_total(
        buffers: BufferScope, x: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        first = buffers.empty("first", (x.shape[1] + 1,), x.dtype, x.device)
        second = buffers.empty("second", (x.shape[1] + 1,), x.dtype, x.device)
        first[:-1] = x.sum(dim=0)  # bug: the last element of each is never written
        second[:-1] = x.amax(dim=0)
        return first.sum(), second.sum(), first.sum() + second.sum()

    report = check_no_stale_reads(sums_and_total, inputs, calls=1, strict=False)
    assert {s.output: s.culprits for s in report.stale} == {
        "result[0]": ("first (6,) torch.float32",),
        "result[1]": ("second (6,) torch.float32",),
        "result[2]": ("first (6,) torch.float32", "second (6,) torch.float32"),
    }


def test_outputs_in_a_dict_are_blamed_by_key() -> None:
    @persistent_buffers(pool=BufferPool())
    def stats(buffers: BufferScope, x: torch.Tensor) -> dict[str, torch.Tensor]:
        total = buffers.empty("total", (x.shape[1],), x.dtype, x.device)
        peak = buffers.empty("peak", (x.shape[1],), x.dtype, x.device)
        total += x.sum(dim=0)  # bug: accumulates into what the buffer held
        torch.maximum(peak, x.amax(dim=0), out=peak)  # bug: the same
        return {"total": total.clone(), "peak": peak.clone()}

    report = check_no_stale_reads(stats, inputs, calls=1, strict=False)
    assert {s.output: s.culprits for s in report.stale} == {
        "result['total']": ("total (5,) torch.float32",),
        "result['peak']": ("peak (5,) torch.float32",),
    }


def test_an_output_only_several_buffers_together_change_names_no_single_buffer() -> None:
    @persistent_buffers(pool=BufferPool())
    def both_unset(buffers: BufferScope, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        left = buffers.empty("left", (x.shape[1],), x.dtype, x.device)  # bug: never written
        right = buffers.empty("right", (x.shape[1],), x.dtype, x.device)  # bug: never written
        unset = torch.isnan(left) & torch.isnan(right)  # NaN in both only when both poisoned
        return x.sum(dim=0), torch.where(unset, 1.0, 0.0)

    report = check_no_stale_reads(both_unset, inputs, calls=1, strict=False)
    (stale,) = report.stale
    assert (stale.output, stale.culprits) == ("result[1]", ())
    assert stale.describe().endswith("stale buffer: no single buffer")

"""check_no_stale_reads: correct launchers pass; launchers that read old contents are named."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from kernelopt._errors import InputError, KernelOptError
from kernelopt.buffers import (
    BufferPool,
    BufferScope,
    StaleRead,
    check_no_stale_reads,
    persistent_buffers,
    poison_,
)

F32 = torch.float32


def inputs(i: int) -> tuple[torch.Tensor]:
    generator = torch.Generator().manual_seed(i)
    return (torch.randn(4, 6, generator=generator),)


@persistent_buffers(pool=BufferPool())
def row_softmax(buffers: BufferScope, x: torch.Tensor) -> torch.Tensor:
    """Correct: every buffer is fully written before it is read."""
    row_max = buffers.empty("row_max", (x.shape[0], 1), x.dtype, x.device)
    total = buffers.empty("total", (x.shape[0], 1), x.dtype, x.device)
    out = buffers.resolve_out(None, x.shape, x.dtype, x.device)
    torch.amax(x, dim=1, keepdim=True, out=row_max)
    torch.exp(x - row_max, out=out)
    torch.sum(out, dim=1, keepdim=True, out=total)
    return out.div_(total)


@persistent_buffers(pool=BufferPool())
def leaky_sum(buffers: BufferScope, x: torch.Tensor) -> torch.Tensor:
    """Bug: the accumulator carries the previous call's total."""
    row_max = buffers.empty("row_max", (x.shape[0],), x.dtype, x.device)
    acc = buffers.empty("acc", (x.shape[0],), x.dtype, x.device)
    torch.amax(x, dim=1, out=row_max)
    acc += x.sum(dim=1) - row_max
    return acc.clone()


def test_a_correct_launcher_passes_and_lists_what_was_poisoned() -> None:
    report = check_no_stale_reads(row_softmax, inputs, calls=3)
    assert report.ok and report.calls == 3 and report.stale == ()
    assert set(report.buffers) == {
        "row_max (4, 1) torch.float32",
        "total (4, 1) torch.float32",
        "out (4, 6) torch.float32",
    }
    torch.testing.assert_close(row_softmax(inputs(9)[0]), torch.softmax(inputs(9)[0], dim=1))


def test_an_unreset_accumulator_is_caught_and_named() -> None:
    with pytest.raises(KernelOptError) as raised:
        check_no_stale_reads(leaky_sum, inputs)
    message = str(raised.value)
    assert message.startswith(
        "Expected results unchanged when the persistent buffers hold poison between calls, got"
    )
    assert "call 0: result differs at 4/4 elements; stale buffer: acc (4,) torch.float32" in (
        message
    )
    assert "row_max" not in message.split("stale buffer:")[1]


def test_the_report_without_strict() -> None:
    report = check_no_stale_reads(leaky_sum, inputs, calls=2, strict=False)
    assert not report.ok
    assert report.stale[0] == StaleRead(
        call=0, output="result", mismatched=4, total=4, culprits=("acc (4,) torch.float32",)
    )


def test_the_same_launcher_with_zeros_passes() -> None:
    @persistent_buffers(pool=BufferPool())
    def fixed_sum(buffers: BufferScope, x: torch.Tensor) -> torch.Tensor:
        acc = buffers.zeros("acc", (x.shape[0],), x.dtype, x.device)
        acc += x.sum(dim=1)
        return acc.clone()

    assert check_no_stale_reads(fixed_sum, inputs).ok


def test_a_partly_written_output_is_caught() -> None:
    @persistent_buffers(pool=BufferPool(), on_return="copy")
    def shift(buffers: BufferScope, x: torch.Tensor) -> tuple[torch.Tensor, int]:
        out = buffers.empty("out", x.shape, x.dtype, x.device)
        out[:, 1:] = x[:, :-1]  # bug: column 0 is never written
        return out, 1

    report = check_no_stale_reads(shift, inputs, strict=False)
    assert [(s.output, s.mismatched, s.culprits) for s in report.stale] == [
        ("result[0]", 4, ("out (4, 6) torch.float32",))
    ] * 3


def test_a_stale_index_buffer_is_caught_through_the_error_it_causes() -> None:
    filled: set[int] = set()

    @persistent_buffers(pool=BufferPool())
    def gather_rows(buffers: BufferScope, x: torch.Tensor) -> torch.Tensor:
        order = buffers.empty("order", (2,), torch.int64, x.device)
        if x.shape[0] not in filled:  # bug: the index is computed once, then trusted
            filled.add(x.shape[0])
            torch.arange(2, out=order)
        return x[order]

    report = check_no_stale_reads(gather_rows, inputs, strict=False)
    first = report.stale[0]
    assert first.call == 0 and first.error is not None and "IndexError" in first.error
    assert first.culprits == ("order (2,) torch.int64",)
    assert "raised IndexError" in first.describe()


def test_launchers_that_write_their_inputs_are_compared_fairly() -> None:
    @persistent_buffers(pool=BufferPool())
    def scale_in_place(buffers: BufferScope, x: torch.Tensor) -> torch.Tensor:
        ws = buffers.empty("ws", x.shape, x.dtype, x.device)
        torch.mul(x, 3.0, out=ws)
        x.copy_(ws)
        return x

    assert check_no_stale_reads(scale_in_place, inputs).ok


def test_plain_callables_need_their_pool_or_scope() -> None:
    pool = BufferPool()

    def leaky(x: torch.Tensor) -> torch.Tensor:
        acc = pool.get((x.shape[0],), x.dtype, x.device, tag="acc")
        acc += x.sum(dim=1)
        return acc.clone()

    report = check_no_stale_reads(leaky, inputs, buffers=pool, strict=False)
    assert report.stale[0].culprits == ("acc (4,) torch.float32",)
    with pytest.raises(InputError, match="Expected a PersistentLauncher, or buffers="):
        check_no_stale_reads(leaky, inputs)


def test_tolerances_admit_nondeterministic_launchers_but_never_nan() -> None:
    noise = torch.Generator().manual_seed(0)

    @persistent_buffers(pool=BufferPool())
    def jittery(buffers: BufferScope, x: torch.Tensor) -> torch.Tensor:
        ws = buffers.empty("ws", x.shape, x.dtype, x.device)
        torch.add(x, 1e-6 * torch.rand(x.shape, generator=noise), out=ws)
        return ws.sum(dim=1)

    assert not check_no_stale_reads(jittery, inputs, strict=False).ok
    assert check_no_stale_reads(jittery, inputs, atol=1e-4).ok
    assert not check_no_stale_reads(leaky_sum, inputs, atol=1e3, rtol=1.0, strict=False).ok


def test_bad_arguments() -> None:
    with pytest.raises(InputError, match="Expected make_inputs"):
        check_no_stale_reads(row_softmax, lambda i: inputs(i)[0])  # type: ignore[arg-type,return-value]
    with pytest.raises(InputError, match="calls: Expected calls as an int >= 1, got 0"):
        check_no_stale_reads(row_softmax, inputs, calls=0)
    with pytest.raises(InputError, match="calls: Expected calls as an int >= 1, got True"):
        check_no_stale_reads(row_softmax, inputs, calls=True)


def test_a_numpy_count_of_calls_is_an_int() -> None:
    # As kernelopt.catalog and kernelopt.workload take counts: any Integral but a bool.
    report = check_no_stale_reads(row_softmax, inputs, calls=np.int64(2))
    assert report.ok and report.calls == 2 and type(report.calls) is int


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"rtol": -1.0}, "rtol: Expected a finite number >= 0, got -1.0"),
        ({"atol": float("nan")}, "atol: Expected a finite number >= 0, got nan"),
        ({"rtol": "0.1"}, "rtol: Expected a finite number >= 0, got '0.1'"),
        ({"buffers": "pool"}, "buffers: Expected a BufferPool, a BufferScope or None, got 'pool'"),
        ({"make_inputs": 3}, "make_inputs: Expected a callable make_inputs(i), got int"),
        ({"launcher": None}, "launcher: Expected a callable launcher, got NoneType"),
    ],
)
def test_bad_arguments_are_refused_before_any_call(kwargs: dict[str, object], message: str) -> None:
    # Refused up front: not a RuntimeError from torch.isclose after the launcher ran, nor
    # an AttributeError from deep inside the checker.
    calls = []

    @persistent_buffers(pool=BufferPool())
    def counted(buffers: BufferScope, x: torch.Tensor) -> torch.Tensor:
        calls.append(1)
        return row_softmax(x)

    args: dict[str, object] = {"launcher": counted, "make_inputs": inputs, **kwargs}
    launcher, make = args.pop("launcher"), args.pop("make_inputs")
    with pytest.raises(InputError) as raised:
        check_no_stale_reads(launcher, make, **args)  # type: ignore[arg-type]
    assert str(raised.value) == message and not calls


def test_poison_refuses_what_is_no_tensor() -> None:
    with pytest.raises(InputError, match=r"^tensor: Expected a torch.Tensor, got list$"):
        poison_([1.0, 2.0])  # type: ignore[arg-type]


def test_a_launcher_failing_on_its_own_is_not_blamed_on_poison() -> None:
    @persistent_buffers(pool=BufferPool())
    def broken(buffers: BufferScope, x: torch.Tensor) -> torch.Tensor:
        raise ValueError("bad launch")

    with pytest.raises(ValueError, match="bad launch"):
        check_no_stale_reads(broken, inputs)


@pytest.mark.parametrize(
    ("dtype", "check"),
    [
        (torch.float32, lambda t: bool(t.isnan().all())),
        (torch.bfloat16, lambda t: bool(t.isnan().all())),
        (torch.complex64, lambda t: bool(t.isnan().all())),
        (torch.int32, lambda t: bool((t == 2**31 - 1).all())),
        (torch.uint8, lambda t: bool((t == 255).all())),
        (torch.bool, lambda t: bool(t.all())),
    ],
)
def test_poison_values(dtype: torch.dtype, check: object) -> None:
    t = poison_(torch.zeros(5, dtype=dtype))
    assert check(t)  # type: ignore[operator]


@pytest.mark.parametrize(
    ("dtype", "read"),
    [
        # NaN and 0 answer these alike: both are "not > 0", "not < 0", 0 after nan_to_num.
        (torch.float32, lambda flags: flags > 0),
        (torch.float32, lambda flags: flags < 0),
        (torch.float16, lambda flags: torch.nan_to_num(flags) != 0),
        # The largest int and 0 are both "not < 0".
        (torch.int32, lambda flags: flags < 0),
    ],
)
def test_a_stale_read_that_nan_and_zero_answer_alike_is_caught(
    dtype: torch.dtype, read: object
) -> None:
    @persistent_buffers(pool=BufferPool())
    def masked(buffers: BufferScope, x: torch.Tensor) -> torch.Tensor:
        flags = buffers.empty("flags", x.shape, dtype, x.device)  # bug: never written
        return torch.where(read(flags), x, -x)  # type: ignore[operator]

    report = check_no_stale_reads(masked, inputs, calls=1, strict=False)
    assert not report.ok
    assert report.stale[0].culprits == (f"flags (4, 6) {dtype}",)


def test_a_stale_size_that_makes_a_buffer_request_fail_is_a_stale_read() -> None:
    # The pool refuses the size a poisoned count gives (an InputError, a KernelOptError):
    # that is the poison showing, reported like any other error it causes.
    filled: set[int] = set()

    @persistent_buffers(pool=BufferPool())
    def compact(buffers: BufferScope, x: torch.Tensor) -> torch.Tensor:
        count = buffers.empty("count", (1,), torch.int64, x.device)
        if not filled:  # bug: the count is set once, then trusted
            filled.add(1)
            count.zero_()
        kept = buffers.empty("kept", (int(count[0]) + x.shape[0],), x.dtype, x.device)
        kept[: x.shape[0]] = x[:, 0]
        return kept[: x.shape[0]].clone()

    report = check_no_stale_reads(compact, inputs, calls=1, strict=False)
    (stale,) = report.stale
    assert stale.error is not None and stale.error.startswith("InputError: shape: Expected")
    assert stale.culprits == ("count (1,) torch.int64",)


def test_the_checker_runs_on_a_launcher_first_called_under_inference_mode() -> None:
    @persistent_buffers(pool=BufferPool())
    def softmax(buffers: BufferScope, x: torch.Tensor) -> torch.Tensor:
        return row_softmax.call_with_scope(buffers, x).clone()

    with torch.inference_mode():
        softmax(inputs(0)[0])
    assert check_no_stale_reads(softmax, inputs).ok

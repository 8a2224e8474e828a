"""The memory an input set spans, kernels that read their outputs, outputs written in part.

The cold-L2 proof counted each tensor by its elements: an expanded vector counted as a
matrix and sliding windows of one buffer as disjoint buffers, so a hot timing was
labelled ``cache="rotate"``. The written-output guard failed a correct in-place kernel
with no word of why, could not check a KV-cache append without a view per slot, and let
an empty ``outputs=`` turn it off in a timing.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from kernelopt._errors import InputError
from kernelopt.bench import Timer, compare, evicting_bytes, measure
from kernelopt.bench.guards import check_responds_to_inputs, check_written, poison_value
from kernelopt.bench.timer import _share_memory

FAST = {"backend": "cpu-perf-counter", "warmup_ms": 1.0, "settle_ms": 0.0, "max_time_ms": 5.0}
CPU = Timer(**FAST)  # type: ignore[arg-type]

# -- the bytes an input set spans ---------------------------------------------------------


def test_an_expanded_tensor_counts_the_memory_under_it() -> None:
    sets = [(torch.randn(1024).expand(4096, 1024),) for _ in range(3)]  # 4 KiB each
    assert evicting_bytes(sets) == (2 * 4096, 0)
    with pytest.raises(InputError, match=r"got 8192 bytes brought in between two uses"):
        measure(lambda t: t.sum(), inputs=sets, l2_bytes=8 << 20, **FAST)  # type: ignore[arg-type]


def test_a_broadcast_array_counts_the_memory_under_it() -> None:
    sets = [(np.broadcast_to(np.zeros(1024, np.float32), (4096, 1024)),) for _ in range(3)]
    assert evicting_bytes(sets) == (2 * 4096, 0)


def test_sliding_windows_of_one_buffer_count_its_bytes_once() -> None:
    big = torch.zeros((1 << 20) + 3)
    sets = [(big[i : i + (1 << 20)],) for i in range(4)]
    # Each window leaves 3 floats of the buffer for the others to bring.
    assert evicting_bytes(sets) == (12, 4 * ((1 << 20) - 3))
    with pytest.raises(InputError, match="rotation evicts the L2"):
        measure(lambda t: t.sum(), inputs=sets, l2_bytes=8 << 20, **FAST)  # type: ignore[arg-type]
    array = np.zeros((1 << 20) + 3, np.float32)
    assert evicting_bytes([(array[i : i + (1 << 20)],) for i in range(4)])[0] == 12


def test_overlapping_views_in_one_set_count_once() -> None:
    a = torch.zeros(1000)  # 4000 B
    sets = [(a, a[:500], a[100:]), (torch.zeros(10),)]
    assert evicting_bytes(sets) == (40, 0)
    assert evicting_bytes([(a, a[:500])]) == (0, 4000)


def test_reversed_and_transposed_views_count_their_memory() -> None:
    assert evicting_bytes([(torch.zeros(3),), (torch.zeros(100).flip(0),)]) == (12, 0)
    assert evicting_bytes([(torch.zeros(3),), (torch.zeros(20, 5).t(),)]) == (12, 0)


def test_strided_views_of_one_region_are_not_counted_as_evicting_it() -> None:
    # Columns of one matrix: which bytes each shares with the others is not worked out,
    # so none of them is claimed to evict the others.
    big = torch.zeros(4096, 1024)
    assert evicting_bytes([(big[:, i],) for i in range(3)]) == (0, 0)
    # A column alone counts its elements, not the 16 MiB from its first to its last.
    assert evicting_bytes([(torch.zeros(3),), (big[:, 0],)]) == (12, 0)


def test_the_hot_l2_note_counts_the_memory_under_expanded_inputs() -> None:
    sets = [(torch.randn(1024).expand(4096, 1024),)]
    m = measure(lambda t: None, inputs=sets, mode="hot", l2_bytes=1 << 20, **FAST)  # type: ignore[arg-type]
    assert any(note.startswith("hot-l2-timing: the 4096 input bytes") for note in m.notes)


def test_lists_are_input_sets_as_tuples_are() -> None:
    sets = [[torch.zeros(4)], [torch.zeros(4)]]
    assert evicting_bytes(sets) == (16, 0)
    seen: list[int] = []
    measure(lambda x: seen.append(x.numel()), inputs=sets, mode="hot", **FAST)  # type: ignore[arg-type]
    assert set(seen) == {4}


# -- kernels that read their outputs ------------------------------------------------------


def test_a_kernel_that_wrote_nothing_is_told_the_likely_causes() -> None:
    q, k = torch.randn(8, 16), torch.randn(8, 4)
    with pytest.raises(InputError) as caught:
        check_written(lambda: (q.mul_(2.0), k.mul_(2.0)), (q, k))  # in place: reads the poison
    message = str(caught.value)
    assert "got 160 of 160 still poisoned" in message
    assert message.endswith(
        "; none was written: a kernel that reads its outputs (one that works in place) read "
        "the poison, so check an in-place kernel against its reference on a fresh copy of "
        "its inputs instead; or an output passed is a copy, not a view of the memory the "
        "kernel writes (advanced indexing, t[idx], copies)"
    )
    # The poison stays where the check failed, as the page says.
    assert bool(q.isnan().all())


def test_an_output_copied_by_advanced_indexing_is_told_the_likely_causes() -> None:
    out, rows = torch.zeros(10), torch.tensor([1, 3])
    with pytest.raises(InputError, match=r"advanced indexing, t\[idx\], copies"):
        check_written(lambda: out[rows].fill_(1.0), out[rows])


def test_a_partial_write_gets_no_word_of_in_place_kernels() -> None:
    out = torch.zeros(8)
    with pytest.raises(InputError) as caught:
        check_written(lambda: out[:4].fill_(1.0), out)
    assert "none was written" not in str(caught.value)


def test_a_timed_in_place_kernel_names_the_input_its_output_shares() -> None:
    q = torch.randn(8, 16)
    with pytest.raises(InputError) as caught:
        measure(lambda q: q.mul_(2.0), inputs=[(q,)], outputs=q[:, 8:], **FAST)  # type: ignore[arg-type]
    assert str(caught.value).endswith(
        "in outputs of shape [8, 8], the first at outputs[0, 0]; outputs shares memory with "
        "inputs[0][0]: a kernel that reads its outputs (one that works in place) read the "
        "poison, so check an in-place kernel against its reference on a fresh copy of its "
        "inputs instead"
    )
    with pytest.raises(InputError, match=r"candidate_outputs shares memory with inputs\[1\]\[0\]"):
        compare(
            lambda q: None,
            lambda q: q.mul_(2.0),
            inputs=[(torch.randn(4),), (q,)],
            candidate_outputs=q,
            timer=CPU,
        )


def test_an_output_buffer_passed_in_every_input_set_is_timed() -> None:
    # fn(x, out): the output shares memory with an argument and is not read.
    out = torch.empty(64)
    sets = [(torch.randn(64), out), (torch.randn(64), out)]
    m = measure(lambda x, o: o.copy_(x), inputs=sets, outputs=out, **FAST)  # type: ignore[arg-type]
    assert m.median > 0


def test_shared_memory_is_told_element_by_element_for_strided_views() -> None:
    buf = torch.zeros(8, 16)
    assert not _share_memory(buf[:, :8], buf[:, 8:])  # the halves of each row
    assert _share_memory(buf[:, :9], buf[:, 8:])
    assert _share_memory(buf, buf[3])
    assert not _share_memory(buf, torch.zeros(8, 16))
    assert _share_memory(buf[:, 0], buf.view(-1)[16:17])
    array = np.zeros((8, 16))
    assert not _share_memory(array[:, ::2], array[:, 1::2])
    assert _share_memory(torch.from_numpy(array), array[2:3])


# -- outputs written in part: written= ----------------------------------------------------

HEADS, DIM = 4, 8


def append_kernel(cache: torch.Tensor, slots: torch.Tensor, *, clamp: bool = False) -> None:
    """Writes the row of each token's slot; a padding slot (-1) writes nothing, unless
    ``clamp`` (the bug) takes it for slot 0."""
    for token, slot in enumerate(slots.tolist()):
        if slot >= 0 or clamp:
            cache[max(slot, 0)] = float(token + 1)


def test_written_rows_pass_and_a_stray_write_is_named() -> None:
    cache = torch.zeros(64, HEADS, DIM)
    slots = torch.tensor([5, 9, 2, -1])
    valid = slots[slots >= 0]
    check_written(lambda: append_kernel(cache, slots), cache, written=valid)
    with pytest.raises(InputError) as caught:
        check_written(lambda: append_kernel(cache, slots, clamp=True), cache, written=valid)
    assert str(caught.value) == (
        "Expected nothing written outside the written= region, got 32 elements written there "
        "in outputs of shape [64, 4, 8], the first at outputs[0, 0, 0]"
    )


def test_a_row_of_the_region_left_unwritten_is_named() -> None:
    cache = torch.zeros(64, HEADS, DIM)
    slots = torch.tensor([5, 9])
    with pytest.raises(InputError) as caught:
        check_written(lambda: append_kernel(cache, slots[:1]), cache, written=slots)
    assert str(caught.value).startswith(
        "Expected every output element written, got 32 of 64 still poisoned (NaN: never "
        "written, or written as NaN by the kernel) in outputs of shape [64, 4, 8], the "
        "first at outputs[9, 0, 0]"
    )
    with pytest.raises(InputError, match="written and nothing outside it, got 32 of 64"):
        check_written(lambda: append_kernel(cache, torch.tensor([5, 7])), cache, written=slots)


def test_a_bool_mask_of_leading_dimensions_names_the_region() -> None:
    cache = torch.zeros(4, 16, HEADS, DIM)  # [blocks, block_size, heads, dim]
    slots = torch.tensor([17, 40])
    mask = torch.zeros(4, 16, dtype=torch.bool)
    mask.view(-1)[slots] = True
    check_written(lambda: append_kernel(cache.view(-1, HEADS, DIM), slots), cache, written=mask)
    with pytest.raises(InputError, match=r"the first at outputs\[0, 0, 0, 0\]"):
        check_written(
            lambda: append_kernel(
                cache.view(-1, HEADS, DIM), torch.tensor([17, 40, -1]), clamp=True
            ),
            cache,
            written=mask,
        )


def test_regions_follow_the_nesting_of_the_outputs() -> None:
    keys, values, lse = torch.zeros(32, DIM), torch.zeros(32, DIM), torch.zeros(3)
    slots = torch.tensor([1, 30])

    def kernel() -> None:
        append_kernel(keys, slots)
        append_kernel(values, slots)
        lse.fill_(0.0)

    check_written(kernel, (keys, values, lse), written=(slots, slots, None))
    check_written(kernel, {"k": keys, "v": values, "lse": lse}, written={"k": slots, "v": slots})
    with pytest.raises(
        InputError,
        match=r"^written: Expected one region per output, a list of 3 \(None for an output "
        r"written whole\), got Tensor$",
    ):
        check_written(kernel, (keys, values, lse), written=slots)


def test_a_padding_slot_in_the_region_is_refused_before_anything_is_poisoned() -> None:
    cache = torch.zeros(64, HEADS, DIM)
    with pytest.raises(
        InputError,
        match=r"^written: Expected row indices of outputs in \[0, 64\), got -1 at position 3 "
        r"\(a padding slot writes nothing: pass slots\[slots >= 0\]\)$",
    ):
        check_written(lambda: None, cache, written=torch.tensor([5, 9, 2, -1]))
    with pytest.raises(InputError, match=r"got 64 at position 0$"):
        check_written(lambda: None, cache, written=torch.tensor([64]))
    with pytest.raises(InputError, match=r"a bool mask of the shape of outputs \[64, 4, 8\]"):
        check_written(lambda: None, cache, written=torch.zeros(3, dtype=torch.bool))
    with pytest.raises(InputError, match="a bool mask or a tensor of row indices"):
        check_written(lambda: None, cache, written=torch.zeros(3))
    assert bool((cache == 0).all())


def test_a_timing_checks_the_written_region_of_every_call() -> None:
    cache = torch.zeros(64, HEADS, DIM)
    slots = torch.tensor([5, 9, -1])
    valid = slots[slots >= 0]
    m = measure(lambda: append_kernel(cache, slots), outputs=cache, written=valid, **FAST)  # type: ignore[arg-type]
    assert m.median > 0
    with pytest.raises(
        InputError, match=r"^Expected nothing written outside the written= region by each timed"
    ):
        measure(
            lambda: append_kernel(cache, slots, clamp=True), outputs=cache, written=valid, **FAST
        )  # type: ignore[arg-type]
    with pytest.raises(InputError, match=r"^candidate_written: Expected row indices"):
        compare(
            lambda: None,
            lambda: None,
            candidate_outputs=cache,
            candidate_written=slots,
            timer=CPU,
        )
    with pytest.raises(InputError, match=r"^written: Expected outputs= holding the regions"):
        measure(lambda: None, written=valid, **FAST)  # type: ignore[arg-type]


# -- outputs that check nothing, or cannot be poisoned ---------------------------------------


@pytest.mark.parametrize("empty", [[], (), {}], ids=["list", "tuple", "dict"])
def test_empty_outputs_are_refused_by_timings_as_by_check_written(empty: object) -> None:
    calls: list[int] = []
    kind = type(empty).__name__
    said = rf"^outputs: Expected at least one output tensor to check, got none in {kind} "
    with pytest.raises(InputError, match=said):
        check_written(lambda: calls.append(1), empty)
    with pytest.raises(InputError, match=said):
        measure(lambda: calls.append(1), outputs=empty, **FAST)  # type: ignore[arg-type]
    with pytest.raises(InputError, match=said):
        compare(lambda: calls.append(1), lambda: calls.append(1), outputs=empty, timer=CPU)
    with pytest.raises(InputError, match=said.replace("outputs", "candidate_outputs", 1)):
        compare(lambda: None, lambda: None, candidate_outputs=empty, timer=CPU)
    assert calls == []


def test_an_fp4_output_is_refused_with_what_to_do() -> None:
    fp4 = torch.zeros(4, dtype=torch.uint8).view(torch.float4_e2m1fn_x2)
    other = torch.zeros(4)
    with pytest.raises(
        InputError,
        match=r"got torch\.float4_e2m1fn_x2 \(e2m1 has no NaN and every byte holds two valid "
        r"values: check an FP4 output viewed as uint8, out\.view\(torch\.uint8\)",
    ):
        check_written(lambda: None, (other, fp4))
    assert bool((other == 0).all())  # refused before anything was poisoned
    assert poison_value(torch.uint8) == 255
    check_written(lambda: fp4.view(torch.uint8).fill_(0x21), fp4.view(torch.uint8))


def test_a_dtype_without_a_fill_is_refused_with_what_to_do() -> None:
    with pytest.raises(
        InputError, match=r"got torch\.bits8 \(check the output viewed as an integer"
    ):
        poison_value(torch.bits8)


# -- messages that name the argument ------------------------------------------------------


def test_a_numpy_output_is_refused_by_name_with_what_to_do() -> None:
    with pytest.raises(
        InputError,
        match=r"^outputs: Expected a tensor or a sequence of tensors, got ndarray \(a numpy "
        r"array is not poisoned nor checked: pass torch\.from_numpy\(array\), which shares "
        r"its memory\)$",
    ):
        check_written(lambda: None, np.zeros(3))
    with pytest.raises(InputError, match=r"^outputs\[1\]: Expected a tensor"):
        check_written(lambda: None, [torch.zeros(3), np.zeros(3)])


def test_outputs_given_as_a_function_are_refused_before_any_call() -> None:
    calls: list[int] = []
    sets = [(torch.zeros(3),), (torch.ones(3),)]
    with pytest.raises(
        InputError,
        match=r"^outputs: Expected the output tensors fn writes, the same for every input set, "
        r"got function \(for outputs inside each input set, have fn return them",
    ):
        check_responds_to_inputs(lambda x: calls.append(1), sets, outputs=lambda *a: a)
    with pytest.raises(InputError, match=r"^outputs: Expected a tensor or a sequence of tensors"):
        check_responds_to_inputs(lambda x: calls.append(1), sets, outputs="out")
    assert calls == []
    # What the advice says works: the buffer of each set returned by fn.
    caches = [(torch.randn(3), torch.empty(3)), (torch.randn(3), torch.empty(3))]
    check_responds_to_inputs(lambda x, cache: (cache.copy_(x), cache)[1], caches)

"""A q whose batch is not the plan's is named as q, before the block table is held to it."""

from __future__ import annotations

import pytest
import torch
from mla_testing import make_inputs, seed_of

from kernelopt import InputError
from kernelopt.kernels.mla import MLADecodePlan

SCALE = 192**-0.5
DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
SEQLENS = [5, 40, 17]


def _plan_and_inputs(
    request: pytest.FixtureRequest,
) -> tuple[MLADecodePlan, torch.Tensor, torch.Tensor, torch.Tensor]:
    q, kv, bt, sl = make_inputs(
        SEQLENS, s_q=2, h_q=3, page=16, dtype=torch.float32, seed=seed_of(request), device=DEVICE
    )
    plan = MLADecodePlan(
        sl, s_q=2, h_q=3, page_size=16, softmax_scale=SCALE, dtype=torch.float32, device=DEVICE
    )
    return plan, q, kv, bt


def test_a_q_short_of_a_sequence_is_named_as_q_not_the_block_table(request) -> None:
    plan, q, kv, bt = _plan_and_inputs(request)
    # Was "block_table: Expected block_table of shape [2, max_blocks], got [3, 9]".
    with pytest.raises(InputError) as caught:
        plan.run(q[:2], kv, bt)
    assert str(caught.value) == (
        f"q: Expected q of shape [3, 2, 3, 576] (as planned), got {list(q[:2].shape)}"
    )


def test_a_q_of_another_head_count_is_named_before_the_cache_and_table(request) -> None:
    plan, q, kv, bt = _plan_and_inputs(request)
    with pytest.raises(InputError, match=r"^q: Expected q of shape \[3, 2, 3, 576\] \(as planned"):
        plan.run(q[:, :, :2].contiguous(), kv, bt[:1])


def test_a_block_table_of_the_wrong_batch_is_still_named_as_such(request) -> None:
    plan, q, kv, bt = _plan_and_inputs(request)
    with pytest.raises(InputError, match=r"^block_table: Expected block_table of shape \[3, "):
        plan.run(q, kv, bt[:2])


def test_planning_is_the_constructor() -> None:
    # The docs' diagram named a plan method; planning happens when the plan is built.
    assert not hasattr(MLADecodePlan, "plan")

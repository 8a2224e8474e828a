"""The FlashMLA-shaped call names its own arguments in errors: its cache is ``k_cache``."""

from __future__ import annotations

import pytest
import torch
from mla_testing import make_inputs, seed_of

from kernelopt import InputError
from kernelopt.kernels.mla import get_mla_metadata, mla_decode_with_kvcache

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


@pytest.mark.parametrize(
    ("spoil", "message"),
    [
        (lambda kv: kv[..., :512], "k_cache: Expected head dim 576, got 512"),
        (lambda kv: kv.squeeze(2), r"k_cache: Expected k_cache of shape \[num_blocks"),
        (lambda kv: kv.half(), "k_cache: Expected dtype torch.float32 \\(as q\\)"),
        (lambda kv: kv.tolist(), "k_cache: Expected"),
    ],
    ids=["head-dim", "rank", "dtype", "not-a-tensor"],
)
def test_a_bad_cache_is_named_as_the_call_names_it(request, spoil, message) -> None:
    q, kv, bt, sl = make_inputs(
        [5, 17], s_q=1, h_q=2, page=16, dtype=torch.float32, seed=seed_of(request), device=DEVICE
    )
    meta, num_splits = get_mla_metadata(sl, 2, 1)
    with pytest.raises(InputError, match=message) as caught:
        mla_decode_with_kvcache(q, spoil(kv), bt, sl, 512, meta, num_splits)
    assert "kv_cache" not in str(caught.value)

"""Ahead-of-time compilation for sm_90a: the default configurations fit Hopper as designed."""

from __future__ import annotations

import pytest

from kernelopt import InputError
from kernelopt.kernels.mla import split_kv_resources
from kernelopt.kernels.mla.split_kv import SplitKVConfig, default_config


@pytest.mark.parametrize(("s_q", "h_q"), [(1, 128), (16, 16), (1, 16)])
def test_default_configs_compile_without_spills(s_q, h_q) -> None:
    r = split_kv_resources(s_q=s_q, h_q=h_q, page_size=64)
    config = default_config(s_q * h_q)
    assert r.target == "sm_90a"
    assert r.spill_bytes == 0 and r.stack_bytes == 0, r
    assert r.uses_async_copy, "key-tile loads are not software-pipelined"
    if config.block_m == 64:
        assert r.uses_wgmma and not r.uses_mma_sync, "64-row tiles should run on wgmma"
    # The scheduler's assumption about co-resident programs holds for the compiled kernel.
    assert r.programs_per_sm() == config.ctas_per_sm
    assert r.metrics() == {"regs_per_thread": float(r.registers), "spill_bytes": 0.0}


def test_a_config_that_spills_is_reported() -> None:
    # A 64 × 512 float32 accumulator over 4 warps needs 256 registers a thread by itself.
    r = split_kv_resources(s_q=1, h_q=128, config=SplitKVConfig(num_warps=4))
    assert r.registers == 255 and r.spill_bytes > 0


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"dtype": "int8"}, "dtype: Expected one of"),
        ({"strategy": "naive"}, "strategy: Expected strategy 'split_kv', 'hopper' or 'seesaw'"),
        (
            {"strategy": "hopper", "kv_fp8": True},
            "Expected strategy 'split_kv' or 'seesaw' for an FP8 cache",
        ),
        ({"pair_merge": True}, "Expected strategy 'seesaw' for pair_merge=True"),
        ({"strategy": "seesaw", "dtype": "float32"}, "Expected a 16-bit dtype"),
    ],
)
def test_options_the_kernels_do_not_take_are_input_errors(options, message) -> None:
    # A wrong argument is the caller's to fix, not a missing compiler or a failed build.
    with pytest.raises(InputError, match=message):
        split_kv_resources(s_q=1, h_q=16, **options)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        # A zero size compiled a kernel of no rows (or one dividing by a page of 0 rows)
        # and reported its resources; a dict or a fraction raised a bare Python error.
        ({"s_q": 0}, "s_q: Expected a positive integer, got 0"),
        ({"h_q": 1.5}, "h_q: Expected a positive integer, got 1.5"),
        ({"page_size": 0}, "page_size: Expected a positive integer, got 0"),
        ({"config": {"block_m": 64}}, "config: Expected a SplitKVConfig or None, got dict"),
        ({"causal": "no"}, "causal: Expected a bool, got 'no'"),
        ({"kv_fp8": 1}, "kv_fp8: Expected a bool, got 1"),
        ({"tile_in_page": "yes"}, "tile_in_page: Expected a bool or None, got 'yes'"),
        ({"capability": "90"}, "capability: Expected a positive integer, got '90'"),
    ],
)
def test_sizes_and_flags_are_checked_before_compiling(options, message) -> None:
    with pytest.raises(InputError, match=message):
        split_kv_resources(**({"s_q": 1, "h_q": 16} | options))

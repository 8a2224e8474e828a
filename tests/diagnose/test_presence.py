"""Whether a technique shows in a kernel source: code patterns, not stray words."""

from __future__ import annotations

import pytest

from kernelopt.catalog import Catalog
from kernelopt.diagnose.presence import present_ids, present_in

from .conftest import kernel

CATALOG = Catalog.builtin()


def _has(entry_id: str, text: str) -> bool:
    return present_in(CATALOG.get(entry_id), [kernel(text)]) is not None


@pytest.mark.parametrize(
    "text",
    [
        # Triton: a loop over tiles strided by the number of programs.
        "for tile in tl.range(tl.program_id(0), num_tiles, tl.num_programs(0)):\n    pass\n",
        "for tile_id in range(start_pid, num_tiles, NUM_SMS):\n    pass\n",
        # A launch grid sized by the SM count.
        "grid = (min(NUM_SMS, num_tiles),)\nkernel[grid](x)\n",
        "grid = lambda meta: (min(props.multi_processor_count, n),)\n",
        # CUDA: a tile loop strided by the grid.
        "for (int t = blockIdx.x; t < n_tiles; t += gridDim.x) { work(t); }\n",
    ],
)
def test_persistent_grid_is_recognized_by_its_code(text: str) -> None:
    assert _has("persistent-grid", text)


@pytest.mark.parametrize(
    "text",
    [
        # The words of another technique: persistent buffers are allocations, not a grid.
        '"""The launcher preallocates its outputs once per shape (persistent\nbuffers)."""\n',
        "# keep persistent buffers across calls\nout = pool.get(shape)\n",
        # Reading the SM count to choose a split is not a persistent grid.
        "num_sms = torch.cuda.get_device_properties(0).multi_processor_count\n"
        "splits = max(1, num_sms // (b * h))\ngrid = (b, h, splits)\n",
        # num_programs used for indexing, with no loop over tiles.
        "stride = tl.num_programs(0) * BLOCK\noffs = tl.program_id(0) * BLOCK\n",
        # A plain loop over KV tiles.
        "for start in tl.range(0, seqlen, BLOCK_N, num_stages=2):\n    pass\n",
    ],
)
def test_persistent_grid_is_not_matched_by_words_or_sm_queries(text: str) -> None:
    assert not _has("persistent-grid", text)


def test_present_ids_over_a_catalog() -> None:
    text = (
        "for t in tl.range(t0, t1, num_stages=STAGES, warp_specialize=WS):\n"
        "    p = tl.exp2(s - m_i[:, None])\n"
    )
    found = present_ids(CATALOG, [kernel(text)])
    assert {"warp-specialization", "exp2-folded-scale", "software-pipelining"} <= found
    assert "persistent-grid" not in found and "split-kv-flash-decoding" not in found
    assert present_ids(CATALOG, []) == set()

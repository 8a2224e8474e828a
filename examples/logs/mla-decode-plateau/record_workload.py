"""Record the calls of a small MLA decode loop and write experiments/workload_profile.md.

The loop serves batches of sequences one token at a time, the way a decode server calls
the attention kernel: every step is one call with one query token per sequence
(``s_q == 1``) and caches one token longer than the step before. The call it records is
kernelopt's float64 reference, :func:`kernelopt.kernels.mla.mla_decode_ref`, on the CPU, at
the decode shapes of DeepSeek-V3's absorbed MLA (128 query heads, one latent KV head of
576 = 512 + 64 columns, pages of 64 tokens, bf16 inputs) and small batches and caches, so it runs in
seconds anywhere. :class:`kernelopt.workload.Recorder` writes the call trace; ``kernelopt
inspect`` turns it into the profile.

Run from the repository root::

    python examples/logs/mla-decode-plateau/record_workload.py

It rewrites ``examples/logs/mla-decode-plateau/experiments/workload_profile.md`` (or the
file ``--out`` names); the trace goes to a temporary directory and is deleted afterwards.
The loop is seeded, so the profile comes out the same every time.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

import torch

from kernelopt.kernels.mla import mla_decode_ref
from kernelopt.workload import Recorder

HERE = Path(__file__).resolve().parent
PROFILE = HERE / "experiments" / "workload_profile.md"
H_Q, D_QK, PAGE = 128, 576, 64
SCALE = 192**-0.5  # DeepSeek-V3: (128 nope + 64 rope) ** -0.5
# (batch, cache length of each sequence at the first step, decode steps)
BATCHES = ((2, (100, 37), 24), (4, (64, 81, 120, 5), 24), (1, (190,), 16))


def serve(recorder: Recorder, generator: torch.Generator) -> int:
    """Run the decode loop of every batch through the recorded reference; the call count."""
    decode = recorder.wrap(mla_decode_ref, op="mla_decode")
    calls = 0
    for batch, first, steps in BATCHES:
        longest = max(first) + steps
        pages = -(-longest // PAGE)
        kv_cache = torch.randn(batch * pages, PAGE, 1, D_QK, generator=generator).bfloat16()
        block_table = torch.arange(batch * pages, dtype=torch.int32).reshape(batch, pages)
        for step in range(steps):
            cache_seqlens = torch.tensor([n + step + 1 for n in first], dtype=torch.int32)
            q = torch.randn(batch, 1, H_Q, D_QK, generator=generator).bfloat16()
            decode(q, kv_cache, block_table, cache_seqlens, softmax_scale=SCALE)
            calls += 1
    return calls


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--out", type=Path, default=PROFILE, help="where to write the profile")
    out = parser.parse_args(argv).out.resolve()
    with tempfile.TemporaryDirectory() as tmp:
        trace = Path(tmp) / "decode_calls.jsonl"
        recorder = Recorder(trace, values=("cache_seqlens",), append=False)
        with recorder:
            calls = serve(recorder, torch.Generator().manual_seed(0))
        inspect = ["inspect", trace.name, "--write", str(out)]
        command = [sys.executable, "-m", "kernelopt", *inspect]
        done = subprocess.run(command, cwd=tmp, capture_output=True, text=True)
        # inspect exits 1 when it finds shortcuts: expected here (s_q == 1 in every call)
        if done.returncode not in (0, 1):
            sys.stderr.write(done.stdout + done.stderr)
            return done.returncode
    print(f"recorded {calls} calls; wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

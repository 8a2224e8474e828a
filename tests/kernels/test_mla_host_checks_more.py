"""Host-side checks of the MLA decode entry points, and the guide's catalog commands.

Each check reads only what the host holds (argument types, shapes, devices): a plan whose
device comes from its lengths names them, a 0-d tensor is one split count as a NumPy
integer is, the cost formulas name the shape of lengths given with too many dims, and
the FP8 readers apply every stored scale, as docs/mla.md says.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import numpy as np
import pytest
import torch

from kernelopt import DeviceError, InputError
from kernelopt.cli import main
from kernelopt.kernels.mla import (
    MLADecodePlan,
    dequantize_kv_fp8,
    mla_decode_bytes,
    mla_decode_flops,
    quantize_kv_fp8,
)
from kernelopt.kernels.mla.schedule import build_schedule

REPO = Path(__file__).resolve().parents[2]
SCALE = 0.1
# CPU plans run in Triton's interpreter, which the test configuration turns on without CUDA.
DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


def _plan(lengths: object, **kwargs: object) -> MLADecodePlan:
    """A plan of one query row per sequence in float16 (never bfloat16 on the CPU)."""
    args: dict[str, object] = {
        "s_q": 1,
        "h_q": 16,
        "page_size": 16,
        "softmax_scale": SCALE,
        "dtype": torch.float16,
    } | kwargs
    return MLADecodePlan(lengths, **args)  # type: ignore[arg-type]


# ----------------------------------------------------------- the plan's device, by name


def test_meta_lengths_name_cache_seqlens_as_the_device_they_gave() -> None:
    # The plan's device defaults to the lengths', and the refusal named no argument.
    lengths = torch.tensor([5]).to("meta")
    message = (
        r"^cache_seqlens: Expected a CUDA tensor \(or a CPU tensor with TRITON_INTERPRET=1\), "
        r"got meta \(cache_seqlens's device, the plan's when device= is omitted\)$"
    )
    with pytest.raises(DeviceError, match=message):
        _plan(lengths)


def test_cpu_lengths_without_the_interpreter_name_cache_seqlens(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)
    with pytest.raises(DeviceError, match=r"^cache_seqlens: .*got cpu \(cache_seqlens's device"):
        _plan(torch.tensor([5, 7]))


def test_a_device_passed_as_meta_is_named_as_device() -> None:
    with pytest.raises(DeviceError, match=r"^device: Expected a CUDA tensor .*, got meta$"):
        _plan(torch.tensor([5]), device="meta")


def test_the_seesaw_strategy_names_cache_seqlens_for_its_device_too() -> None:
    with pytest.raises(DeviceError, match=r"^cache_seqlens: Expected a Hopper GPU .*got meta \("):
        _plan(torch.tensor([64]).to("meta"), h_q=64, page_size=64, strategy="seesaw")


# ------------------------------------------------------------------- split counts


def test_a_0d_integer_tensor_is_one_split_count_as_a_numpy_integer_is() -> None:
    # torch.tensor(2) was refused, np.int64(2) taken.
    lengths = [512, 300]
    splits = []
    for count in (3, np.int64(3), torch.tensor(3)):
        schedule = _plan(lengths, device=DEVICE, num_splits=count).schedule
        assert schedule is not None
        splits.append(schedule.splits)
    assert splits[0] == splits[1] == splits[2] and max(splits[0]) > 1


def test_a_0d_tensor_of_counts_builds_the_schedule_of_its_int() -> None:
    for count in (torch.tensor(3), torch.tensor(3, dtype=torch.int32), np.array(3)):
        assert build_schedule([40, 200], count, block_n=16) == build_schedule(
            [40, 200], 3, block_n=16
        )


@pytest.mark.parametrize(
    ("splits", "shown"),
    [
        (torch.tensor(2.0), r"tensor\(2\.\)"),
        (torch.tensor(True), r"tensor\(True\)"),
        (np.array([1.0, 3.0]), r"array\(\[1\., 3\.\]\)"),
        (torch.tensor([[2, 2]]), r"tensor\(\[\[2, 2\]\]\)"),
        ("2", "'2'"),
    ],
)
def test_refused_split_counts_list_every_form_taken(splits: object, shown: str) -> None:
    # The message said "an int or a list of ints", leaving out the arrays and tensors
    # taken, and showed a float tensor as the float it held.
    message = (
        r"^num_splits: Expected an int or a list of ints \(also as an integer NumPy array or "
        rf"tensor: 0-d for one count for all, 1-D for one per sequence\), got {shown}$"
    )
    with pytest.raises(InputError, match=message):
        build_schedule([40, 200], splits, block_n=16)  # type: ignore[arg-type]


# ------------------------------------------------------------ the cost formulas' lengths


@pytest.mark.parametrize(
    ("lengths", "kind"),
    [(np.array([[4096] * 32]), "ndarray"), (torch.full((1, 32), 4096), "Tensor")],
)
def test_lengths_with_two_dims_are_refused_with_their_shape(lengths: object, kind: str) -> None:
    # np.array([[4096] * 32]) read as one length: "Expected 32 lengths, got 1".
    message = (
        r"^seqlens: Expected one length per sequence as a 1-D array or tensor, "
        rf"got a 2-D {kind} of shape \[1, 32\]$"
    )
    with pytest.raises(InputError, match=message):
        mla_decode_bytes(lengths, batch=32, s_q=1, h_q=16, elt_bytes=2)  # type: ignore[arg-type]
    with pytest.raises(InputError, match=message):
        mla_decode_flops(lengths, s_q=1, h_q=16)  # type: ignore[arg-type]


def test_one_dim_and_0d_lengths_still_count() -> None:
    flat = mla_decode_bytes(np.array([4096] * 32), batch=32, s_q=1, h_q=16, elt_bytes=2)
    assert flat == mla_decode_bytes([4096] * 32, batch=32, s_q=1, h_q=16, elt_bytes=2)
    assert mla_decode_flops(torch.tensor(4096 * 32), s_q=1, h_q=16) == mla_decode_flops(
        [4096] * 32, s_q=1, h_q=16
    )


# ------------------------------------------------------------------ FP8 scales as stored


def _with_first_scale(value: float) -> torch.Tensor:
    """Two packed rows whose first group's scale is ``value``: ``[2, 656]`` uint8."""
    gen = torch.Generator().manual_seed(7)
    packed = quantize_kv_fp8(torch.randn(2, 576, generator=gen))
    packed[:, 512:516] = torch.tensor([value], dtype=torch.float32).view(torch.uint8)
    return packed


def test_fp8_scales_are_applied_as_stored() -> None:
    base = dequantize_kv_fp8(_with_first_scale(1.0))
    zero = dequantize_kv_fp8(_with_first_scale(0.0))
    assert (zero[:, :128] == 0).all() and torch.equal(zero[:, 128:], base[:, 128:])
    assert torch.equal(dequantize_kv_fp8(_with_first_scale(-1.0))[:, :128], -base[:, :128])
    assert torch.isnan(dequantize_kv_fp8(_with_first_scale(float("nan")))[:, :128]).all()


def test_mla_doc_says_how_every_scale_reads() -> None:
    # It said the dequantizer reads "any positive float32 scale", which left a zero scale's
    # zeros unexplained.
    text = " ".join((REPO / "docs" / "mla.md").read_text(encoding="utf-8").split())
    assert "reads any positive float32 scale" not in text
    said = text[text.index("`dequantize_kv_fp8(packed, dtype)` applies each scale as stored") :]
    said = said[: said.index("synchronization on every call")]
    for claim in ("a zero scale", "as zeros", "a negative one flips", "NaN or infinite"):
        assert claim in said, claim


# ------------------------------------------------------------ the guide's catalog commands


def _guide() -> str:
    return (REPO / "docs" / "guide.md").read_text(encoding="utf-8")


def _fundamentals_commands() -> list[list[str]]:
    """The ``$ kernelopt catalog fundamentals`` lines of the guide, as a shell splits them."""
    lines = re.findall(r"^\$ (kernelopt catalog fundamentals .*)$", _guide(), re.MULTILINE)
    return [shlex.split(line) for line in lines]


def test_the_guide_shows_the_fundamentals_subcommand_for_a_family_and_an_alias() -> None:
    families = {words[words.index("--family") + 1] for words in _fundamentals_commands()}
    assert {"mla-decode", "matmul"} <= families


def test_every_fundamentals_command_of_the_guide_runs_as_written(
    capsys: pytest.CaptureFixture[str],
) -> None:
    commands = _fundamentals_commands()
    assert commands
    for words in commands:
        assert main(words[1:]) == 0, words
        printed = capsys.readouterr().out
        assert "fundamental for any" in printed, words
    # The alias prints gemm's list.
    assert main(["catalog", "fundamentals", "--family", "matmul", "--language", "triton"]) == 0
    assert "fundamental for gemm" in capsys.readouterr().out


def test_the_guide_names_the_gemm_aliases_and_axes() -> None:
    text = " ".join(_guide().split())
    section = text[text.index("**A matrix multiply is family `gemm`.**") :]
    for alias in ("matmul", "mm", "bmm", "addmm", "linear", "gemv"):
        assert f"`{alias}`" in section, alias
    assert "axes `m`, `n` and `k`" in section

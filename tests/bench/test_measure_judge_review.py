"""Measuring and judging kernels as a demanding user drives them: the roofline's inputs and
its words at the ridge, the guards' argument sets, and the verdicts on odd sample lists."""

from __future__ import annotations

from pathlib import Path

import attrs
import numpy as np
import pytest
import torch

from kernelopt._errors import InputError
from kernelopt.bench import (
    Ceilings,
    Cost,
    Measurement,
    ProfileReport,
    Roofline,
    Verdict,
    copy_cost,
    elementwise_cost,
    judge,
    matmul_cost,
    profile_report,
)
from kernelopt.bench.guards import check_responds_to_inputs
from kernelopt.bench.roofline import load_ceilings, save_ceilings

H200 = Ceilings(gpu="NVIDIA H200", copy_bytes_per_s=4e12, matmul_flop_per_s=400e12)


class NoEntries:
    """A catalog whose triggers never fire: the report's text alone is under test."""

    def match_metrics(self, metrics: object) -> list[object]:
        return []


def root_cause(line: Roofline) -> str:
    report = profile_report(
        kernel="k",
        version="v1",
        point={"b": 1, "s": 1, "t": 64},
        measurement=Measurement(samples=[2.0, 2.0, 2.0]),
        roofline=line,
        catalog=NoEntries(),
    )
    return report.root_cause


# --- the roofline ----------------------------------------------------------------------


def test_a_balanced_call_is_said_to_be_at_the_ridge() -> None:
    # 400 MFLOP and 4 MB take 1 us each: neither ceiling alone sets the floor, and the
    # report read "Arithmetic intensity 100 FLOP/B is below the ridge 100 FLOP/B".
    line = Roofline(ceilings=H200, cost=Cost(flops=400e6, bytes=4e6))
    assert line.memory_s == line.compute_s
    assert line.bound == "memory"
    text = root_cause(line)
    assert "below the ridge" not in text
    assert (
        "Arithmetic intensity 100 FLOP/B is at the ridge, so bytes and FLOPs set the same floor"
        in text
    )
    assert "(1 us at 4.00 TB/s and 400 TFLOP/s)" in text


@pytest.mark.parametrize(
    ("intensity", "words"),
    [
        (163.3, "Arithmetic intensity 163.3 FLOP/B is above the ridge 163.2 FLOP/B"),
        (163.2, "Arithmetic intensity 163.2 FLOP/B is below the ridge 163.22 FLOP/B"),
    ],
)
def test_intensity_and_ridge_near_each_other_read_apart(intensity: float, words: str) -> None:
    # A ridge of 163.225 FLOP/B (an H100's 652.9 TFLOP/s over 4 TB/s): to 3 digits both
    # read 163, and "163 FLOP/B is above the ridge 163 FLOP/B" says nothing.
    near = Ceilings(gpu="NVIDIA H100", copy_bytes_per_s=4e12, matmul_flop_per_s=652.9e12)
    line = Roofline(ceilings=near, cost=Cost(flops=intensity * 4e6, bytes=4e6))
    assert words in root_cause(line)


def test_intensity_far_from_the_ridge_keeps_three_digits() -> None:
    line = Roofline(ceilings=H200, cost=Cost(flops=30 * 4e6, bytes=4e6))
    assert "Arithmetic intensity 30 FLOP/B is below the ridge 100 FLOP/B" in root_cause(line)


def report_with(**changes: object) -> ProfileReport:
    arguments: dict[str, object] = {
        "kernel": "k",
        "version": "v1",
        "point": {"b": 1, "s": 1, "t": 64},
        "measurement": Measurement(samples=[2.0, 2.0, 2.0]),
        "roofline": Roofline(ceilings=H200, cost=Cost(flops=40e6, bytes=4e6)),
        "catalog": NoEntries(),
    }
    return profile_report(**{**arguments, **changes})  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        # A TypeError naming neither the argument nor what it takes.
        (
            {"latency_below_pct": "20"},
            "latency_below_pct: Expected a percentage in [0, 100], got '20'",
        ),
        # NaN compared false: no kernel was ever called latency-bound, without a word.
        (
            {"latency_below_pct": float("nan")},
            "latency_below_pct: Expected a percentage in [0, 100], got nan",
        ),
        # "'Cost' object has no attribute 'place'".
        (
            {"roofline": Cost(flops=1, bytes=1)},
            "roofline: Expected a Roofline (Roofline(ceilings=..., cost=...)), got Cost",
        ),
        # Named "measured", an argument of Roofline.place, not of profile_report.
        ({"measurement": [2.0, 2.0]}, "measurement: Expected a Measurement, got list"),
        # "'list' object has no attribute 'mode'".
        ({"baseline": [3.0, 3.0]}, "baseline: Expected a Measurement, got list"),
        # A list failed with "'list' object has no attribute 'items'" (terms are a point).
        (
            {"point": [1, 1, 64]},
            "point: Expected a TrialPoint, a mapping of axes to integers ({'b': 32, 's': 1, "
            "'t': 4096}, {'tokens': 4096}) or name=integer terms, got [1, 1, 64]",
        ),
        # Printed as an "est. 150% gain" for the launch remedies.
        (
            {"extra_metrics": {"launch_overhead_pct": 150.0}},
            "extra_metrics['launch_overhead_pct']: Expected a share of the time in [0, 100], "
            "got 150.0",
        ),
    ],
)
def test_profile_report_refuses_arguments_by_name(changes: dict[str, object], message: str) -> None:
    with pytest.raises(InputError) as raised:
        report_with(**changes)
    assert str(raised.value) == message


def test_profile_report_takes_the_ends_of_its_ranges() -> None:
    assert report_with(latency_below_pct=100).bottleneck.value == "Latency-bound"
    assert report_with(latency_below_pct=0).bottleneck.value == "Memory-bound"
    report_with(extra_metrics={"launch_overhead_pct": 0})
    report_with(extra_metrics={"launch_overhead_pct": 100})


@pytest.mark.parametrize(
    "rate", [np.float32(4e12), np.float64(4e12), np.int64(4_000_000_000_000), torch.tensor(4e12)]
)
def test_ceilings_take_rates_of_any_number_type(rate: object) -> None:
    # np.float32 was refused as "Expected a finite number > 0, got np.float32(4e+12)".
    ceilings = Ceilings(gpu="g", copy_bytes_per_s=rate, matmul_flop_per_s=rate)
    assert type(ceilings.copy_bytes_per_s) is float
    assert ceilings.ridge == pytest.approx(1.0)


@pytest.mark.parametrize("rate", ["4e12", True, float("nan"), float("inf"), 0, -1.0, None])
def test_ceilings_still_refuse_what_is_no_rate(rate: object) -> None:
    with pytest.raises(InputError, match="copy_bytes_per_s: Expected a finite number > 0"):
        Ceilings(gpu="g", copy_bytes_per_s=rate, matmul_flop_per_s=1e12)


@pytest.mark.parametrize(
    ("make", "where", "got"),
    [
        (lambda: matmul_cost("4096", 4096, 4096), "m", "'4096'"),
        (lambda: matmul_cost(4096, -1, 4096), "n", "-1"),
        (lambda: matmul_cost(1, 1, 1, elt_bytes=None), "elt_bytes", "None"),
        (lambda: copy_cost("1GiB"), "nbytes", "'1GiB'"),
        (lambda: copy_cost(float("nan")), "nbytes", "nan"),
        (lambda: elementwise_cost(1024, inputs=True), "inputs", "True"),
        (lambda: elementwise_cost(1024, flops_per_element="2"), "flops_per_element", "'2'"),
    ],
)
def test_cost_helpers_refuse_a_size_naming_it(make: object, where: str, got: str) -> None:
    # Text gave a TypeError ("can't multiply sequence by non-int"), and a negative size
    # was named as the cost's flops or bytes, which the caller never passed.
    with pytest.raises(InputError) as raised:
        make()  # type: ignore[operator]
    assert str(raised.value) == f"{where}: Expected a finite number >= 0, got {got}"


def test_cost_helpers_take_numpy_sizes_and_half_byte_elements() -> None:
    # A 4-bit element is half a byte; numpy ints come from shape arithmetic.
    cost = matmul_cost(np.int64(64), 64, 64, elt_bytes=0.5)
    assert cost.flops == 2.0 * 64**3
    assert cost.bytes == (64 * 64 * 2) * 0.5 + 64 * 64 * 0.5
    assert copy_cost(np.int32(8)).bytes == 16.0


@pytest.mark.parametrize(
    ("field", "value", "got"),
    [
        ("copy_bytes", 1.07e9, "1070000000.0"),
        ("matmul_n", None, "None"),
        ("gpu", 3, "3"),
    ],
)
def test_ceilings_the_cache_could_not_read_back_are_not_saved(
    tmp_path: Path, field: str, value: object, got: str
) -> None:
    # Saved, the entry made every later load_ceilings of that GPU (and so
    # measure_ceilings without refresh=True) fail with a FormatError on the cache. Such
    # ceilings are refused when made, naming the field, so none reaches the cache.
    cache = tmp_path / "ceilings.json"
    save_ceilings(H200, path=cache)
    before = cache.read_bytes()
    with pytest.raises(InputError) as raised:
        save_ceilings(attrs.evolve(H200, **{field: value}), path=cache)
    assert str(raised.value).startswith(f"{field}: Expected ")
    assert str(raised.value).endswith(f", got {got}")
    assert cache.read_bytes() == before
    assert load_ceilings("NVIDIA H200", path=cache) == H200


def test_saved_ceilings_read_back_equal(tmp_path: Path) -> None:
    measured = Ceilings(
        gpu="NVIDIA H100 80GB HBM3",
        copy_bytes_per_s=np.float32(3.02e12),
        matmul_flop_per_s=674e12,
        copy_bytes=1 << 30,
        matmul_n=8192,
    )
    cache = save_ceilings(measured, path=tmp_path / "ceilings.json")
    assert load_ceilings("NVIDIA H100 80GB HBM3", path=cache) == measured


# --- the guards --------------------------------------------------------------------------


def test_input_sets_given_as_mappings_are_passed_by_keyword() -> None:
    # The timer's inputs= takes mappings as keyword arguments; the guard called fn(*mapping)
    # and so fn("x"), failing with "'str' object has no attribute 'exp'".
    calls: list[tuple[tuple[object, ...], dict[str, object]]] = []

    def kernel(*args: object, **kwargs: torch.Tensor) -> torch.Tensor:
        calls.append((args, kwargs))
        return kwargs["x"].exp()

    first, second = torch.randn(8), torch.randn(8)
    check_responds_to_inputs(kernel, [{"x": first}, {"x": second}])
    assert [args for args, _ in calls] == [(), ()]
    assert [kwargs["x"] for _, kwargs in calls] == [first, second]


def test_mapping_sets_that_do_not_respond_are_still_caught() -> None:
    frozen = torch.randn(4)
    with pytest.raises(InputError, match="identical outputs for input sets 0 and 1"):
        check_responds_to_inputs(lambda x: frozen, [{"x": torch.randn(4)}, {"x": torch.randn(4)}])


def test_a_lone_tensor_as_an_input_set_is_refused_naming_it() -> None:
    # fn(*tensor) passed the tensor's rows as arguments: "takes 1 positional argument but
    # 4 were given", from inside the user's function.
    ran: list[object] = []
    with pytest.raises(InputError) as raised:
        check_responds_to_inputs(lambda x: ran.append(x) or x, [torch.randn(4), torch.randn(4)])
    assert str(raised.value) == (
        "input_sets[0]: Expected an argument tuple or mapping (a lone tensor x is the set "
        "(x,)), got Tensor"
    )
    assert ran == []


@pytest.mark.parametrize(
    ("sets", "got"),
    [
        (((torch.randn(4),) for _ in range(2)), "generator"),
        ({"x": torch.randn(4)}, "dict"),
        ("xy", "str"),
    ],
)
def test_input_sets_that_are_no_list_are_refused(sets: object, got: str) -> None:
    # A generator failed with "object of type 'generator' has no len()".
    with pytest.raises(
        InputError, match=f"input_sets: Expected input sets as a list .*, got {got}"
    ):
        check_responds_to_inputs(lambda x: x, sets)  # type: ignore[arg-type]


def test_a_function_returning_nothing_is_told_to_name_its_outputs() -> None:
    # It wrote into a buffer and returned None: "Expected a tensor or a sequence of
    # tensors, got NoneType" did not say that outputs= was what was missing.
    out = torch.empty(4)
    sets = [(torch.randn(4),), (torch.randn(4),)]

    def kernel(x: torch.Tensor) -> None:
        out.copy_(x.exp())

    with pytest.raises(InputError) as raised:
        check_responds_to_inputs(kernel, sets)
    assert str(raised.value) == (
        "Expected fn to return its output tensors, or outputs= naming the buffers it "
        "writes, got NoneType from input set 0"
    )
    check_responds_to_inputs(kernel, sets, outputs=out)


def test_returned_tensors_in_a_mapping_are_the_output() -> None:
    check_responds_to_inputs(
        lambda x: {"y": x * 2, "z": [x + 1]}, [(torch.randn(4),), (torch.randn(4),)]
    )


# --- the verdicts (already right; kept so they stay so) ----------------------------------


def test_identical_constant_samples_are_the_same_version() -> None:
    result = judge([10.0] * 20, [10.0] * 20)
    assert (result.verdict, result.ratio, result.noise) == (Verdict.SAME, 1.0, 0.0)


def test_a_constant_change_below_min_effect_is_no_win() -> None:
    assert judge([10.0] * 20, [9.95] * 20).verdict is Verdict.SAME
    assert judge([10.0] * 20, [9.0] * 20).verdict is Verdict.FAST


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), 0.0, -1.0])
def test_a_sample_that_is_no_time_is_refused(bad: float) -> None:
    with pytest.raises(InputError, match="baseline: Expected finite positive samples"):
        judge([10.0, 10.0, bad, 10.0], [9.0] * 4)


def test_very_noisy_samples_give_no_verdict_either_way() -> None:
    rng = np.random.default_rng(1)
    baseline = list(10 * np.exp(rng.normal(0, 0.5, 50)))
    candidate = list(0.8 * 10 * np.exp(rng.normal(0, 0.5, 50)))
    assert judge(baseline, candidate).verdict is Verdict.UNCLEAR


def test_two_versions_of_one_distribution_are_rarely_called_different() -> None:
    # 200 comparisons of one 3 %-noisy version against itself, 8 pairs each: a verdict
    # FAST or SLOW would be a difference the samples do not hold.
    rng = np.random.default_rng(0)
    wrong = 0
    for _ in range(200):
        a, b = (list(10 * np.exp(rng.normal(0, 0.03, 8))) for _ in range(2))
        wrong += judge(a, b, resamples=300).verdict in (Verdict.FAST, Verdict.SLOW)
    assert wrong <= 10

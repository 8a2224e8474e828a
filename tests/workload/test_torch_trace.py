"""PyTorch profiler traces: real CPU traces from this venv, and kernel-time attribution."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kernelopt._errors import InputError
from kernelopt.workload import TensorArg, detect_format, profile_calls, read_torch_trace, read_trace
from kernelopt.workload.torch_trace import trace_from_events


def test_softmax_topk_trace(data: Path) -> None:
    trace = read_trace(data / "softmax_topk_cpu.json")
    assert trace.format == "torch-profiler" and trace.skipped == 0
    calls = {op: sum(g.calls for g in trace.groups if g.call.op == op) for op in trace.ops}
    assert calls["aten::softmax"] == 4 and calls["aten::topk"] == 3 and calls["aten::sum"] == 2
    topk = next(g.call for g in trace.groups if g.call.op == "aten::topk" and g.calls == 2)
    assert [a.name for a in topk.args] == ["self", "k", "dim", "largest", "sorted"]
    # The profiler's "Input Strides" are kept: they show expanded (stride 0) inputs.
    assert topk.arg("self") == TensorArg(
        name="self", shape=(4, 16), dtype="float32", stride=(16, 1)
    )
    assert topk.arg("k").value == 16  # type: ignore[union-attr]
    softmax = profile_calls(trace, op="aten::softmax").op()
    n = softmax.axis("n")
    assert n is not None and n.size1_share == 0.75 and n.source == "self.shape[dim]"
    assert softmax.timed and softmax.timed_calls == 4
    total = profile_calls(trace, op="aten::sum").op().axis("n")
    assert total is not None and total.size1_share == 1.0


def test_sdpa_trace_names_query_key_value(data: Path) -> None:
    profile = profile_calls(
        read_torch_trace(data / "sdpa_one_key_cpu.json"), op="aten::scaled_dot_product_attention"
    )
    op = profile.op()
    assert op.signature == "attention" and op.calls == 3
    s_kv = op.axis("s_kv")
    assert s_kv is not None and s_kv.source == "key.shape[2]"
    assert s_kv.share_of(1).calls == 2  # type: ignore[union-attr]
    assert s_kv.share_of(16).calls == 1  # type: ignore[union-attr]


def test_detected_format(data: Path) -> None:
    assert detect_format(data / "softmax_topk_cpu.json") == "torch-profiler"


def test_a_pretty_printed_trace_is_decoded_once(
    data: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The profiler writes indented JSON: telling its format decodes the whole document,
    # which the reader then takes instead of decoding the file again.
    from kernelopt.workload import torch_trace, traces

    loads: list[object] = []

    def counted(path: object) -> object:
        loads.append(path)
        return torch_trace.load_json(path)  # type: ignore[arg-type]

    monkeypatch.setattr(traces, "load_json", counted)
    trace = read_trace(data / "sdpa_one_key_cpu.json")
    assert len(loads) == 1 and trace.calls
    loads.clear()
    assert read_trace(data / "sdpa_one_key_cpu.json", format="torch-profiler").calls
    assert len(loads) == 1


def _op(name: str, ts: float, dur: float, ext: int, dims: list, types: list, tid: int = 1) -> dict:
    return {
        "ph": "X",
        "cat": "cpu_op",
        "name": name,
        "pid": 1,
        "tid": tid,
        "ts": ts,
        "dur": dur,
        "args": {
            "External id": ext,
            "Input Dims": dims,
            "Input type": types,
            "Concrete Inputs": ["" for _ in dims],
        },
    }


def _kernel(ts: float, dur: float, ext: int) -> dict:
    return {
        "ph": "X",
        "cat": "kernel",
        "name": "k",
        "pid": 0,
        "tid": 7,
        "ts": ts,
        "dur": dur,
        "args": {"External id": ext, "correlation": ext},
    }


def test_device_time_goes_to_the_op_and_its_parents() -> None:
    events = [
        _op("aten::softmax", 0, 100, 1, [[4, 1]], ["c10::BFloat16"]),
        _op("aten::_softmax", 10, 80, 2, [[4, 1]], ["c10::BFloat16"]),  # nested, launches
        _kernel(500, 3.5, 2),
        _op("aten::softmax", 200, 100, 3, [[4, 1]], ["c10::BFloat16"]),
        _op("aten::_softmax", 210, 80, 4, [[4, 1]], ["c10::BFloat16"]),
        _kernel(600, 4.5, 4),
        _kernel(610, 1.0, 4),
    ]
    trace = trace_from_events({"traceEvents": events}, source="x")
    # aten::_softmax is how aten::softmax runs: one call each time, not two.
    times = {g.call.op: (g.calls, g.time_us) for g in trace.groups}
    assert times == {"aten::softmax": (2, 9.0)} and trace.records == 4
    assert "durations are GPU kernel time per op (nested ops included)" in trace.notes
    assert (
        "2 op calls nested in a call of the same op counted once, as the outer call "
        "(aten::_softmax in aten::softmax)" in trace.notes
    )
    host = trace_from_events({"traceEvents": events}, source="x", time="host")
    assert {g.call.op: g.time_us for g in host.groups} == {"aten::softmax": 200.0}
    # Another op nested inside (a GEMM in a linear layer) is its own call.
    other = [
        _op("aten::linear", 0, 100, 1, [[4, 8]], ["float"]),
        _op("aten::addmm", 10, 80, 2, [[4, 8]], ["float"]),
    ]
    mixed = trace_from_events({"traceEvents": other}, source="x", time="host")
    assert {g.call.op: g.time_us for g in mixed.groups} == {
        "aten::linear": 100.0,
        "aten::addmm": 80.0,
    }
    with pytest.raises(InputError, match="GPU kernel events"):
        trace_from_events({"traceEvents": events[:2]}, source="x", time="device")
    with pytest.raises(InputError, match="time in"):
        trace_from_events({"traceEvents": events}, source="x", time="wall")


def test_malformed_events_and_traces_without_shapes() -> None:
    events = [
        _op("aten::mm", 0, 1, 1, [[2, -3], [3, 4]], ["float", "float"]),
        _op("aten::mm", 5, 1, 2, [[2, 3], [3, 4]], ["float", "float"]),
        {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "ts": 9, "dur": 1, "args": {}},
        "not an event",
    ]
    trace = trace_from_events(events, source="x")
    assert trace.calls == 1 and trace.skipped == 2
    assert any("event 0 (aten::mm)" in n and "dims in [0, 2**40]" in n for n in trace.notes)
    unshaped = trace_from_events([events[2]], source="x")
    assert unshaped.calls == 0
    assert any("record_shapes=True" in n for n in unshaped.notes)
    with pytest.raises(InputError, match="'traceEvents' list"):
        trace_from_events({"traceEvents": 3}, source="x")


def test_a_trace_recorded_now_without_shapes(tmp_path: Path) -> None:
    import torch
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU], record_shapes=False) as prof:
        torch.softmax(torch.ones(2, 3), dim=-1)
    path = tmp_path / "noshapes.json"
    prof.export_chrome_trace(str(path))
    trace = read_trace(path)
    assert trace.calls == 0 and any("record_shapes=True" in n for n in trace.notes)


def test_gzip_trace(tmp_path: Path, data: Path) -> None:
    import gzip

    packed = tmp_path / "t.json.gz"
    packed.write_bytes(gzip.compress((data / "softmax_topk_cpu.json").read_bytes()))
    assert read_trace(packed).calls == read_trace(data / "softmax_topk_cpu.json").calls
    broken = tmp_path / "b.json"
    broken.write_text(json.dumps({"traceEvents": []})[:-3])
    with pytest.raises(InputError, match="Expected a JSON document"):
        read_torch_trace(broken)


@pytest.mark.gpu
def test_cuda_trace_gets_kernel_time(tmp_path: Path) -> None:
    import torch
    from torch.profiler import ProfilerActivity, profile

    x = torch.randn(256, 1, 1024, device="cuda")
    with profile(
        activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], record_shapes=True
    ) as prof:
        for _ in range(4):
            torch.softmax(x, dim=1)
        torch.cuda.synchronize()
    path = tmp_path / "cuda.json"
    prof.export_chrome_trace(str(path))
    trace = read_trace(path)
    assert "durations are GPU kernel time per op (nested ops included)" in trace.notes
    op = profile_calls(trace, op="aten::softmax").op()
    assert op.calls == 4 and op.time_us is not None and op.time_us > 0
    n = op.axis("n")
    assert n is not None and n.size1_share == 1.0


def _softmax_event(ts: int, n: int, dims: object = None) -> dict[str, object]:
    return {
        "ph": "X",
        "cat": "cpu_op",
        "name": "aten::softmax",
        "ts": ts,
        "dur": 1,
        "args": {
            "Input Dims": [[4, n], [], []] if dims is None else dims,
            "Input type": ["float", "Scalar", ""],
            "Concrete Inputs": ["", "-1", ""],
        },
    }


def test_repeated_events_are_decoded_once_per_distinct_signature(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A model step repeats a few signatures thousands of times: the arguments of each
    # distinct one are parsed once, so time follows the distinct shapes.
    from kernelopt.workload import torch_trace

    parsed = []
    original = torch_trace._event_args

    def counting(*args: object) -> object:
        parsed.append(args[0])
        return original(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(torch_trace, "_event_args", counting)
    events = [_softmax_event(10 * i, 1 + i % 3) for i in range(3000)]
    events += [_softmax_event(40000 + 10 * i, 0, dims=[[4, -1], [], []]) for i in range(50)]
    trace = trace_from_events({"traceEvents": events}, source="step")
    assert len(parsed) == 4  # three shapes and one malformed signature
    assert sorted(g.calls for g in trace.groups) == [1000, 1000, 1000]
    assert trace.records == 3050 and trace.skipped == 50
    assert sum(g.time_us for g in trace.groups) == 3000.0
    assert trace.notes[0].startswith("event 3000 (aten::softmax): self.shape: Expected dims")
    assert trace.notes[-1] == "... and 30 more malformed op events"


def test_a_reduction_over_every_dim_with_a_dtype_is_not_read_as_a_dim(tmp_path: Path) -> None:
    # aten::sum(self, *, dtype) records two inputs, the second the dtype's ScalarType
    # number (int8: 1), which a reader of sum.dim_IntList(self, dim, ...) takes for dim=1.
    torch = pytest.importorskip("torch")
    from torch.profiler import ProfilerActivity, profile

    from kernelopt.workload import find_shortcuts

    mask = torch.arange(8).view(8, 1) % 3 == 0
    scores = torch.randn(8, 1, dtype=torch.float64)
    with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
        total = mask.sum(dtype=torch.int8)  # every element: 3 of 8
        product = torch.prod(scores, dtype=torch.float16)
        mean = torch.mean(scores, dtype=torch.float32)
    path = tmp_path / "sums.json"
    prof.export_chrome_trace(str(path))
    assert total.item() == 3 and product.dtype == torch.float16 and mean.dtype == torch.float32
    trace = read_torch_trace(path)
    for op in ("aten::sum", "aten::prod", "aten::mean"):
        call = next(g.call for g in trace.groups if g.call.op == op)
        assert call.arg("dim") is None and call.arg("dtype") is not None, call
        reduced = profile_calls(trace, op=op).op().axis("n")
        assert reduced is not None and reduced.max == 8, (op, reduced)
    found = {s.op for s in find_shortcuts(profile_calls(trace)) if s.rule == "size1-reduction"}
    assert not found, found


def _begin_end(event: dict, *, end_args: dict | None = None) -> tuple[dict, dict]:
    """An X event written as a B/E pair, the end with its own args (or none)."""
    begin = {k: v for k, v in event.items() if k != "dur"}
    begin["ph"] = "B"
    end = {"ph": "E", "pid": event["pid"], "tid": event["tid"], "ts": event["ts"] + event["dur"]}
    if end_args is not None:
        end["args"] = end_args
    return begin, end


def test_begin_end_pairs_are_read_as_complete_events_per_thread() -> None:
    outer_b, outer_e = _begin_end(_op("aten::linear", 0, 100, 1, [[4, 8]], ["float"]))
    inner_b, inner_e = _begin_end(_op("aten::addmm", 10, 80, 2, [[4, 8]], ["float"]))
    # Another thread, interleaved: its E must not close the first thread's B.
    other_b, other_e = _begin_end(_op("aten::addmm", 20, 30, 3, [[2, 8]], ["float"], tid=2))
    events = [outer_b, inner_b, other_b, other_e, inner_e, outer_e]
    trace = trace_from_events({"traceEvents": events}, source="x", time="host")
    times = sorted((g.call.op, g.calls, g.time_us) for g in trace.groups)
    assert times == [("aten::addmm", 1, 30.0), ("aten::addmm", 1, 80.0), ("aten::linear", 1, 100.0)]
    assert trace.records == 3 and trace.skipped == 0
    assert not any("'B'" in n or "'E'" in n for n in trace.notes)
    # The same calls written as complete events read the same.
    complete = [
        _op("aten::linear", 0, 100, 1, [[4, 8]], ["float"]),
        _op("aten::addmm", 10, 80, 2, [[4, 8]], ["float"]),
        _op("aten::addmm", 20, 30, 3, [[2, 8]], ["float"], tid=2),
    ]
    assert trace_from_events(complete, source="x", time="host").groups == trace.groups


def test_a_nested_pair_of_the_same_op_counts_once_and_gets_kernel_time() -> None:
    outer_b, outer_e = _begin_end(_op("aten::softmax", 0, 100, 1, [[4, 1]], ["float"]))
    inner_b, inner_e = _begin_end(_op("aten::_softmax", 10, 80, 2, [[4, 1]], ["float"]))
    kernel_b, kernel_e = _begin_end(_kernel(500, 3.5, 2))
    events = [outer_b, inner_b, inner_e, outer_e, kernel_b, kernel_e]
    trace = trace_from_events(events, source="x")
    assert {g.call.op: (g.calls, g.time_us) for g in trace.groups} == {"aten::softmax": (1, 3.5)}


def test_the_end_events_args_are_merged_over_the_begins() -> None:
    begin, end = _begin_end(
        _op("aten::mm", 0, 5, 1, [[2, 3], [3, 4]], ["float", "float"]),
        end_args={"Input Dims": [[2, 6], [6, 4]]},
    )
    trace = trace_from_events([begin, end], source="x")
    (group,) = trace.groups
    assert [a.shape for a in group.call.args if isinstance(a, TensorArg)] == [(2, 6), (6, 4)]


def test_unmatched_begin_and_end_events_are_skipped_with_a_note() -> None:
    ok_b, ok_e = _begin_end(_op("aten::mm", 10, 5, 1, [[2, 3], [3, 4]], ["float", "float"]))
    open_b, _ = _begin_end(_op("aten::mm", 20, 5, 2, [[2, 3], [3, 4]], ["float", "float"]))
    stray_e = {"ph": "E", "pid": 1, "tid": 1, "ts": 5}  # before any B on its thread
    late_b, late_e = _begin_end(_op("aten::bmm", 40, 5, 3, [[1, 2, 3]], ["float"]))
    late_e["ts"] = 30  # ends before it begins
    events = [stray_e, ok_b, ok_e, open_b, late_b, late_e]
    trace = trace_from_events(events, source="x", time="host")
    assert [(g.call.op, g.time_us) for g in trace.groups] == [("aten::mm", 5.0)]
    assert "skipped 1 'E' event without an open 'B' event on the same thread" in trace.notes
    assert "skipped 1 'B' event (an op or kernel) without an 'E' event to end" in trace.notes
    assert any(n.startswith("event 4 (aten::bmm): dur: Expected a duration") for n in trace.notes)
    assert trace.records == 3 and trace.skipped == 2

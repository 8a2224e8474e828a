"""The Recorder: what it writes, how it wraps, and that it needs no torch for itself."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import types
import warnings
from pathlib import Path

import numpy as np
import pytest
import torch

from kernelopt._errors import DeviceError, InputError
from kernelopt.workload import (
    Recorder,
    TensorArg,
    ValuesSummary,
    find_shortcuts,
    profile_trace,
    read_trace,
)


def test_decorator_records_shapes_scalars_and_values(tmp_path: Path) -> None:
    path = tmp_path / "calls.jsonl"
    recorder = Recorder(path, values=("cache_seqlens",))

    @recorder
    def mla_decode(q, kv_cache, cache_seqlens, softmax_scale, *, causal=False, plan=None):  # type: ignore[no-untyped-def]
        return q

    q = torch.zeros(4, 1, 16, 576, dtype=torch.bfloat16)
    kv = torch.zeros(8, 64, 1, 576, dtype=torch.bfloat16)
    lens = torch.tensor([5, 5, 5, 5], dtype=torch.int32)
    with recorder:
        for _ in range(3):
            assert mla_decode(q, kv, lens, 0.125, causal=True, plan=object()) is q
        mla_decode(q, kv, torch.tensor([1, 2, 3, 10], dtype=torch.int32), 0.125, causal=True)
    assert recorder.calls == 4
    first = json.loads(path.read_text().splitlines()[0])
    assert first == {
        "op": "test_decorator_records_shapes_scalars_and_values.<locals>.mla_decode",
        "args": {
            "q": {"shape": [4, 1, 16, 576], "dtype": "bfloat16"},
            "kv_cache": {"shape": [8, 64, 1, 576], "dtype": "bfloat16"},
            "cache_seqlens": {
                "shape": [4],
                "dtype": "int32",
                "values": {"min": 5.0, "max": 5.0, "mean": 5.0, "std": 0.0},
            },
            "softmax_scale": 0.125,
            "causal": True,
        },
    }
    trace = read_trace(path)
    # Values summaries do not split shapes: they become histograms of the one shape.
    assert trace.calls == 4 and trace.skipped == 0 and len(trace.groups) == 1
    (group,) = trace.groups
    assert group.call.arg("cache_seqlens") == TensorArg(
        name="cache_seqlens", shape=(4,), dtype="int32"
    )
    (hist,) = group.values
    assert hist.arg == "cache_seqlens"
    assert [(b.value, b.calls) for b in hist.max] == [(5.0, 3), (10.0, 1)]
    assert [(b.value, b.calls) for b in hist.mean] == [(4.0, 1), (5.0, 3)]
    assert [(b.value, b.calls) for b in hist.uniform] == [(0.0, 1), (1.0, 3)]
    assert ValuesSummary(min=1, max=10, mean=4).max == 10


def test_named_op_feeds_the_signature_and_rules(tmp_path: Path) -> None:
    path = tmp_path / "calls.jsonl"
    recorder = Recorder(path, time="host", values=("cache_seqlens",))
    decode = recorder(lambda q, kv_cache, cache_seqlens: None, op="mla_decode")
    with recorder:
        for _ in range(5):
            decode(
                torch.zeros(2, 1, 8, 576),
                torch.zeros(4, 64, 1, 576),
                torch.tensor([7, 7], dtype=torch.int32),
            )
    op = profile_trace(path).op()
    assert op.signature == "mla_decode" and op.timed_calls == 5 and op.time_us is not None
    assert {s.rule for s in find_shortcuts(op)} >= {"uniform-lengths", "size1-axis"}


def test_patch_wraps_for_the_block_only_and_restores_on_error(tmp_path: Path) -> None:
    module = types.SimpleNamespace(softmax=lambda x, dim=-1: x)
    original = module.softmax
    recorder = Recorder(tmp_path / "calls.jsonl")
    with recorder.patch(module, "softmax"):
        assert module.softmax is not original
        module.softmax(torch.zeros(3, 1), dim=1)
    assert module.softmax is original
    module.softmax(torch.zeros(3, 1))  # not recorded
    with pytest.raises(RuntimeError), recorder.patch(module, "softmax"):
        module.softmax(torch.zeros(2, 2))
        raise RuntimeError("boom")
    assert module.softmax is original
    lines = [json.loads(x) for x in (tmp_path / "calls.jsonl").read_text().splitlines()]
    assert [x["op"] for x in lines] == ["softmax", "softmax"]
    assert lines[0]["args"] == {"x": {"shape": [3, 1], "dtype": "float32"}, "dim": 1}


def test_paused_lists_and_positional_extras(tmp_path: Path) -> None:
    path = tmp_path / "calls.jsonl"
    recorder = Recorder(path, append=False)

    @recorder(op="cat")
    def cat(*tensors, dim=0):  # type: ignore[no-untyped-def]
        return None

    with recorder:
        cat(torch.zeros(2), torch.zeros(3), dim=0)
        with recorder.paused():
            cat(torch.zeros(2))
        cat([torch.zeros(1, dtype=torch.int64), torch.zeros(2, dtype=torch.int64)], dim=(0, 1))
    lines = [json.loads(x) for x in path.read_text().splitlines()]
    assert len(lines) == 2
    assert lines[0]["args"] == {
        "arg0": {"shape": [2], "dtype": "float32"},
        "arg1": {"shape": [3], "dtype": "float32"},
        "dim": 0,
    }
    assert lines[1]["args"]["arg0"] == [
        {"shape": [1], "dtype": "int64"},
        {"shape": [2], "dtype": "int64"},
    ]
    assert lines[1]["args"]["dim"] == [0, 1]
    assert read_trace(path).skipped == 0


def test_manual_record_append_and_overwrite(tmp_path: Path) -> None:
    path = tmp_path / "calls.jsonl"
    path.write_text('{"op": "old"}\n')
    recorder = Recorder(path)
    recorder.record("f", {"x": torch.zeros(2, 2), "k": 3}, duration_us=1.5)
    recorder.close()
    assert [json.loads(x)["op"] for x in path.read_text().splitlines()] == ["old", "f"]
    fresh = Recorder(path, append=False)
    fresh.record("g", {})
    fresh.close()
    assert path.read_text() == '{"op":"g","args":{}}\n'
    with pytest.raises(InputError, match=r"a duration in \[0, 1e12\] us"):
        fresh.record("g", {}, duration_us=-1.0)
    with pytest.raises(InputError, match="time in"):
        Recorder(path, time="wall")


def test_flush_every_writes_in_batches(tmp_path: Path) -> None:
    path = tmp_path / "calls.jsonl"
    recorder = Recorder(path, flush_every=2)
    for _ in range(3):
        recorder.record("f", {})
    assert len(path.read_text().splitlines()) == 2  # one call still buffered
    recorder.flush()
    assert len(path.read_text().splitlines()) == 3


def test_recording_duck_typed_arrays_imports_no_torch(tmp_path: Path) -> None:
    code = f"""
import sys
from kernelopt.workload import Recorder, read_trace

class Array:
    def __init__(self, *shape): self.shape, self.dtype = shape, "float16"
    def min(self): return 1
    def max(self): return 9
    def mean(self): return 4.5

rec = Recorder({str(tmp_path / "c.jsonl")!r}, time="host", values=("lens",))
fn = rec(lambda x, lens, k: None, op="topk")
with rec:
    fn(Array(4, 100), Array(4), k=100)
trace = read_trace({str(tmp_path / "c.jsonl")!r})
print(trace.calls, trace.groups[0].call.label, trace.groups[0].values[0].mean[0].value)
print(",".join(m for m in ("torch", "numpy", "triton") if m in sys.modules))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    first, imported = out.stdout.splitlines()
    assert first == "1 x=[4,100]:float16 lens=[4]:float16 k=100 4.5"
    assert imported == ""


def test_wrapping_a_torch_builtin(tmp_path: Path) -> None:
    path = tmp_path / "calls.jsonl"
    recorder = Recorder(path, time="host")
    softmax = recorder(torch.softmax, op="softmax")
    topk = recorder(torch.topk, op="topk")
    with recorder:
        softmax(torch.randn(8, 1, 32), dim=1)
        topk(torch.randn(4, 16), 16)
    found = {s.rule for s in find_shortcuts(profile_trace(path))}
    assert {"size1-reduction", "select-all"} <= found


@pytest.mark.gpu
def test_cuda_event_timing(tmp_path: Path) -> None:
    path = tmp_path / "calls.jsonl"
    recorder = Recorder(path, time="cuda")
    softmax = recorder(torch.softmax, op="softmax")
    x = torch.randn(512, 1, 4096, device="cuda")
    with recorder:
        for _ in range(8):
            softmax(x, dim=1)
    op = profile_trace(path).op()
    assert op.timed_calls == 8 and op.time_us is not None and op.time_us > 0
    assert {s.rule for s in find_shortcuts(op)} >= {"size1-reduction"}


def test_cuda_timing_without_a_device_fails_at_construction(tmp_path: Path) -> None:
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("the machine has a CUDA device")
    with pytest.raises(DeviceError, match="Expected a CUDA device for time='cuda'"):
        Recorder(tmp_path / "calls.jsonl", time="cuda")
    assert not (tmp_path / "calls.jsonl").exists()


def test_the_spread_of_recorded_lengths_reaches_the_catalog(tmp_path: Path) -> None:
    # Ragged batches: the recorder keeps each batch's std, the profile its coefficient of
    # variation, and the catalog's seqlen_cv > 0.3 condition (paged KV cache) can fire.
    from kernelopt.catalog import Catalog
    from kernelopt.workload import shape_facts

    path = tmp_path / "calls.jsonl"
    recorder = Recorder(path, values=("cache_seqlens",))

    @recorder
    def mla_decode(q, kv_cache, block_table, cache_seqlens, softmax_scale):  # type: ignore[no-untyped-def]
        return q

    q = torch.zeros(4, 1, 16, 576, dtype=torch.float16)
    kv = torch.zeros(8, 64, 1, 576, dtype=torch.float16)
    table = torch.zeros(4, 2, dtype=torch.int32)
    with recorder:
        for lengths in ([10, 100, 40, 128], [12, 90, 35, 120], [20, 100, 50, 110]):
            mla_decode(q, kv, table, torch.tensor(lengths, dtype=torch.int32), 0.07)
    stds = [json.loads(line)["args"]["cache_seqlens"]["values"]["std"]
            for line in path.read_text().splitlines()]  # fmt: skip
    assert stds[0] == pytest.approx(
        float(torch.tensor([10, 100, 40, 128.0]).std(unbiased=False)), abs=1e-3
    )
    profile = profile_trace(path)
    facts = shape_facts(profile)
    cvs = [float(torch.tensor(x, dtype=torch.float64).std(unbiased=False) / torch.tensor(
        x, dtype=torch.float64).mean()) for x in ([10, 100, 40, 128], [12, 90, 35, 120],
                                                  [20, 100, 50, 110])]  # fmt: skip
    assert facts["seqlen_cv"] == pytest.approx(sorted(cvs)[1], rel=1e-2)  # the median call
    ids = [m.entry.id for m in Catalog.builtin().query(shape=facts)]
    assert "paged-kv-cache" in ids


def test_recorded_strides_show_an_expanded_gather_index(tmp_path: Path) -> None:
    # torch.gather has no inspectable signature: its arguments are recorded as arg0..arg2.
    path = tmp_path / "calls.jsonl"
    recorder = Recorder(path, strides="arg2")  # one name given as a string
    gather = recorder(torch.gather, op="gather")
    x, picks = torch.randn(4, 1000), torch.randint(0, 1000, (8,))
    with recorder:
        for _ in range(3):
            gather(x, 1, picks.view(1, 8).expand(4, 8))
        gather(x, 1, picks.repeat(4, 1))
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert lines[0]["args"]["arg2"]["stride"] == [0, 1]
    assert lines[3]["args"]["arg2"]["stride"] == [8, 1]
    assert "stride" not in lines[0]["args"]["arg0"]  # only the named arguments
    (hit,) = [s for s in find_shortcuts(profile_trace(path)) if s.rule == "gather-index-select"]
    assert hit.call_share == 0.75 and "recorded stride 0" in hit.message


def test_a_path_that_cannot_be_written_is_refused_at_construction(tmp_path: Path) -> None:
    # Found at the first flush (often at exit), the error would lose every recorded call.
    with pytest.raises(InputError, match=r"path: Expected a file path, got .* \(a directory\)"):
        Recorder(tmp_path)
    blocker = tmp_path / "file.txt"
    blocker.write_text("x")
    with pytest.raises(InputError, match="path: Expected a path whose directory can be created"):
        Recorder(blocker / "calls.jsonl")
    with pytest.raises(InputError, match=r"path: Expected a file path \(str or Path\), got int"):
        Recorder(123)  # type: ignore[arg-type]
    nested = tmp_path / "a" / "b" / "calls.jsonl"
    Recorder(nested)
    assert nested.parent.is_dir()  # created now, as the first flush would


def test_a_file_where_the_folder_goes_is_named(tmp_path: Path) -> None:
    # "(File exists)" named neither the file in the way nor why a folder was wanted.
    blocker = tmp_path / "file.txt"
    blocker.write_text("x")
    for path in (blocker / "calls.jsonl", blocker / "deep" / "calls.jsonl"):
        with pytest.raises(InputError, match=re.escape(f"got {path} ({blocker} is a file)")):
            Recorder(path)
    assert [p.name for p in tmp_path.iterdir()] == ["file.txt"]
    with pytest.raises(InputError, match=r"^path: Expected a file path, got an empty path$"):
        Recorder("")  # "" is the working directory, which no message should name


def test_an_unwritable_directory_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import os

    # Permission bits do not stop root, so the check itself is made to fail.
    monkeypatch.setattr(os, "access", lambda *_args, **_kwargs: False)
    with pytest.raises(InputError, match="path: Expected a path in a writable directory"):
        Recorder(tmp_path / "calls.jsonl")
    (tmp_path / "old.jsonl").write_text("")
    with pytest.raises(InputError, match="path: Expected a writable file"):
        Recorder(tmp_path / "old.jsonl")


def test_recorder_arguments_are_checked(tmp_path: Path) -> None:
    path = tmp_path / "calls.jsonl"
    with pytest.raises(InputError, match="flush_every: Expected flush_every as an integer"):
        Recorder(path, flush_every="10")  # type: ignore[arg-type]
    with pytest.raises(InputError, match="values: Expected argument names"):
        Recorder(path, values=(1, 2))  # type: ignore[arg-type]
    recorder = Recorder(path, values="lens")
    assert recorder.values == frozenset({"lens"})  # a name, not its letters
    with pytest.raises(InputError, match="op: Expected an op name"):
        recorder.record(None, {})  # type: ignore[arg-type]
    with pytest.raises(InputError, match="Expected args as a mapping"):
        recorder.record("f", [1])  # type: ignore[arg-type]
    with pytest.raises(InputError, match="duration_us: Expected a duration"):
        recorder.record("f", {}, duration_us="1")  # type: ignore[arg-type]
    with pytest.raises(InputError, match="op: Expected an op name"):
        recorder(op=3)  # type: ignore[call-overload]
    with pytest.raises(InputError, match="fn: Expected a function to record"):
        recorder.wrap(5)  # type: ignore[type-var]
    assert recorder.calls == 0


@pytest.mark.slow
def test_decorated_functions_keep_their_type(request: pytest.FixtureRequest) -> None:
    api = pytest.importorskip("mypy.api")
    code = """
from kernelopt.workload import Recorder
recorder = Recorder("calls.jsonl")
@recorder
def f(x: int, y: str = "a") -> float:
    return 1.0
@recorder(op="g")
def g(x: int) -> list[int]:
    return [x]
reveal_type(f)
reveal_type(g)
reveal_type(recorder.wrap(g))
"""
    # Without pytest's cache plugin (-p no:cacheprovider) the config has no cache at all.
    store = getattr(request.config, "cache", None)
    cache = store.mkdir("mypy") if store is not None else Path(".mypy_cache")
    cache.mkdir(parents=True, exist_ok=True)  # a checkout where mypy never ran has none
    config = cache / "empty.ini"
    config.write_text("[mypy]\n")
    out, err, _status = api.run(
        [f"--config-file={config}", f"--cache-dir={cache}", "--follow-imports=silent", "-c", code]
    )
    revealed = [
        line.split("Revealed type is ", 1)[1] for line in out.splitlines() if "Revealed" in line
    ]
    assert revealed == [
        '"def (x: int, y: str =) -> float"',
        '"def (x: int) -> list[int]"',
        '"def (x: int) -> list[int]"',
    ], out + err


def test_a_call_recorded_while_another_thread_flushes_is_kept(tmp_path: Path) -> None:
    # flush() joins the buffered lines, then empties the buffer. Another thread's call can
    # land in between (recording takes no lock); emptying must not drop it with the lines
    # just written. The interleaving is made certain here: the buffer records a call at the
    # moment the lines written so far are taken out of it.
    recorder = Recorder(tmp_path / "calls.jsonl", append=False)

    class Interleaved(list):  # type: ignore[type-arg]
        fired = False

        def _other_thread(self) -> None:
            if not self.fired:
                self.fired = True
                recorder.record("op", {"n": 1})

        def clear(self) -> None:
            self._other_thread()
            super().clear()

        def __delitem__(self, index: object) -> None:
            self._other_thread()
            super().__delitem__(index)  # type: ignore[arg-type]

    recorder.record("op", {"n": 0})
    recorder._buffer = Interleaved(recorder._buffer)
    recorder.flush()
    recorder.close()
    lines = (tmp_path / "calls.jsonl").read_text().splitlines()
    assert [json.loads(line)["args"]["n"] for line in lines] == [0, 1] and recorder.calls == 2


@pytest.mark.parametrize(
    "lens",
    [
        torch.empty(0, dtype=torch.int32),
        torch.empty(0, 3),
        torch.tensor([1 + 1j, 2]),
        np.array([1 + 1j, 2]),
    ],
    ids=["empty", "empty 2-d", "complex tensor", "complex array"],
)
def test_values_of_an_empty_or_complex_tensor_are_left_out_without_a_warning(
    tmp_path: Path, lens: object
) -> None:
    # Under `-W error` a warning raised inside the recorder would fail the user's own call.
    recorder = Recorder(tmp_path / "calls.jsonl", values=("lens",))

    @recorder
    def kernel(lens):  # type: ignore[no-untyped-def]
        return 7

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with recorder:
            assert kernel(lens) == 7
    (line,) = (tmp_path / "calls.jsonl").read_text().splitlines()
    assert "values" not in json.loads(line)["args"]["lens"]


class _Kernels:
    @staticmethod
    def forward(x):  # type: ignore[no-untyped-def]
        return ("static", tuple(x.shape))

    @classmethod
    def build(cls, x):  # type: ignore[no-untyped-def]
        return (cls.__name__, tuple(x.shape))

    def launch(self, x):  # type: ignore[no-untyped-def]
        return ("method", tuple(x.shape))


class _Derived(_Kernels):
    pass


@pytest.mark.parametrize(
    ("name", "expected_result"),
    [("forward", ("static", (2, 1))), ("build", ("_Derived", (2, 1)))],
)
def test_patch_keeps_static_and_class_methods_what_they_are(
    tmp_path: Path, name: str, expected_result: tuple[object, ...]
) -> None:
    # torch.autograd.Function subclasses keep forward as a staticmethod: patched as a plain
    # function, the call bound the instance or class as x.
    recorder = Recorder(tmp_path / "calls.jsonl")
    x = torch.zeros(2, 1)
    with recorder.patch(_Derived, name):
        assert getattr(_Derived, name)(x) == expected_result
        assert getattr(_Derived(), name)(x) == expected_result
    lines = [json.loads(line) for line in (tmp_path / "calls.jsonl").read_text().splitlines()]
    assert [line["args"]["x"]["shape"] for line in lines] == [[2, 1], [2, 1]]
    assert [line["op"] for line in lines] == [name, name]


@pytest.mark.parametrize("name", ["forward", "build", "launch"])
def test_patch_of_an_inherited_attribute_leaves_the_class_as_it_was(
    tmp_path: Path, name: str
) -> None:
    recorder = Recorder(tmp_path / "calls.jsonl")
    before = dict(vars(_Derived))
    with recorder.patch(_Derived, name):
        pass
    assert dict(vars(_Derived)) == before
    assert _Derived().launch(torch.zeros(3)) == ("method", (3,))
    assert _Derived.forward(torch.zeros(3)) == ("static", (3,))
    assert _Derived.build(torch.zeros(3)) == ("_Derived", (3,))


def test_patch_of_a_method_on_an_instance_restores_the_class_lookup(tmp_path: Path) -> None:
    recorder = Recorder(tmp_path / "calls.jsonl")
    kernels = _Kernels()
    with recorder.patch(kernels, "launch"):
        assert kernels.launch(torch.zeros(2)) == ("method", (2,))
    assert "launch" not in vars(kernels)
    assert recorder.calls == 1


def test_appending_after_a_cut_last_line_keeps_the_new_calls(tmp_path: Path) -> None:
    # A process killed while flushing leaves half a line without its newline; the next
    # run's first call was glued to it and lost with it.
    path = tmp_path / "calls.jsonl"
    path.write_text('{"op": "a", "args": {}}\n{"op": "a", "ar')
    recorder = Recorder(path)
    with recorder:
        recorder.record("b", {"n": 1})
    with recorder:
        recorder.record("b", {"n": 1})
    trace = read_trace(path)
    assert sorted((g.call.op, g.calls) for g in trace.groups) == [("a", 1), ("b", 2)]
    assert trace.skipped == 1 and trace.notes[0].startswith("line 2: ")


@pytest.mark.parametrize(
    ("value", "written"),
    [(np.int64(16), 16), (np.float32(0.5), 0.5), (np.bool_(True), True), (np.str_("max"), "max")],
    ids=["int64", "float32", "bool", "str"],
)
def test_a_numpy_scalar_is_recorded_as_the_scalar_it_holds(
    tmp_path: Path, value: object, written: object
) -> None:
    # k = np.int64(16) was written as a 0-d tensor: the topk signature found no k, so
    # select-all (k >= n) could not fire.
    recorder = Recorder(tmp_path / "calls.jsonl")

    @recorder
    def topk(x, k):  # type: ignore[no-untyped-def]
        return x

    with recorder:
        topk(torch.zeros(4, 16), value)
    (line,) = (tmp_path / "calls.jsonl").read_text().splitlines()
    assert json.loads(line)["args"]["k"] == written
    # A 0-d tensor or array stays a tensor: it has a device, and its value is not read.
    with recorder:
        topk(torch.zeros(4, 16), np.array(16))
    assert json.loads((tmp_path / "calls.jsonl").read_text().splitlines()[-1])["args"]["k"] == {
        "shape": [],
        "dtype": "int64",
    }


def test_a_recorded_numpy_k_makes_top_k_select_all(tmp_path: Path) -> None:
    recorder = Recorder(tmp_path / "calls.jsonl")
    topk = recorder(lambda x, k: x, op="topk")
    with recorder:
        topk(torch.zeros(4, 16), np.int64(16))
    found = {s.rule for s in find_shortcuts(profile_trace(tmp_path / "calls.jsonl"))}
    assert "select-all" in found


def test_numpy_scalars_in_a_list_are_recorded_as_the_numbers_they_hold(tmp_path: Path) -> None:
    # dim=[np.int64(1)] was written as a list of 0-d tensors, so the sum signature found
    # no dim; a tuple mixing np.float32 with ints was left out.
    path = tmp_path / "calls.jsonl"
    with Recorder(path) as recorder:
        recorder.record("sum", {"self": torch.zeros(4, 1), "dim": [np.int64(1)]})
        recorder.record("f", {"t": (np.float32(1.5), 2)})
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert lines[0]["args"]["dim"] == [1]
    assert lines[1]["args"]["t"] == [1.5, 2]
    found = {s.rule for s in find_shortcuts(profile_trace(path, op="sum"))}
    assert "size1-reduction" in found


def test_an_int_no_float_holds_neither_breaks_the_call_nor_loses_it(tmp_path: Path) -> None:
    # 10**5000 made the recorded function raise (str() of an int over 4300 digits), and
    # 10**400 was written as an integer the reader refuses, dropping the whole call.
    path = tmp_path / "calls.jsonl"
    recorder = Recorder(path)

    @recorder
    def seeded(x, seed):  # type: ignore[no-untyped-def]
        return seed != 0

    with recorder:
        assert seeded(torch.zeros(2, 3), 10**5000)
        assert seeded(torch.zeros(2, 3), -(10**400))
        assert seeded(torch.zeros(2, 3), 2**1023 + 1)
        recorder.record("f", {"big": [1, 10**400]})
    trace = read_trace(path)
    assert (trace.records, trace.skipped) == (4, 0)
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert [line["args"]["seed"] for line in lines[:3]] == ["inf", "-inf", float(2**1023 + 1)]
    assert "big" not in lines[3]["args"]  # a list no float holds is left out, as with NaN


@pytest.mark.parametrize(
    "duration",
    [1e13, 10**400, 10**5000, float("inf"), -1.0, "5", True],
    ids=["1e13", "400-digits", "5000-digits", "inf", "negative", "str", "bool"],
)
def test_a_duration_the_reader_would_refuse_is_refused_when_recorded(
    tmp_path: Path, duration: object
) -> None:
    # 1e13 us was written and then skipped as malformed on reading; 10**400 raised
    # OverflowError.
    recorder = Recorder(tmp_path / "calls.jsonl")
    with pytest.raises(InputError, match=r"duration_us: Expected a duration in \[0, 1e12\] us"):
        recorder.record("f", {}, duration_us=duration)  # type: ignore[arg-type]
    recorder.record("f", {}, duration_us=np.float32(2.5))  # any real number, numpy's too
    recorder.close()
    assert json.loads((tmp_path / "calls.jsonl").read_text())["duration_us"] == 2.5

"""The profile hand-off offers a kernel only its family's entries, read from its name when
no family is given (a top-p sampler was offered an MLA tile load), and names the
experiment its version was made in (``## Profile: k v2 exp 5 | ...``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kernelopt._errors import InputError
from kernelopt.bench import (
    Ceilings,
    Cost,
    Measurement,
    ProfileReport,
    Roofline,
    Stage,
    profile_report,
)
from kernelopt.bench.report import kernel_family
from kernelopt.cli import main
from kernelopt.workflow import from_dict, parse_profile, profile_from_rows, to_dict

from .conftest import anchor_row, write_rows

GPU = "NVIDIA H100 80GB HBM3"


def _report(kernel: str, **options: object) -> ProfileReport:
    # A memory-bound, far-from-the-floor call: every bandwidth remedy's trigger fires.
    ceilings = Ceilings(gpu=GPU, copy_bytes_per_s=3.0e12, matmul_flop_per_s=750e12, source="t")
    cost = Cost(flops=5 * 64 * 152064, bytes=64 * 152064 * 2, name="c")
    timing = Measurement(samples=[227e-6 * (1 + i / 1000) for i in range(20)], gpu=GPU)
    return profile_report(
        kernel=kernel,
        version="v5",
        point={"b": 64, "vocab": 152064},
        measurement=timing,
        roofline=Roofline(ceilings=ceilings, cost=cost),
        **options,  # type: ignore[arg-type]
    )


@pytest.mark.parametrize(
    ("kernel", "family"),
    [
        ("mla_decode", "mla-decode"),
        ("top_p_sampler", None),
        ("int4gemv", "gemm"),
        ("linear_attention", "linear-attention"),
        ("decode_attention", "decode-attention"),
        ("top_k_gating", "topk"),
        ("attention_softmax", ["attention", "softmax"]),
    ],
)
def test_kernel_family_reads_a_word_of_the_name(kernel: str, family: object) -> None:
    assert kernel_family(kernel) == family


def test_a_kernel_of_no_family_gets_only_entries_for_every_family() -> None:
    report = _report("top_p_sampler")
    ids = {item.entry_id for item in report.opportunities}
    assert ids and not ids & {"kv-tile-shared-load", "split-kv-flash-decoding", "fp8-kv-cache"}
    assert "only entries for every kernel family" in report.note
    assert "'top_p_sampler' names none" in report.note
    text = report.render()
    assert f"\n\n(note: {report.note})\n" in text
    assert parse_profile(text).note == report.note
    assert parse_profile(text).render() == text


def test_a_family_given_or_named_writes_no_note() -> None:
    mla = _report("mla_decode")
    assert mla.note == "" and "(note:" not in mla.render()
    assert "fp8-kv-cache" in {item.entry_id for item in mla.opportunities}
    assert _report("top_p_sampler", family="softmax").note == ""


def test_a_catalog_without_query_is_asked_as_it_is() -> None:
    class Matcher:
        def match_metrics(self, metrics: object) -> list[object]:
            return []

    assert _report("top_p_sampler", catalog=Matcher()).note == ""


def test_the_experiment_is_named_in_the_heading() -> None:
    report = _report("mla_decode", experiment=5)
    text = report.render()
    assert text.startswith("## Profile: mla_decode v5 exp 5 | b=64, vocab=152064\n")
    read = parse_profile(text)
    assert (read.kernel, read.version, read.experiment) == ("mla_decode", "v5", 5)
    assert read.render() == text
    assert from_dict(to_dict(report), ProfileReport) == report
    with pytest.raises(InputError, match="experiment: Expected an experiment number"):
        _report("mla_decode", experiment=-1)


def test_a_heading_of_kernel_and_exp_n_stays_a_kernel_and_a_version() -> None:
    stage = Stage(name="k", duration=1.0, unit="us")
    short = ProfileReport(
        kernel="fast exp",
        version="2",
        point="n=4",
        stages=[stage],
        bottleneck="Memory-bound",
        root_cause="r.",
    )
    assert parse_profile(short.render()) == short
    # With two words before "exp 2" the reader would take it for an experiment.
    with pytest.raises(InputError, match="do not end the heading in 'exp N'"):
        ProfileReport(
            kernel="my fast exp",
            version="2",
            point="n=4",
            stages=[stage],
            bottleneck="Memory-bound",
            root_cause="r.",
        )


def test_profile_from_rows_and_the_cli_take_the_experiment(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KERNELOPT_CACHE_DIR", str(tmp_path / "cache"))  # no cached ceilings
    rows_file = write_rows(tmp_path / "v2.jsonl", anchor_row("splits8", samples=40, seed=2))
    from kernelopt.bench import read_rows

    (report,) = profile_from_rows(
        read_rows(rows_file), kernel="mla_decode", version="v2", experiment=12
    )
    assert report.render().startswith("## Profile: mla_decode v2 exp 12 | ")
    argv = ["report", "profile", "--rows", str(rows_file), "--kernel", "mla_decode"]
    code = main([*argv, "--version", "v2", "--experiment", "12"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert parse_profile(out).experiment == 12 and "exp 12 |" in out
    with pytest.raises(SystemExit, match="2"):
        main([*argv, "--version", "v2", "--experiment", "-1"])
    assert "--experiment: Expected an int >= 0, got -1" in capsys.readouterr().err
    hand_off = tmp_path / "p.md"
    hand_off.write_text(out, "utf-8")
    hand_off.write_text(out.replace(" exp 12 |", " |"), "utf-8")
    assert main(["report", "profile", str(hand_off), "--experiment", "0"]) == 0
    assert capsys.readouterr().out.startswith("## Profile: mla_decode v2 exp 0 | ")
    code = main(["report", "profile", str(hand_off), "--experiment", "0", "--check"])
    assert code == 2 and "--experiment only without --check" in capsys.readouterr().err


def test_the_mla_benchmarks_hand_off_is_as_it_was() -> None:
    # mla_decode names its family: its opportunities are kept to it, ranked as before.
    from kernelopt.bench import read_rows
    from kernelopt.catalog import Catalog

    catalog = Catalog.builtin()

    class EveryFamily:  # no query: asked as it is, as every catalog was before
        def match_metrics(self, metrics: dict[str, float]) -> object:
            return catalog.match_metrics(metrics)

        def __iter__(self) -> object:
            return iter(catalog)

    rows = read_rows(
        Path(__file__).resolve().parents[2]
        / "docs/kernels/mla_decode/experiments/exp_12/seesaw_after.jsonl"
    )
    options = dict(kernel="mla_decode", version="kernelopt_seesaw", mode="cold")
    now = profile_from_rows(rows, **options)  # type: ignore[arg-type]
    before = profile_from_rows(rows, catalog=EveryFamily(), **options)  # type: ignore[arg-type]
    assert [r.render() for r in now] == [r.render() for r in before]
    assert all(report.note == "" for report in now)


def test_a_kernel_name_that_is_no_str_is_refused_by_name() -> None:
    from kernelopt._errors import InputError
    from kernelopt.bench.report import kernel_family

    with pytest.raises(InputError, match=r"^kernel: Expected a kernel name \(a str\), got int$"):
        kernel_family(3)  # type: ignore[arg-type]

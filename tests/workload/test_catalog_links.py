"""The catalog entries the shortcut findings link to exist in the built-in catalog."""

from __future__ import annotations

from pathlib import Path

from kernelopt.workload import CATALOG_IDS, Thresholds, find_shortcuts, profile_trace


def test_findings_link_only_the_declared_catalog_ids(data: Path) -> None:
    linked = set()
    for name in ("mla_decode_calls.jsonl", "softmax_topk_cpu.json", "sdpa_one_key_cpu.json"):
        for item in find_shortcuts(profile_trace(data / name), thresholds=Thresholds(often=0.05)):
            linked.update(item.catalog_ids)
    assert linked and linked <= set(CATALOG_IDS)


def test_linked_catalog_ids_exist_in_the_builtin_catalog() -> None:
    from kernelopt.catalog import Catalog

    catalog = Catalog.builtin()
    assert [entry_id for entry_id in CATALOG_IDS if entry_id not in catalog] == []


def test_shape_facts_feed_catalog_queries(data: Path) -> None:
    from kernelopt.catalog import SHAPE_FACTS, Catalog
    from kernelopt.workload import profile_calls, read_trace, shape_facts

    mla = profile_trace(data / "mla_decode_calls.jsonl")
    facts = shape_facts(mla)
    assert facts == {
        "b": 32,
        "s_q": 1,
        "h_q": 128,
        "h_kv": 1,
        "seqlen_k": 4096,
        "distinct_shapes": 4,
        # The fixture is timed: the top shape's share of time (60 % of the calls).
        "dominant_shape_share": mla.op().top_shapes(1, by="time")[0].time_share,
    }
    assert mla.op().top_shapes(1, by="calls")[0].call_share == 0.6
    assert round(facts["dominant_shape_share"], 3) == 0.547
    assert set(facts) <= set(SHAPE_FACTS)
    ids = [m.entry.id for m in Catalog.builtin().query(shape=facts)]
    assert "size-1-axis-shortcut" in ids and "dominant-shape-specialization" in ids
    softmax = profile_calls(read_trace(data / "softmax_topk_cpu.json"), op="aten::softmax")
    assert shape_facts(softmax)["softmax_len"] == 1
    total = profile_calls(read_trace(data / "softmax_topk_cpu.json"), op="aten::sum")
    assert shape_facts(total)["reduce_len"] == 1


def test_a_gather_profile_finds_the_gather_entry() -> None:
    from kernelopt.catalog import SHAPE_FACTS, Catalog
    from kernelopt.workload import Call, ScalarArg, TensorArg, profile_calls, shape_facts

    def gather(k: int, stride: tuple[int, int]) -> Call:
        return Call(
            op="gather",
            args=(
                TensorArg(name="x", shape=(32, 4096), dtype="bfloat16"),
                ScalarArg(name="dim", value=1),
                TensorArg(name="index", shape=(32, k), dtype="int64", stride=stride),
            ),
        )

    profile = profile_calls([gather(64, (0, 1))] * 3 + [gather(128, (128, 1))])
    facts = shape_facts(profile)
    assert facts["select_k"] == 64 and facts["select_n"] == 4096
    assert set(facts) <= set(SHAPE_FACTS)
    (hit,) = [s for s in find_shortcuts(profile) if s.rule == "gather-index-select"]
    assert hit.catalog_ids == ("gather-index-select",)
    ranked = [m.entry.id for m in Catalog.builtin().query(shape=facts)]
    assert "gather-index-select" in ranked

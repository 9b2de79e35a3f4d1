"""The report's "Speculation compared": each kind of speculation against the target alone on
the same problems, its speedup the ratio of the mean latencies of runs made here, and the
table with each row taking the accuracy of what it replays: the target alone's for the
lossless rows, BRSD's for HeteroReason, RSD's for SpecReason and Lookahead Reasoning."""

import pytest

import cosim
from cosim.config.scenario import build_scenario, load_scenario
from cosim.engine._workflow import simulate
from cosim.report import _speculation


@pytest.fixture(scope="module")
def found():
    trace = cosim.trace.generate("math500", 12, seed=2)
    forward_only = cosim.trace.generate("math500", 12, seed=2, backtracking=False)
    own = {_speculation.HETERO: simulate(load_scenario(_speculation.HETERO, 1), trace)}
    return trace, forward_only, own, _speculation.record("math500", trace, own, lambda label: None, forward_only)


# The target's refinements drafted by Qwen2.5-0.5B on its GPU, four drafts a pass.
DRAFTING = {"toggles.target_speculation": True, "speculation.proposer": "draft_model",
            "speculation.draft_model": "qwen2.5-0.5b", "speculation.draft_tokens": 4,
            "speculation.acceptance": "leviathan-t5-small-xxl"}


def test_each_speedup_is_the_target_alones_mean_latency_over_the_systems(found):
    trace, forward_only, own, rec = found
    alone = simulate(load_scenario("target-alone", 1), trace).summary["latency_s"]
    same_gpu = build_scenario({"system": "speculative-decoding", "target": {"device": "rtx3090"},
                               "speculation": {"proposer": "draft_model", "draft_model": "qwen2.5-0.5b",
                                               "draft_tokens": 4, "acceptance": "leviathan-t5-small-xxl"}},
                              config=1)
    adaptive = same_gpu.with_values({"speculation.draft_schedule": "heuristic_transient"})
    runs = {"HeteroReason (step level, U280)": own[_speculation.HETERO].summary["latency_s"],
            "token level, draft model on the GPU": simulate(same_gpu, trace).summary["latency_s"],
            "token level, draft model on the GPU, drafts a pass adapted (Hugging Face)": simulate(
                adaptive, trace).summary["latency_s"],
            "token level, drafts on the U280 (split)": simulate(load_scenario("split-decoding-u280", 1),
                                                                trace).summary["latency_s"],
            "HeteroReason, its target's refinements token-level too": simulate(
                load_scenario("heteroreason-u280-200", 1).with_values(DRAFTING), trace).summary["latency_s"],
            # SpecReason replays the forward-only run of the same problems.
            "SpecReason (the target judges; draft on an RTX 3090)": simulate(
                load_scenario("specreason", 1), forward_only).summary["latency_s"],
            "SpecReason, draft on the U280": simulate(load_scenario("specreason-u280", 1),
                                                      forward_only).summary["latency_s"],
            "SpecReason on the U280, its target's refinements token-level too": simulate(
                load_scenario("specreason-u280", 1).with_values(DRAFTING), forward_only).summary["latency_s"],
            # So does Lookahead Reasoning.
            "Lookahead Reasoning (draft on an RTX 3090, a 7B judge)": simulate(
                load_scenario("lookahead", 1), forward_only).summary["latency_s"],
            "Lookahead Reasoning, draft on the U280": simulate(load_scenario("lookahead-u280", 1),
                                                               forward_only).summary["latency_s"],
            "Lookahead Reasoning, its target's runs token-level too": simulate(
                load_scenario("lookahead", 1).with_values(DRAFTING), forward_only).summary["latency_s"]}
    alone_forward = simulate(load_scenario("target-alone", 1), forward_only).summary["latency_s"]
    rows = rec["systems"] + rec["forward_only"]["systems"]
    assert sorted(row["system"] for row in rows) == sorted(runs)
    assert rec["forward_only"]["baseline"]["latency_s"] == pytest.approx(alone_forward, rel=1e-12)
    assert rec["baseline"]["latency_s"] == pytest.approx(alone, rel=1e-12)
    for row in rows:
        base = alone_forward if row in rec["forward_only"]["systems"] else alone
        assert row["speedup"] == pytest.approx(base / runs[row["system"]], rel=1e-9)
        low, high = row["intervals"]["speedup"][:2]
        assert low <= row["speedup"] <= high


def test_the_table_gives_the_lossless_rows_the_target_alones_accuracy(found):
    rec = found[-1]
    report = {"speculation": [rec], "accuracy": [{"dataset": "math500", "config": 1, "mode": "brsd",
                                                   "accuracy": 0.8},
                                                  {"dataset": "math500", "config": 1, "mode": "rsd",
                                                   "accuracy": 0.7}],
              "target_alone": [{"dataset": "math500", "config": 1, "accuracy": 0.91}]}
    lines = _speculation.markdown(report)
    assert lines[0] == "## Speculation compared"
    rows = [line for line in lines if line.startswith("| math500 |")]
    assert len(rows) == 13
    assert rows[0].endswith("| 91.0% |") and "the target alone" in rows[0]
    assert rows[1].endswith("| 80.0% |") and "HeteroReason" in rows[1]
    # The three token-level rows keep the target's output: its accuracy.
    assert all(row.endswith("| 91.0% |") and "token level" in row for row in rows[2:5])
    # The combination keeps BRSD's steps: its accuracy is BRSD's.
    assert rows[5].endswith("| 80.0% |") and "token-level too" in rows[5]
    # SpecReason replays the forward-only run, after its own target-alone row: RSD's accuracy.
    assert "forward-only run" in rows[6] and rows[6].endswith("| 91.0% |")
    assert all(row.endswith("| 70.0% |") and "SpecReason" in row for row in rows[7:10])
    assert all(row.endswith("| 70.0% |") and "Lookahead Reasoning" in row for row in rows[10:])

"""The report's "Speculation compared": each kind of speculation against the target alone on
the same problems, its speedup the ratio of the mean latencies of runs made here, and the
table with the lossless rows taking the target alone's accuracy."""

import pytest

import cosim
from cosim.config.scenario import build_scenario, load_scenario
from cosim.engine._workflow import simulate
from cosim.report import _speculation


@pytest.fixture(scope="module")
def found():
    trace = cosim.trace.generate("math500", 12, seed=2)
    own = {_speculation.HETERO: simulate(load_scenario(_speculation.HETERO, 1), trace)}
    return trace, own, _speculation.record("math500", trace, own, lambda label: None)


def test_each_speedup_is_the_target_alones_mean_latency_over_the_systems(found):
    trace, own, rec = found
    alone = simulate(load_scenario("target-alone", 1), trace).summary["latency_s"]
    same_gpu = build_scenario({"system": "speculative-decoding", "target": {"device": "rtx3090"},
                               "speculation": {"proposer": "draft_model", "draft_model": "qwen2.5-0.5b",
                                               "draft_tokens": 4, "acceptance": "leviathan-t5-small-xxl"}},
                              config=1)
    runs = {"HeteroReason (step level, U280)": own[_speculation.HETERO].summary["latency_s"],
            "token level, draft model on the GPU": simulate(same_gpu, trace).summary["latency_s"],
            "token level, drafts on the U280 (split)": simulate(load_scenario("split-decoding-u280", 1),
                                                                trace).summary["latency_s"],
            "HeteroReason, its target's refinements token-level too": simulate(
                load_scenario("heteroreason-u280-200", 1).with_values(
                    {"toggles.target_speculation": True, "speculation.proposer": "draft_model",
                     "speculation.draft_model": "qwen2.5-0.5b", "speculation.draft_tokens": 4,
                     "speculation.acceptance": "leviathan-t5-small-xxl"}), trace).summary["latency_s"]}
    assert rec["baseline"]["latency_s"] == pytest.approx(alone, rel=1e-12)
    for row in rec["systems"]:
        assert row["speedup"] == pytest.approx(alone / runs[row["system"]], rel=1e-9)
        low, high = row["intervals"]["speedup"][:2]
        assert low <= row["speedup"] <= high


def test_the_table_gives_the_lossless_rows_the_target_alones_accuracy(found):
    _, _, rec = found
    report = {"speculation": [rec], "accuracy": [{"dataset": "math500", "config": 1, "mode": "brsd",
                                                   "accuracy": 0.8}],
              "target_alone": [{"dataset": "math500", "config": 1, "accuracy": 0.91}]}
    lines = _speculation.markdown(report)
    assert lines[0] == "## Speculation compared"
    rows = [line for line in lines if line.startswith("| math500 |")]
    assert len(rows) == 5
    assert rows[0].endswith("| 91.0% |") and "the target alone" in rows[0]
    assert rows[1].endswith("| 80.0% |") and "HeteroReason" in rows[1]
    assert rows[2].endswith("| 91.0% |") and rows[3].endswith("| 91.0% |")
    # The combination keeps BRSD's steps: its accuracy is BRSD's.
    assert rows[4].endswith("| 80.0% |") and "token-level too" in rows[4]

"""The report's "Speculation compared at load": every cluster served on the run it replays,
each row what `cosim.serve.run` gives the cluster built here, and a step-level cluster's
throughput held under Little's law by its draft contexts."""

import pytest

import cosim
from cosim.config.scenario import build_scenario, load_scenario
from cosim.report import _speculation_serving as at_load

REQUESTS, SEED = 120, 3
RATES = (0.5, 3.0)


@pytest.fixture(scope="module")
def found():
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(at_load, "RATES", RATES)
        return at_load.serving(SEED, lambda label: None, requests=REQUESTS)


def test_each_row_is_its_cluster_served_on_its_run(found):
    brsd = cosim.trace.generate("math500", REQUESTS, SEED).in_memory()
    rsd = cosim.trace.generate("math500", REQUESTS, SEED, backtracking=False).in_memory()
    two = {"cluster.target.devices": 2, "batching.enabled": True}
    token_level = build_scenario({"system": "speculative-decoding", "target": {"device": "rtx3090"},
                                  "speculation": {"proposer": "draft_model", "draft_model": "qwen2.5-0.5b",
                                                  "draft_tokens": 4, "acceptance": "leviathan-t5-small-xxl"}},
                                 config=1).with_values(two)
    clusters = {"the target alone": (load_scenario("target-alone").with_values(two), brsd),
                "token level, draft model on each target GPU": (token_level, brsd),
                "token level, drafts on a U280 beside each target GPU (split)": (
                    load_scenario("split-decoding-u280").with_values(two), brsd),
                "HeteroReason, 8 U280 @ 200 MHz and 2 PRM GPUs": (load_scenario("cluster-heteroreason-u280-200"),
                                                                  brsd),
                "the target alone, forward-only run": (load_scenario("target-alone").with_values(two), rsd),
                "SpecReason, 2 draft GPUs (4 contexts each)": (load_scenario("specreason").with_values(
                    {**two, "cluster.draft.devices": 2, "cluster.draft.contexts_per_device": 4}), rsd),
                "SpecReason, 8 U280 @ 200 MHz": (load_scenario("specreason-u280").with_values(
                    {**two, "cluster.draft.devices": 8}), rsd),
                "Lookahead Reasoning, 2 draft GPUs (4 contexts each), 1 judge GPU": (
                    load_scenario("lookahead").with_values(
                        {**two, "cluster.draft.devices": 2, "cluster.draft.contexts_per_device": 4}), rsd)}
    rows = found["rows"]
    assert [(r["system"], r["rate"]) for r in rows] == [(label, rate) for label in clusters for rate in RATES]
    for r in rows:
        scn, trace = clusters[r["system"]]
        assert scn.cluster.target.devices == 2 and scn.batching.enabled
        summary = cosim.serve.run(scn, trace, rate=r["rate"], seed=SEED).summary
        assert r["latency_p99_s"] == summary.latency_p99_s
        assert r["throughput_req_s"] == summary.throughput_req_s
        assert r["energy_j_per_token"] == summary.energy_j_per_token


def test_a_step_level_cluster_serves_no_more_than_its_contexts_allow(found):
    # Little's law: with at most C requests in flight, each taking at least its time alone,
    # the cluster completes at most C over the mean time alone a second.
    rsd = cosim.trace.generate("math500", REQUESTS, SEED, backtracking=False)
    alone = cosim.simulate(load_scenario("specreason-u280"), rsd).summary["latency_s"]
    row = next(r for r in found["rows"] if r["system"] == "SpecReason, 8 U280 @ 200 MHz" and r["rate"] == 3.0)
    assert row["throughput_req_s"] <= 8 / alone * 1.05
    # Offered three a second, it falls behind: requests queue and the tail grows.
    slow = next(r for r in found["rows"] if r["system"] == row["system"] and r["rate"] == 0.5)
    assert row["latency_p99_s"] > 2 * slow["latency_p99_s"]


def test_the_table_has_a_row_per_cluster_and_rate(found):
    lines = at_load.markdown(found)
    assert lines[0].startswith("## Speculation compared at load (math500, 120 requests")
    rows = [line for line in lines if line.startswith("| ") and not line.startswith("| system")]
    assert len(rows) == len(at_load.SYSTEMS) * len(RATES)
    assert rows[0].startswith("| the target alone | 0.5 |")

"""`cosim plan` never reports an error as a result: a cluster that cannot run stops the plan
with its error, and a grid past the bound is refused, with its size, before any work."""

import pytest

import cosim
from conftest import one_line_error, SCENARIOS, run_cli
from cosim.serve._plan import MAX_CLUSTERS

VLLM = str(SCENARIOS / "vllm-rtx4090.yaml")
U280 = str(SCENARIOS / "heteroreason-u280-200.yaml")




@pytest.mark.parametrize("workers", [1, 2])
def test_a_cluster_failing_with_a_configuration_error_stops_the_plan_with_it(tmp_path, workers):
    # Three KV blocks (two usable beside vLLM's null block) hold 32 tokens: no drawn request fits,
    # on any number of GPUs. That is an error of the scenario, not a cluster too small.
    out = tmp_path / "plan"
    result = run_cli("plan", VLLM, "--set", "batching.num_gpu_blocks=3", "--rate", "1", "--requests", "5",
                     "--slo", "100", "--target", "1-4", "--workers", workers, "--out", out, cwd=tmp_path,
                     timeout=600)
    line = one_line_error(result)
    assert "vllm-rtx4090 on " in line and " target GPUs: a request of " in line
    assert "the GPU holds 2 (batching.num_gpu_blocks less vLLM's null block): it could never run" in line
    assert "none of the clusters" not in result.stdout + result.stderr
    assert not out.exists()  # no plan.json, plan.csv or manifest that would read as a result


def test_a_plan_whose_clusters_run_but_miss_still_says_so(tmp_path):
    out = tmp_path / "plan"
    result = run_cli("plan", U280, "--rate", "0.2", "--requests", "4", "--slo", "0.001", "--draft", "1",
                     "--prm", "1", "--target", "1-2", "--out", out, cwd=tmp_path, timeout=600)
    assert result.returncode == 0, result.stderr
    assert "none of the clusters tried meets the objective" in result.stdout
    assert (out / "plan.json").exists()


@pytest.mark.parametrize("ranges,message", [
    (["--draft", "1-100000000"], f"--draft '1-100000000': 100000000 device counts, more than the {MAX_CLUSTERS}"),
    (["--draft", "1-100", "--prm", "1-10", "--target", "1-20"],
     f"--draft, --prm, --target: the grid has 20000 clusters (100 x 10 x 20), more than the {MAX_CLUSTERS}"),
])
def test_a_grid_past_the_bound_is_refused_with_its_size(tmp_path, ranges, message):
    out = tmp_path / "plan"
    result = run_cli("plan", U280, "--rate", "1", "--slo", "10", *ranges, "--out", out, cwd=tmp_path, timeout=120)
    assert message in one_line_error(result)
    assert not out.exists()


def test_the_api_refuses_a_grid_past_the_bound_before_evaluating_any_cluster():
    calls = []

    def evaluate(cluster):
        calls.append(cluster)
        return 1.0

    side = round(MAX_CLUSTERS ** (1 / 3)) + 1
    with pytest.raises(cosim.ConfigError, match=rf"the grid has {side ** 3} clusters \({side} x {side} x {side}\)"):
        cosim.serve.plan(evaluate, draft=range(1, side + 1), prm=range(1, side + 1), target=range(1, side + 1),
                         slo_s=1.0, costs={"draft": 1, "prm": 1, "target": 1})
    assert calls == []
    # At the bound it runs: the cheapest cluster of an objective every cluster meets is the smallest.
    edge = int(MAX_CLUSTERS ** (1 / 3))
    found = cosim.serve.plan(evaluate, draft=range(1, edge + 1), prm=range(1, edge + 1), target=range(1, edge + 1),
                             slo_s=1.0, costs={"draft": 1, "prm": 1, "target": 1})
    assert found.cluster["draft_devices"] == found.cluster["prm_devices"] == found.cluster["target_devices"] == 1


def test_an_error_in_evaluate_is_never_taken_as_a_cluster_that_misses():
    def evaluate(cluster):
        if cluster["target_devices"] == 2:
            raise cosim.ConfigError("target.device: broken")
        return 5.0

    with pytest.raises(cosim.ConfigError, match="target.device: broken"):
        cosim.serve.plan(evaluate, draft=[1], prm=[1], target=[1, 2, 3], slo_s=1.0,
                         costs={"draft": 1, "prm": 1, "target": 1})

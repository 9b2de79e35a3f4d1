"""Every setting applies or is refused, whatever the order it is given in, and a setting
without effect is refused from --set as from a scenario file. A written
scenario.resolved.yaml loads and reruns to the same result."""

import itertools
import json

import pytest
import yaml

import cosim
from conftest import one_line_error, refused_serving, run_cli
from cosim.config.scenario import builtin_scenarios

U280 = "heteroreason-u280-200"
BIG_BATCH = {"batching.enabled": True, "batching.max_batch": 4096, "batching.token_budget": 8192}
SHARED_LINK = {"cluster.draft.devices": 2, "cluster.draft.boards_per_host_link": 2,
               "cluster.draft.host_link": "pcie_gen5_x16"}




@pytest.mark.parametrize("values", [BIG_BATCH, SHARED_LINK], ids=["batching", "shared-link"])
def test_values_that_hold_together_apply_in_every_order(values):
    scn = cosim.load_scenario(U280)
    made = [scn.with_values(list(order)).resolved() for order in itertools.permutations(values.items())]
    assert all(m == made[0] for m in made)
    changed = scn.with_values(values)
    assert changed.batching.max_batch == (4096 if values is BIG_BATCH else 64)
    assert changed.cluster.draft.host_link == ("pcie_gen5_x16" if values is SHARED_LINK else "pcie_gen4_x16")


@pytest.mark.parametrize("values,message", [
    ({"batching.enabled": True, "batching.max_batch": 4096},
     "2048 tokens cannot hold one decoding token for each of max_batch = 4096"),
    ({"toggles.step_ahead_depth": 2, "toggles.step_ahead": False}, "2 steps ahead, but step_ahead is off"),
    ({"batching.max_batch": 8, "batching.policy": "verify_first"}, "has no effect while batching is off"),
    ({"cluster.draft.host_link": "pcie_gen5_x16", "cluster.draft.devices": 2}, "boards share a host link only "
                                                                              "with cluster.draft.boards_per_host"),
], ids=["budget", "depth", "batching-off", "host-link"])
def test_values_that_cannot_hold_together_are_refused_in_every_order(values, message):
    scn = cosim.load_scenario(U280)
    for order in itertools.permutations(values.items()):
        with pytest.raises(cosim.ConfigError, match=message):
            scn.with_values(list(order))


def test_the_command_line_gives_one_outcome_for_every_order(tmp_path):
    for order in itertools.permutations(BIG_BATCH.items()):
        sets = [a for path, value in order for a in ("--set", f"{path}={str(value).lower()}")]
        result = run_cli("serve", U280, *sets, "--rate", "0.5", "--requests", "3", "--quiet", "--out", tmp_path / "o",
                         cwd=tmp_path)
        assert result.returncode == 0, result.stderr
        written = yaml.safe_load((tmp_path / "o" / "scenario.resolved.yaml").read_text())["batching"]
        assert (written["enabled"], written["max_batch"], written["token_budget"]) == (True, 4096, 8192)
    refused = []
    for order in itertools.permutations([("toggles.step_ahead_depth", 2), ("toggles.step_ahead", "false")]):
        sets = [a for path, value in order for a in ("--set", f"{path}={value}")]
        refused.append(one_line_error(run_cli("serve", U280, *sets, "--rate", "0.5", "--requests", "3", "--quiet",
                                              "--out", tmp_path / "d", cwd=tmp_path)))
    assert refused[0] == refused[1]
    assert refused[0] == ("cosim: error: --set toggles.step_ahead_depth=2: 2 steps ahead, but step_ahead is off: the "
                          "depth would have no effect; drop one of them")
    assert not (tmp_path / "d").exists()


# Each setting without effect, as a scenario file and as --set gives it: both refused, for the same reason.
WITHOUT_EFFECT = {
    "host-link": ("cluster:\n  draft:\n    host_link: pcie_gen5_x16\n", ["cluster.draft.host_link=pcie_gen5_x16"],
                  "boards share a host link only with"),
    "batching-off": ("batching:\n  max_batch: 8\n", ["batching.max_batch=8"], "has no effect while batching is off"),
    "batching-off-explicit": ("batching:\n  enabled: false\n  token_budget: 512\n",
                              ["batching.enabled=false", "batching.token_budget=512"],
                              "has no effect while batching is off"),
    "depth": ("toggles:\n  step_ahead: false\n  step_ahead_depth: 2\n",
              ["toggles.step_ahead=false", "toggles.step_ahead_depth=2"], "steps ahead, but"),
}


@pytest.mark.parametrize("case", WITHOUT_EFFECT)
def test_a_setting_without_effect_is_refused_from_a_file_and_from_set_alike(tmp_path, case):
    text, sets, reason = WITHOUT_EFFECT[case]
    path = tmp_path / "s.yaml"
    path.write_text("system: heteroreason\n" + text)
    from_file = refused_serving(tmp_path, path)
    assert reason in from_file and f"{path}:" in from_file  # the file's line named
    for order in (sets, sets[::-1]):
        from_set = refused_serving(tmp_path, "heteroreason-u280-200", order)
        assert reason in from_set and "--set " in from_set
        assert from_set[from_set.index(reason):] == from_file[from_file.index(reason):]  # the same words


def test_in_code_too():
    with pytest.raises(cosim.ConfigError, match=r"^batching.policy: has no effect while batching is off"):
        cosim.scenario("heteroreason", batching={"policy": "verify_first"})
    with pytest.raises(cosim.ConfigError, match=r"^batching.max_batch: has no effect while batching is off"):
        cosim.load_scenario(U280).with_value("batching.max_batch", 8)
    # Turning batching off over a file that enables it is a change with effect: allowed.
    off = cosim.load_scenario("vllm-rtx4090").with_value("batching.enabled", False)
    assert not off.batching.enabled


def test_one_parameter_given_twice_is_refused(tmp_path):
    line = one_line_error(run_cli("serve", U280, "--set", "pcie.bandwidth_gbps=4", "--set",
                                  "draft.link.bandwidth_gbps=8", "--rate", "1", "--requests", "2", "--quiet", "--out",
                                  tmp_path / "o", cwd=tmp_path))
    assert line == ("cosim: error: --set draft.link.bandwidth_gbps=8: draft.link.bandwidth_gbps is given twice (also "
                    "as --set pcie.bandwidth_gbps=4)")


@pytest.mark.parametrize("name", builtin_scenarios())
def test_each_built_in_scenarios_written_form_loads_to_the_same_scenario(tmp_path, name):
    for config in (1, 2):
        scn = cosim.load_scenario(name, config)
        path = tmp_path / f"{config}.yaml"
        path.write_text(yaml.safe_dump(scn.reloadable(), sort_keys=False))
        back = cosim.load_scenario(path)
        assert back.resolved() == scn.resolved() and back.fingerprint() == scn.fingerprint()


@pytest.mark.parametrize("changes", [{}, BIG_BATCH, SHARED_LINK, {"toggles.step_ahead": False},
                                     {"fpga.clock_mhz": 250, "pcie.bandwidth_gbps": 8}],
                         ids=["as-is", "batching", "shared-link", "no-step-ahead", "draft-values"])
def test_a_changed_scenarios_written_form_loads_to_the_same_scenario(tmp_path, changes):
    scn = cosim.load_scenario(U280).with_values(changes)
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump(scn.reloadable(), sort_keys=False))
    assert cosim.load_scenario(path).resolved() == scn.resolved()


def summary_without_time(folder):
    summary = json.loads((folder / "summary.json").read_text())
    return {k: v for k, v in summary.items() if "wall" not in k}


@pytest.mark.parametrize("command,scenario,options", [
    ("run", U280, ["--problems", "3"]),
    ("run", "gpu-baseline", ["--problems", "3"]),
    ("serve", "cluster-heteroreason-u280-200", ["--rate", "0.5", "--requests", "4", "--set",
                                                "batching.token_budget=4096", "--set", "cluster.draft.devices=3"]),
    ("serve", "target-alone", ["--rate", "0.5", "--requests", "4", "--set", "batching.enabled=true", "--set",
                               "batching.num_gpu_blocks=4000"]),
], ids=["run-heteroreason", "run-gpu-baseline", "serve-cluster", "serve-target-alone"])
def test_a_written_scenario_reruns_to_the_same_result(tmp_path, command, scenario, options):
    first = run_cli(command, scenario, *options, "--quiet", "--out", tmp_path / "first", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    written = tmp_path / "first" / "scenario.resolved.yaml"
    # The rerun takes the written file alone: the --set values are in it.
    plain = [o for i, o in enumerate(options) if o != "--set" and (i == 0 or options[i - 1] != "--set")]
    again = run_cli(command, written, *plain, "--quiet", "--out", tmp_path / "again", cwd=tmp_path / "first")
    assert again.returncode == 0, again.stderr
    assert summary_without_time(tmp_path / "first") == summary_without_time(tmp_path / "again")
    assert (tmp_path / "again" / "scenario.resolved.yaml").read_text() == written.read_text()

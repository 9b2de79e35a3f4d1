
import pytest

import cosim

NAMES = ("gpu-baseline", "gpu-stepahead", "heteroreason-u280-200", "heteroreason-u280-300",
         "heteroreason-u280-flexllm", "heteroreason-v80", "heteroreason-jetson", "heteroreason-vanilla",
         "heteroreason-nobacktrack", "heteroreason-noprefetch", "cluster-heteroreason-u280-200",
         "cluster-gpu-stepahead", "target-alone", "vllm-rtx4090")
# Targets that span GPUs: each names its own target model, whatever the config.
AT_SCALE = {"heteroreason-qwen3-32b-tp2": ("Qwen3-32B", 2, 1), "gpu-baseline-qwen3-32b-tp2": ("Qwen3-32B", 2, 1),
            "cluster-heteroreason-qwen3-32b-tp2": ("Qwen3-32B", 2, 1),
            "heteroreason-qwen3-30b-a3b": ("Qwen3-30B-A3B", 2, 2), "gpu-baseline-qwen3-30b-a3b": ("Qwen3-30B-A3B", 2, 2),
            "lookahead-qwen3-32b-tp2": ("Qwen3-32B", 2, 1)}
# Token-level speculative decoding on the GPU that published its speedup: its own target.
TOKEN_LEVEL = {"speculative-decoding-h100": ("Llama-3.1-8B", "H100 SXM", 3)}
# Token-level drafting on the paper's FPGA for the config's target.
SPLIT = {"split-decoding-u280": ("U280", "RTX 3090", 4)}
# Steps judged by the target itself (SpecReason): where the draft runs.
JUDGED = {"specreason": "RTX 3090", "specreason-u280": "U280"}
# Steps written ahead by the target and compared by a judge (Lookahead Reasoning): where the draft runs.
LOOKAHEAD = {"lookahead": "RTX 3090", "lookahead-u280": "U280"}


def test_every_system_and_ablation_is_a_built_in_scenario():
    assert sorted((*NAMES, *AT_SCALE, *TOKEN_LEVEL, *SPLIT, *JUDGED, *LOOKAHEAD)) == cosim.builtin_scenarios()


@pytest.mark.parametrize("name", JUDGED)
@pytest.mark.parametrize("config", [1, 2])
def test_a_specreason_scenario_is_forward_only_and_judged_by_the_configs_target(name, config):
    scn = cosim.load_scenario(name, config)
    assert (scn.system, scn.algorithm, scn.draft.device.name) == ("specreason", "rsd", JUDGED[name])
    assert scn.target.model.name == ("Qwen2.5-Math-7B" if config == 1 else "Qwen2.5-Math-1.5B")


@pytest.mark.parametrize("name", LOOKAHEAD)
@pytest.mark.parametrize("config", [1, 2])
def test_a_lookahead_scenario_is_forward_only_with_an_instruct_judge_and_two_steps_ahead(name, config):
    scn = cosim.load_scenario(name, config)
    assert (scn.system, scn.algorithm, scn.draft.device.name) == ("lookahead", "rsd", LOOKAHEAD[name])
    assert scn.prm.model.name == "Qwen2.5-7B-Instruct" and scn.toggles.step_ahead_depth == 2
    assert scn.target.model.name == ("Qwen2.5-Math-7B" if config == 1 else "Qwen2.5-Math-1.5B")


@pytest.mark.parametrize("config", [1, 2])
def test_the_split_scenario_drafts_on_the_fpga_for_the_configs_target(config):
    scn = cosim.load_scenario("split-decoding-u280", config)
    draft, target, drafts = SPLIT["split-decoding-u280"]
    assert (scn.draft.device.name, scn.target.device.name, scn.speculation.draft_tokens) == (draft, target, drafts)
    assert scn.target.model.name == ("Qwen2.5-Math-7B" if config == 1 else "Qwen2.5-Math-1.5B")
    assert scn.draft.device.accelerator.clock_mhz == 200.0


@pytest.mark.parametrize("name", TOKEN_LEVEL)
@pytest.mark.parametrize("config", [1, 2])
def test_a_token_level_scenario_keeps_its_target_on_both_configs(name, config):
    scn = cosim.load_scenario(name, config)
    model, device, drafts = TOKEN_LEVEL[name]
    assert scn.system == "speculative-decoding" and scn.description
    assert (scn.target.model.name, scn.target.device.name, scn.speculation.draft_tokens) == (model, device, drafts)


@pytest.mark.parametrize("name", AT_SCALE)
@pytest.mark.parametrize("config", [1, 2])
def test_a_target_that_spans_gpus_keeps_its_model_and_group_on_both_configs(name, config):
    scn = cosim.load_scenario(name, config)
    model, tp, ep = AT_SCALE[name]
    assert scn.name == name and scn.description
    assert scn.target.model.name == model and scn.target.device.name == "H100 SXM"
    assert (scn.target.parallel.tensor_parallel, scn.target.parallel.expert_parallel) == (tp, ep)
    assert scn.target.peer_link.name == "NVLink 4 (H100 SXM)"


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("config", [1, 2])
def test_each_built_in_scenario_loads_on_both_configs(name, config):
    scn = cosim.load_scenario(name, config)
    resolved = scn.resolved()
    assert scn.name == name and scn.description
    assert resolved["system"] in ("gpu-baseline", "gpu-stepahead", "heteroreason", "autoregressive")
    if name == "vllm-rtx4090":  # it names its model: the config does not choose one
        assert resolved["target"]["model"]["name"] == "Llama-3.1-8B"
    else:
        assert resolved["target"]["model"]["name"] == ("Qwen2.5-Math-7B" if config == 1 else "Qwen2.5-Math-1.5B")
    if any(k in name for k in ("u280-300", "vanilla", "noprefetch", "nobacktrack")):
        assert scn.draft.device.accelerator.clock_mhz == 300.0
    assert scn.backtracking == (name != "heteroreason-nobacktrack")


def test_a_forward_only_scenario_refuses_a_backtracking_trace():
    scn = cosim.load_scenario("heteroreason-nobacktrack")
    with pytest.raises(cosim.ConfigError, match="runs forward-only RSD .* the trace backtracks"):
        cosim.simulate(scn, cosim.trace.generate("math500", 2, seed=1))
    assert cosim.simulate(scn, cosim.trace.generate("math500", 2, seed=1, backtracking=False)).summary[
        "backtracks_per_problem"] == 0
    with pytest.raises(cosim.ConfigError, match="unknown scenario 'heteroreason-u999'"):
        cosim.load_scenario("heteroreason-u999")


def test_presets_set_the_toggles_of_each_system():
    base = cosim.scenario("gpu-baseline")
    assert base.sequential and not any(vars(base.toggles).values())
    assert base.draft.device.kind == "gpu"
    t2 = cosim.scenario("gpu-stepahead").toggles
    assert t2.step_ahead and t2.prefetch_cache and not t2.shadow_sync
    hr = cosim.scenario("heteroreason")
    assert hr.toggles.step_ahead and hr.toggles.shadow_sync and hr.draft.device.name == "U280"
    assert hr.draft.link.name == "PCIe Gen3 x16" and hr.target.link.name == "PCIe Gen4 x16"


def test_scenario_errors_name_file_line_and_field(tmp_path):
    bad = tmp_path / "s.yaml"
    bad.write_text("system: heteroreason\ndraft:\n  device: u280\n  overrides:\n    accelerator.clok: 300 MHz\n")
    with pytest.raises(cosim.ConfigError, match=r"s\.yaml:5: draft\.overrides\.accelerator\.clok: .*did you mean "
                                                r"'clock'"):
        cosim.load_scenario(bad)
    bad.write_text("system: heteroreason\ntoggles:\n  shadow_synch: false\n")
    with pytest.raises(cosim.ConfigError, match=r"s\.yaml:3: toggles\.shadow_synch: unknown parameter; did you mean "
                                                r"'shadow_sync'"):
        cosim.load_scenario(bad)
    bad.write_text("system: heteroreason\ncolour: red\n")
    with pytest.raises(cosim.ConfigError, match=r"s\.yaml:2: colour: unknown key"):
        cosim.load_scenario(bad)
    bad.write_text("system: gpu-baseline\ntoggles: {step_ahead: true}\n")
    with pytest.raises(cosim.ConfigError, match=r"s\.yaml:2: toggles: gpu-baseline is strictly sequential"):
        cosim.load_scenario(bad)
    bad.write_text("system: heteroreason\nconfig: 3\n")
    with pytest.raises(cosim.ConfigError, match=r"s\.yaml:2: config: config must be 1 .* got 3"):
        cosim.load_scenario(bad)
    bad.write_text("system: heteroreason\ndraft: {device: u280, overrides: {hbm.efficiency: 1.5}}\n")
    with pytest.raises(cosim.ConfigError, match=r"hbm\.efficiency: must be in \(0, 1\], got 1\.5"):
        cosim.load_scenario(bad)

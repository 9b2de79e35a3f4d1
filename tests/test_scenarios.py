from pathlib import Path

import pytest

import cosim

SCENARIOS = sorted((Path(__file__).parent.parent / "scenarios").glob("*.yaml"))


def test_every_system_has_a_scenario_file_on_both_configs():
    names = {p.stem for p in SCENARIOS}
    for stem in ("gpu_baseline", "gpu_stepahead", "heteroreason_u280_200", "heteroreason_u280_300",
                 "heteroreason_v80", "heteroreason_jetson", "heteroreason_vanilla", "heteroreason_nobacktrack"):
        assert stem in names and f"{stem}_config2" in names


@pytest.mark.parametrize("path", SCENARIOS, ids=[p.stem for p in SCENARIOS])
def test_each_scenario_file_loads_and_resolves(path):
    scn = cosim.load_scenario(path)
    resolved = scn.resolved()
    assert resolved["system"] in ("gpu-baseline", "gpu-stepahead", "heteroreason")
    assert resolved["target"]["model"]["name"] == ("Qwen2.5-Math-7B" if scn.config == 1 else "Qwen2.5-Math-1.5B")
    if any(k in path.stem for k in ("u280_300", "vanilla", "noprefetch", "nobacktrack")):
        assert scn.draft.device.accelerator.clock_mhz == 300.0


def test_presets_set_the_toggles_of_spec_section_2():
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

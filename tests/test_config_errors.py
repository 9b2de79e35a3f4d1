import pytest

from cosim import ConfigError, load_device, load_link, load_model, standalone


def test_unknown_parameter_key_names_file_line_and_key(tmp_yaml):
    path = tmp_yaml("link.yaml", "kind: pcie\nname: x\nbandwidth: 16 GB/s\nefficency: 0.8\nlatency: 1 us\n")
    with pytest.raises(ConfigError, match=r"link\.yaml:4: efficency: unknown parameter; did you mean 'efficiency'"):
        load_link(path)


def test_unknown_nested_key(tmp_yaml):
    text = (load_device("u280") and open(__import__("cosim").hardware.builtin_path("device", "u280")).read())
    path = tmp_yaml("fpga.yaml", text.replace("  macs_per_cycle:", "  mac_per_cycle:"))
    with pytest.raises(ConfigError, match=r"fpga\.yaml:\d+: accelerator\.mac_per_cycle: unknown parameter"):
        load_device(path)


def test_negative_bandwidth_is_refused():
    with pytest.raises(ConfigError, match=r"bandwidth.*must be > 0, got '-4 GB/s'"):
        standalone.transfer("pcie_gen3_x16", 1024, overrides={"bandwidth": "-4 GB/s"})
    with pytest.raises(ConfigError, match=r"bandwidth_gbps.*must be > 0"):
        standalone.transfer("pcie_gen3_x16", 1024, overrides={"bandwidth_gbps": -4})


def test_zero_clock_is_refused():
    with pytest.raises(ConfigError, match=r"clock_mhz: must be > 0, got 0"):
        standalone.fpga_decode("u280", tokens=1, clock_mhz=0)


def test_missing_unit_names_the_parameter(tmp_yaml):
    path = tmp_yaml("link.yaml", "kind: pcie\nname: x\nbandwidth: 16\nefficiency: 0.8\nlatency: 1 us\n")
    with pytest.raises(ConfigError, match=r"link\.yaml:3: bandwidth: missing unit in 16"):
        load_link(path)


def test_wrong_unit_names_the_dimension(tmp_yaml):
    path = tmp_yaml("link.yaml", "kind: pcie\nname: x\nbandwidth: 16 MHz\nefficiency: 0.8\nlatency: 1 us\n")
    with pytest.raises(ConfigError, match=r"link\.yaml:3: bandwidth: unit 'MHz' is not a bandwidth unit"):
        load_link(path)


def test_units_convert(tmp_yaml):
    path = tmp_yaml("link.yaml", "kind: pcie\nname: x\nbandwidth: 128 Gbit/s\nefficiency: 1\nlatency: 0.5 us\n")
    link = load_link(path)
    assert link.bandwidth_gbps == 16.0 and link.latency_ns == 500.0


@pytest.mark.parametrize(
    "line,message",
    [
        ("efficiency: 1.5", r"efficiency: must be in \(0, 1\]"),
        ("efficiency: .nan", r"efficiency: must be a finite number"),
        ("efficiency: yes", r"efficiency: expected a number"),
        ("efficiency: {value: 0.8}", r"efficiency: a value given as a mapping needs a 'source' or an 'estimate'"),
    ],
)
def test_bad_values(tmp_yaml, line, message):
    path = tmp_yaml("link.yaml", f"kind: pcie\nname: x\nbandwidth: 16 GB/s\n{line}\nlatency: 1 us\n")
    with pytest.raises(ConfigError, match=r"link\.yaml:4: " + message):
        load_link(path)


def test_missing_parameter_and_syntax_error(tmp_yaml):
    with pytest.raises(ConfigError, match=r"missing parameter 'latency_ns'"):
        load_link(tmp_yaml("a.yaml", "kind: pcie\nname: x\nbandwidth: 16 GB/s\nefficiency: 0.8\n"))
    with pytest.raises(ConfigError, match=r"b\.yaml:4: YAML syntax error: .*flow sequence on line 3"):
        load_link(tmp_yaml("b.yaml", "kind: pcie\nname: x\nbandwidth: [16 GB/s\n"))


def test_negative_model_size_and_unknown_names(tmp_yaml):
    text = open(__import__("cosim").hardware.builtin_path("model", "qwen2.5-0.5b")).read()
    path = tmp_yaml("m.yaml", text.replace("layers: {value: 24", "layers: {value: -24"))
    with pytest.raises(ConfigError, match=r"m\.yaml:4: layers: must be > 0, got -24"):
        load_model(path)
    with pytest.raises(ConfigError, match=r"unknown device 'u281'; built-in: .*u280"):
        load_device("u281")
    with pytest.raises(ConfigError, match=r"unknown parameter; did you mean 'clock'"):
        standalone.fpga_decode("u280", overrides={"accelerator.clok": "200 MHz"})


def test_native_layer_refuses_unknown_and_missing_keys_itself():
    # The C++ facade checks too, for anyone who calls it without the Python config layer.
    from cosim.engine._isolation import run_isolated
    from cosim._extension import native

    good = {"bandwidth_gbps": 16.0, "efficiency": 0.8, "latency_ns": 0.0}
    with pytest.raises(ConfigError, match=r"pcie\.colour: unknown parameter"):
        run_isolated(lambda: native().pcie_transfers({**good, "colour": 1.0}, []))
    with pytest.raises(ConfigError, match=r"pcie\.latency_ns: missing parameter"):
        run_isolated(lambda: native().pcie_transfers({"bandwidth_gbps": 16.0, "efficiency": 0.8}, []))
    with pytest.raises(ConfigError, match=r"pcie\.bandwidth_gbps: must be a finite number > 0, got -1"):
        run_isolated(lambda: native().pcie_transfers({**good, "bandwidth_gbps": -1.0}, []))

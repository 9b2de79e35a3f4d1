"""`cosim builtins --sources NAME`: every value of a built-in description with its source or
estimate and range, checked against the YAML file read here on its own."""

import yaml

from cosim.config import hardware
from cosim.cli import main
from conftest import one_line_error, run_cli


def cited(data, prefix=""):
    """(key, value, kind, note, range) of each value of a parsed description, walked here."""
    for key, raw in data.items():
        if key == "kind":
            continue
        if isinstance(raw, dict) and "value" in raw:
            kind = "source" if "source" in raw else "estimate"
            yield f"{prefix}{key}", raw["value"], kind, raw[kind], raw.get("range")
        elif isinstance(raw, dict):
            yield from cited(raw, f"{prefix}{key}.")
        else:
            yield f"{prefix}{key}", raw, "given", "", None


def test_every_value_of_a_device_is_listed_with_its_citation(capsys):
    data = yaml.safe_load(hardware.builtin_path("device", "kv260-llama-fpga").read_text())
    expected = list(cited(data))
    assert main(["builtins", "--sources", "kv260-llama-fpga"]) == 0
    lines = capsys.readouterr().out.splitlines()
    sources = sum(kind == "source" for _, _, kind, _, _ in expected)
    estimates = sum(kind == "estimate" for _, _, kind, _, _ in expected)
    assert lines[0] == f"device kv260-llama-fpga: {sources} values cite a source, {estimates} are estimates"
    assert estimates > 0 and sources > 0
    body = "\n".join(lines[1:])
    for key, value, kind, note, span in expected:
        shown = f"  {key} = {value}" + (f"  [{kind}] {note}" if note else "")
        assert shown in lines, shown
        if span is not None:
            assert f"      plausible range [{span[0]}, {span[1]}]" in body
    # The clock's line, by hand.
    assert ("  accelerator.clock = 300 MHz  [source] llama-fpga kv260bd.bd: PL0_REF_CTRL 300 MHz (actual "
            "299.997), the decoder's m_axi_hp ports at FREQ_HZ 299997009") in lines


def test_links_and_models_list_theirs_too(capsys):
    assert main(["builtins", "--sources", "pcie_gen3_x16"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("link pcie_gen3_x16: 1 value cites a source, 2 are estimates")
    assert main(["builtins", "--sources", "llama-2-7b"]) == 0
    assert "  layers = 32  [source] meta-llama/Llama-2-7b-hf config.json: num_hidden_layers" in \
        capsys.readouterr().out.splitlines()


def test_an_unknown_name_is_one_line_and_status_2(tmp_path):
    line = one_line_error(run_cli("builtins", "--sources", "no-such-board", cwd=tmp_path))
    assert "--sources" in line and "no-such-board" in line

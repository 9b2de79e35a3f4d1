"""Each parameter is declared once (cosim/schema/_declarations.py): the Python config
classes, the compiled C++ structs and their readers, and `cosim params` all follow it."""

import dataclasses
import shutil
import subprocess
import sys

import pytest

from cosim import ConfigError, hardware
from cosim._extension import native
from cosim.schema._params import build, config_class, describe
from cosim.schema import _declarations as decl
from conftest import ROOT, run_cli

CPP = {float: "double", int: "int64_t", bool: "bool", str: "std::string"}
CLASSES = {"pcie": hardware.PcieLinkConfig, "hbm": hardware.HbmConfig, "power": hardware.PowerConfig,
           "fpga": hardware.FpgaAcceleratorConfig, "gpu": hardware.GpuConfig, "model": hardware.ModelConfig,
           "parallel": hardware.ParallelConfig}


@pytest.mark.parametrize("group", decl.GROUPS, ids=lambda g: g.key)
def test_the_compiled_structs_hold_exactly_the_declared_native_parameters(group):
    compiled = native().param_declarations()[group.key]
    declared = [(d.name, CPP[d.type], d.rule) for d in group.params if d.native]
    assert [tuple(p) for p in compiled] == declared


@pytest.mark.parametrize("group", decl.GROUPS, ids=lambda g: g.key)
def test_the_python_classes_and_cosim_params_follow_the_declarations(group):
    cls = CLASSES[group.key]
    fields = dataclasses.fields(cls)
    assert [f.name for f in fields] == [d.name for d in group.params]
    for f, d in zip(fields, group.params):
        assert f.type is d.type or f.type == d.type.__name__
        assert (f.metadata["help"], f.metadata["rule"], f.metadata["native"]) == (d.help, d.rule, d.native)
        required = d.default is decl.REQUIRED
        assert (f.default is dataclasses.MISSING) == required and (required or f.default == d.default)
    listing = run_cli("params", group.key, cwd=ROOT).stdout
    for d in group.params:
        assert d.name in listing and d.help in listing


TOY = decl.Decl("toy_knob_mhz", float, "a toy parameter, added in one place")


def toy_group():
    return dataclasses.replace(decl.FPGA, key="toy", python="ToyConfig", native="ToyParams",
                               macro="COSIM_TOY_PARAMS", params=decl.FPGA.params + (TOY,))


def test_a_toy_parameter_declared_once_is_a_python_parameter_with_unit_and_rule():
    cls = config_class(toy_group(), __name__)
    row = next(r for r in describe(cls) if r["name"] == "toy_knob_mhz")
    assert (row["unit"], row["rule"], row["help"]) == ("MHz", "> 0", TOY.help)
    values = {f.name: 1 for f in dataclasses.fields(cls) if f.default is dataclasses.MISSING}
    values.pop("toy_knob_mhz")
    assert build(cls, {**values, "toy_knob": "0.5 GHz"}).toy_knob_mhz == 500.0
    with pytest.raises(ConfigError, match="toy_knob_mhz: must be > 0"):
        build(cls, {**values, "toy_knob_mhz": -1})


@pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is not installed")
def test_a_toy_parameter_declared_once_is_a_cpp_field_with_its_rule(tmp_path):
    (tmp_path / "toy_declarations.py").write_text(
        "import dataclasses\nfrom cosim.schema._declarations import FPGA, REQUIRED, Decl\n"
        "GROUPS = (dataclasses.replace(FPGA, native='ToyParams', macro='COSIM_TOY_PARAMS', "
        "params=FPGA.params + (Decl('toy_knob_mhz', float, 'a toy'),)),)\n")
    header = tmp_path / "gen" / "cosim_params.hpp"
    subprocess.run([sys.executable, ROOT / "scripts" / "gen_native_params.py", header,
                    tmp_path / "toy_declarations.py"], check=True)
    (tmp_path / "toy.cpp").write_text(
        '#include <cstdio>\n#include "param_rules.hpp"\n'
        "struct ToyParams {\n  COSIM_TOY_PARAMS(COSIM_DECLARE_PARAM)\n"
        "  void validate(const std::string& where) const { COSIM_TOY_PARAMS(COSIM_CHECK_PARAM) }\n};\n"
        "int main() {\n  ToyParams p;\n  p.clock_mhz = p.macs_per_cycle = p.port_width_bits = 1;\n"
        "  p.hbm_ports = 1; p.port_efficiency = p.weight_bytes_per_param = p.kv_bytes_per_element = 1;\n"
        "  p.toy_knob_mhz = -1;\n  try { p.validate(\"toy\"); } catch (const cosim::ConfigError& e) "
        "{ std::puts(e.what()); return 0; }\n  return 1;\n}\n")
    exe = tmp_path / "toy"
    subprocess.run(["g++", "-std=c++17", f"-I{ROOT / 'models'}", f"-I{header.parent}", tmp_path / "toy.cpp",
                    ROOT / "models" / "errors.cpp", "-o", exe], check=True)
    done = subprocess.run([exe], capture_output=True, text=True)
    assert done.returncode == 0
    assert done.stdout.strip() == "toy.toy_knob_mhz: must be a finite number > 0, got -1"


def test_the_params_doc_is_what_the_declarations_write():
    done = subprocess.run([sys.executable, ROOT / "scripts" / "gen_params_doc.py", "--check"],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    doc = (ROOT / "docs" / "params.md").read_text()
    for group in decl.GROUPS:
        assert f"## `{group.key}`" in doc
        for d in group.params:
            assert f"| `{d.name}` |" in doc and d.help in doc

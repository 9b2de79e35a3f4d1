"""The example measurements of `cosim fit` (examples/fit/) are what their generator writes,
the README's and docs' fit commands run on them as written, and each fit recovers the
parameter values the generator used, values the docs quote."""

import importlib.util
import re

import pytest
import yaml

from conftest import ROOT, run_cli

FOLDER = ROOT / "examples" / "fit"
spec = importlib.util.spec_from_file_location("make_examples", FOLDER / "make_examples.py")
make = importlib.util.module_from_spec(spec)
spec.loader.exec_module(make)


def test_the_shipped_files_are_what_the_generator_writes(tmp_path):
    make.main(tmp_path)
    for name in make.FILES.values():
        assert (tmp_path / name).read_text() == (FOLDER / name).read_text(), name


def fitted(out):
    """The fitted device file's accelerator or gpu values."""
    body = yaml.safe_load(out.read_text())
    group = body.get("accelerator") or body.get("gpu")
    return {k: (v["value"] if isinstance(v, dict) else v) for k, v in group.items()}


def documented(kind):
    """The example's `cosim fit` command as docs/hardware.md gives it."""
    text = (ROOT / "docs" / "hardware.md").read_text()
    return re.search(rf"^cosim fit {kind} examples/fit/\S+ .*$", text, re.M).group(0)


@pytest.mark.parametrize("kind,truth", [("fpga", make.FPGA_TRUTH), ("gpu", make.GPU_TRUTH)])
def test_each_fit_recovers_the_values_that_made_its_points(tmp_path, kind, truth):
    import shlex

    words = shlex.split(documented(kind))
    out = tmp_path / words[words.index("--out") + 1]
    words[words.index("--out") + 1] = str(out)
    words[3] = str(ROOT / words[3])  # the example, run from the repository root
    done = run_cli(*words[1:], cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    values = fitted(out)
    for name, value in truth.items():
        assert values[name] == pytest.approx(value, rel=1e-3), name
    assert "rms residual 0.000%" in done.stdout


def test_the_readme_runs_the_fpga_example():
    readme = (ROOT / "README.md").read_text()
    assert "cosim fit fpga examples/fit/u280_200mhz.csv --device u280 --clock \"200 MHz\"" in readme
    assert f"--clock \"{make.FPGA_CLOCK_MHZ} MHz\"" in documented("fpga")


def test_the_docs_quote_the_values_the_generator_used():
    text = " ".join((ROOT / "docs" / "hardware.md").read_text().split())
    fpga, gpu = make.FPGA_TRUTH, make.GPU_TRUTH
    assert (f"a MAC array of {fpga['macs_per_cycle']:g} and {fpga['pipeline_cycles_per_layer']:g} pipeline cycles "
            f"a layer; a {gpu['forward_overhead_ns'] / 1e6:g} ms forward overhead, memory and compute efficiencies "
            f"of {gpu['memory_efficiency']:g} and {gpu['compute_efficiency']:g}") in text

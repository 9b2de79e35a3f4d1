"""`cosim fit` recovers known parameters from points the model itself produced, gives
uncertainties that cover the truth on noisy points, and refuses fits the points cannot
determine."""

import os
import shutil
from pathlib import Path

import numpy as np
import pytest
import yaml

import cosim
from cosim import ConfigError, standalone
from cosim.fit import fit_fpga, fit_gpu
from cosim.config.hardware import builtin_path
from conftest import ROOT, run_cli

CONTEXTS = [0, 256, 512, 1024, 2048, 3000]
PREFILLS = [16, 64, 128, 256, 512]
# A FlexLLM-class decoder at 200 MHz with other values than shipped: decode is bound by the
# ports' width x clock (port_efficiency shows), long prefills by the MAC array.
FPGA_TRUTH = {"macs_per_cycle": 1500.0, "port_efficiency": 0.8, "pipeline_cycles_per_layer": 600.0}


def fpga_rows(truth, device="u280-flexllm", clock=200, contexts=CONTEXTS, prefills=PREFILLS):
    overrides = {f"accelerator.{k}": v for k, v in truth.items()} | {"accelerator.clock_mhz": clock}
    t = standalone.fpga_timing(device, contexts=contexts, prefill_tokens=prefills, overrides=overrides)
    rows = [("decode", 1, c, ns * 1e-9) for c, ns in zip(contexts, t["ns"])]
    return rows + [("prefill", n, 0, ns * 1e-9) for n, ns in zip(prefills, t["ns"][len(contexts):])]


def write_csv(path, rows):
    path.write_text("phase,tokens,context,seconds\n" + "".join(f"{p},{n},{c},{s!r}\n" for p, n, c, s in rows))
    return path


def test_fpga_fit_recovers_the_design_that_made_the_points(tmp_path):
    csv = write_csv(tmp_path / "measured.csv", fpga_rows(FPGA_TRUTH))
    result = fit_fpga(csv, "u280-flexllm", overrides={"accelerator.clock_mhz": 200})
    for name, value in FPGA_TRUTH.items():
        assert result.values[name] == pytest.approx(value, rel=0.01)
    assert result.rms < 1e-6
    assert set(result.bounds[:len(CONTEXTS)]) == {"ports"}


def test_fpga_fit_uncertainty_covers_the_truth_on_noisy_points(tmp_path):
    rng = np.random.default_rng(7)
    rows = [(p, n, c, s * (1 + 0.01 * rng.standard_normal())) for p, n, c, s in fpga_rows(FPGA_TRUTH)]
    result = fit_fpga(write_csv(tmp_path / "noisy.csv", rows), "u280-flexllm",
                      overrides={"accelerator.clock_mhz": 200})
    for name, value in FPGA_TRUTH.items():
        sigma = result.sigmas[name]
        assert sigma > 0
        assert abs(result.values[name] - value) < 4 * sigma
    assert 0.003 < result.rms < 0.03  # the 1% noise shows in the residuals


def test_cli_writes_a_device_file_that_times_the_points_as_measured(tmp_path):
    csv = write_csv(tmp_path / "measured.csv", fpga_rows(FPGA_TRUTH))
    out = tmp_path / "my_u280.yaml"
    done = run_cli("fit", "fpga", csv, "--device", "u280-flexllm", "--clock", "200 MHz", "--out", out, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "macs_per_cycle" in done.stdout and "residual" in done.stdout
    device = cosim.load_device(str(out))
    assert device.accelerator.clock_mhz == 200
    assert device.accelerator.macs_per_cycle == pytest.approx(1500, rel=0.01)
    text = out.read_text()
    assert "cosim fit fpga measured.csv (11 points" in text
    assert "FlexLLM dec_link_config" in text  # the values it did not fit keep their sources
    again = standalone.fpga_timing(str(out), contexts=CONTEXTS)
    for (_, _, _, seconds), ns in zip(fpga_rows(FPGA_TRUTH), again["ns"]):
        assert ns * 1e-9 == pytest.approx(seconds, rel=1e-5)


def test_a_parameter_without_influence_is_refused(tmp_path):
    # The paper's U280 design is compute-bound: no decode point depends on its ports.
    csv = write_csv(tmp_path / "decode.csv", fpga_rows({}, device="u280", prefills=[]))
    with pytest.raises(ConfigError, match="port_efficiency has no influence on these points"):
        fit_fpga(csv, "u280")
    out = tmp_path / "never.yaml"
    done = run_cli("fit", "fpga", csv, "--device", "u280", "--out", out, cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.startswith("cosim: error: port_efficiency has no influence") and "Traceback" not in done.stderr
    assert not out.exists()
    # Without it, the same points determine the MAC array and the pipeline.
    shipped = cosim.load_device("u280").accelerator
    result = fit_fpga(csv, "u280", params="macs_per_cycle,pipeline_cycles_per_layer")
    assert result.values["macs_per_cycle"] == pytest.approx(shipped.macs_per_cycle, rel=0.01)
    assert result.values["pipeline_cycles_per_layer"] == pytest.approx(shipped.pipeline_cycles_per_layer, rel=0.01)


def test_too_few_points_are_refused(tmp_path):
    csv = write_csv(tmp_path / "two.csv", fpga_rows(FPGA_TRUTH, contexts=[0, 100], prefills=[64]))
    with pytest.raises(ConfigError, match="cannot fit 3 parameters .* to 3 measured points"):
        fit_fpga(csv, "u280-flexllm")


def gpu_rows(truth, model="qwen2.5-math-7b"):
    points = [("decode", 1, c) for c in CONTEXTS] + [("prefill", n, 0) for n in (8, 64, 256, 1024, 2048)]
    t = standalone.gpu_timing("rtx3090", model, points, overrides={f"gpu.{k}": v for k, v in truth.items()})
    return [(p, n, c, ns * 1e-9) for (p, n, c), ns in zip(points, t["ns"])]


def test_gpu_fit_recovers_overhead_and_efficiencies(tmp_path):
    truth = {"forward_overhead_ns": 2.5e6, "memory_efficiency": 0.75, "compute_efficiency": 0.55}
    result = fit_gpu(write_csv(tmp_path / "profile_target.csv", gpu_rows(truth)), "rtx3090", "qwen2.5-math-7b")
    for name, value in truth.items():
        assert result.values[name] == pytest.approx(value, rel=0.01)


def test_collinear_gpu_parameters_are_refused(tmp_path):
    csv = write_csv(tmp_path / "p.csv", gpu_rows({"forward_overhead_ns": 2.5e6}))
    # With one model, a cost per forward call and a cost per layer move every point alike.
    with pytest.raises(ConfigError, match="forward_overhead_ns and layer_overhead_ns move these points the same"):
        fit_gpu(csv, "rtx3090", "qwen2.5-math-7b", params="forward_overhead_ns,layer_overhead_ns,memory_efficiency")


def tree(folder):
    """Every file under ``folder``: its bytes, or where a link points."""
    return {p.relative_to(folder): os.readlink(p) if p.is_symlink() else None if p.is_dir() else p.read_bytes()
            for p in sorted(folder.rglob("*"))}


@pytest.fixture
def boards(tmp_path):
    """A device file with a measured profile beside it, a model file, and measured points."""
    folder = tmp_path / "boards"
    folder.mkdir()
    write_csv(folder / "measured.csv", fpga_rows(FPGA_TRUTH))
    write_csv(folder / "prof.csv", [("decode", 1, 0, 0.010), ("decode", 1, 1000, 0.012)])
    (folder / "dev.yaml").write_text(builtin_path("device", "u280-flexllm").read_text()
                                     + "profile: {file: prof.csv, measured_clock: 200 MHz}\n")
    (folder / "model.yaml").write_text(builtin_path("model", "qwen2.5-0.5b").read_text())
    (tmp_path / "link.yaml").symlink_to("boards/measured.csv")
    return tmp_path


@pytest.mark.parametrize("args,what", [
    (["--out", "boards/measured.csv"], "the fit's input profile CSV boards/measured.csv"),
    (["--out", "link.yaml"], "the fit's input profile CSV boards/measured.csv"),
    (["--out", "boards/prof.csv"], "the profile CSV"),  # read only through the device file
    (["--out", "./boards/dev.yaml"], "the device file boards/dev.yaml the fit starts from"),
    (["--model", "boards/model.yaml", "--out", "boards/../boards/model.yaml"], "the model file boards/model.yaml"),
])
def test_out_naming_any_input_is_refused_before_the_fit(boards, args, what):
    before = tree(boards)
    done = run_cli("fit", "fpga", "boards/measured.csv", "--device", "boards/dev.yaml", "--clock", "200 MHz", *args,
                   cwd=boards)
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1, done.stderr
    out = args[-1]
    assert done.stderr.startswith(f"cosim: error: --out {out}: is the same file as {what}"), done.stderr
    assert done.stdout == ""  # refused before the fit ran: no table
    assert tree(boards) == before


def test_out_in_a_folder_of_operator_times_is_refused_before_the_fit(tmp_path):
    shutil.copytree(ROOT / "cosim" / "data" / "validation" / "rtx4090-llama-3.1-8b" / "profile", tmp_path / "prof")
    before = tree(tmp_path)
    done = run_cli("fit", "gpu", "prof", "--device", "rtx4090", "--model", "llama-3.1-8b", "--out", "prof/fit.yaml",
                   cwd=tmp_path)
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert done.stderr.startswith("cosim: error: --out prof/fit.yaml: lies in the fit's input operator-profile "
                                  "folder prof"), done.stderr
    assert done.stdout == "" and tree(tmp_path) == before


def test_a_fitted_device_written_elsewhere_finds_its_link_and_runs(tmp_path):
    boards, elsewhere, work = tmp_path / "boards", tmp_path / "elsewhere", tmp_path / "work"
    for folder in (boards, elsewhere, work):
        folder.mkdir()
    write_csv(boards / "measured.csv", fpga_rows(FPGA_TRUTH))
    # A link file of the user's beside the device file that names it by a relative path.
    (boards / "my_link.yaml").write_text(builtin_path("link", "pcie_gen3_x16").read_text())
    device = builtin_path("device", "u280-flexllm").read_text().replace("host_link: pcie_gen3_x16",
                                                                          "host_link: my_link.yaml")
    assert "host_link: my_link.yaml" in device
    (boards / "dev.yaml").write_text(device)
    done = run_cli("fit", "fpga", "../boards/measured.csv", "--device", "../boards/dev.yaml", "--clock", "200 MHz",
                   "--out", "../elsewhere/fitted.yaml", cwd=work)
    assert done.returncode == 0, done.stderr
    fitted = cosim.load_device(str(elsewhere / "fitted.yaml"))
    assert Path(fitted.host_link).resolve() == (boards / "my_link.yaml").resolve()
    scenario = elsewhere / "scn.yaml"
    scenario.write_text("name: fitted\nsystem: heteroreason\n"
                        f"draft: {{device: {elsewhere / 'fitted.yaml'}, model: qwen2.5-0.5b}}\n"
                        "prm: {device: rtx3090, model: qwen2.5-math-prm-7b}\ntarget: {device: rtx3090}\n")
    ran = run_cli("run", scenario, "--problems", "2", "--out", "r", "--quiet", cwd=tmp_path, timeout=300)
    assert ran.returncode == 0, ran.stderr
    assert (tmp_path / "r" / "summary.json").exists()


@pytest.mark.parametrize("name", ["odd\nextra_key: 1.csv", "a\u2028b: 2 # c.csv", "模型 ünï.csv"])
def test_a_fitted_device_loads_back_whatever_its_files_are_named(tmp_path, name):
    csv = write_csv(tmp_path / name, fpga_rows(FPGA_TRUTH))
    done = run_cli("fit", "fpga", csv.name, "--device", "u280-flexllm", "--clock", "200 MHz", "--out", "f.yaml",
                   cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    written = yaml.safe_load((tmp_path / "f.yaml").read_text(encoding="utf-8"))
    assert set(written) == set(yaml.safe_load(builtin_path("device", "u280-flexllm").read_text()))  # no key gained
    assert written["description"].endswith(f"; parameters fitted by cosim fit to {name}")
    assert cosim.load_device(str(tmp_path / "f.yaml")).accelerator.clock_mhz == 200

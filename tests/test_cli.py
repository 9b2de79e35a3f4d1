import cosim
from cosim.cli import main
from conftest import run_cli
from handmodel import Fpga, Gpu, Link, kv_elements


def test_demo_prints_a_result_for_every_model(capsys):
    assert main(["demo"]) == 0
    out = capsys.readouterr().out
    for device in ("PCIe Gen3 x16", "U280 @ 200 MHz", "U280 @ 300 MHz", "V80", "Jetson Orin Nano",
                   "RTX 3090, Math-7B"):
        assert device in out
    lines = {line[2:22].strip(): line for line in out.splitlines() if line.startswith("  ")}
    # From the timing formulas: the KV of a 100-token prompt (the draft model's, INT8 as the
    # FPGA holds it) over PCIe Gen3; a 64-token step drafted at context 400 on the U280 at
    # 200 and 300 MHz; and refined on the RTX 3090 by the 7B target.
    int8 = cosim.load_device("u280").accelerator.kv_bytes_per_element
    kv_bytes = 100 * kv_elements(cosim.load_model("qwen2.5-0.5b")) * int8
    assert f"({kv_bytes:.0f} B)  {Link('pcie_gen3_x16').ns(kv_bytes) / 1e3:.2f} us" in lines["PCIe Gen3 x16"]
    for clock in (200, 300):
        per_token_ms = Fpga(clock_mhz=clock).step(400, 64) / 64 / 1e6
        assert f"{per_token_ms:.3f} ms/token ({1e3 / per_token_ms:.0f} tok/s)" in lines[f"U280 @ {clock} MHz"]
    target = Gpu("rtx3090", "qwen2.5-math-7b")
    per_token_ms = sum(target.decode(400 + j) for j in range(64)) / 64 / 1e6
    assert f"{per_token_ms:.2f} ms/token" in lines["RTX 3090, Math-7B"]


def test_params_lists_units_and_help(capsys):
    assert main(["params", "pcie"]) == 0
    out = capsys.readouterr().out
    assert "bandwidth_gbps" in out and "GB/s" in out and "latency_ns" in out


def test_user_error_exits_2_without_traceback(tmp_path):
    proc = run_cli("params", "nonsense", cwd=tmp_path)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr

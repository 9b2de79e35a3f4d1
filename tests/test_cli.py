from cosim.cli import main
from conftest import run_cli


def test_demo_prints_a_result_for_every_model(capsys):
    assert main(["demo"]) == 0
    out = capsys.readouterr().out
    for device in ("PCIe Gen3 x16", "U280 @ 200 MHz", "U280 @ 300 MHz", "V80", "Jetson Orin Nano",
                   "RTX 3090, Math-7B"):
        assert device in out
    assert "tok/s" in out and "J" in out


def test_params_lists_units_and_help(capsys):
    assert main(["params", "pcie"]) == 0
    out = capsys.readouterr().out
    assert "bandwidth_gbps" in out and "GB/s" in out and "latency_ns" in out


def test_user_error_exits_2_without_traceback(tmp_path):
    proc = run_cli("params", "nonsense", cwd=tmp_path)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr

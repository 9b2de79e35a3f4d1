"""Errors on the command line name the command's flag, never the Python API behind it:
exit status 2 and one line."""

from pathlib import Path

import pytest

from conftest import run_cli

# Three decode points and a prefill, in the CSV `cosim fit` reads (seconds per token).
MEASURED = "phase,tokens,context,seconds\ndecode,1,100,0.001\ndecode,1,200,0.0011\nprefill,64,0,0.01\n"


def one_line_error(proc):
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("cosim: error: "), proc.stderr
    return lines[0][len("cosim: error: "):]


@pytest.mark.parametrize("kind, device, other", [("gpu", "u280", "fpga"), ("fpga", "rtx3090", "gpu")])
def test_fit_of_the_other_kind_of_device_names_device_and_the_command(tmp_path, kind, device, other):
    (tmp_path / "m.csv").write_text(MEASURED)
    message = one_line_error(run_cli("fit", kind, "m.csv", "--device", device, "--model", "qwen2.5-0.5b",
                                     cwd=tmp_path))
    assert message.startswith(f"--device {device}: ")
    assert f"cosim fit {other}" in message and "fit_" not in message


@pytest.mark.parametrize("clock, why", [("fast", "not a quantity"), ("200", "missing unit"),
                                        ("200 GB", "not a frequency unit"), ("0 MHz", "must be > 0"),
                                        ("-5 MHz", "must be > 0")])
def test_fit_clock_errors_name_the_clock_flag(tmp_path, clock, why):
    (tmp_path / "m.csv").write_text(MEASURED)
    message = one_line_error(run_cli("fit", "fpga", "m.csv", "--clock", clock, cwd=tmp_path))
    assert message.startswith("--clock: ") and why in message
    assert "accelerator" not in message and "clock_mhz" not in message


def test_report_problems_names_the_flag(tmp_path):
    message = one_line_error(run_cli("report", "--problems", "0", "--quiet", "--out", "r", cwd=tmp_path))
    assert message.startswith("--problems: ") and "got 0" in message


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs Linux /proc, where no file can be made")
@pytest.mark.parametrize("command, flag", [("run", "--vcd"), ("run", "--timeline"), ("serve", "--vcd")])
def test_an_output_that_cannot_be_written_is_named_by_its_flag(tmp_path, command, flag):
    count = ["--problems", "2"] if command == "run" else ["--requests", "2", "--rate", "1"]
    message = one_line_error(run_cli(command, "heteroreason-u280-200", *count, "--quiet", "--out", "r",
                                     flag, "/proc/cosim-output", cwd=tmp_path))
    assert message.startswith(f"{flag} /proc/cosim-output"), message

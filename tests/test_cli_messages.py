"""Errors on the command line name the command's flag, never the Python API behind it:
exit status 2 and one line."""

import json
from pathlib import Path

import conftest
import pytest

from conftest import run_cli

# Three decode points and a prefill, in the CSV `cosim fit` reads (seconds per token).
MEASURED = "phase,tokens,context,seconds\ndecode,1,100,0.001\ndecode,1,200,0.0011\nprefill,64,0,0.01\n"


def one_line_error(proc):
    """The error's line without its prefix."""
    return conftest.one_line_error(proc)[len(conftest.ERROR):]


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


def _request(name, arrival, queued):
    return json.dumps({"request_id": name, "input_toks": 10, "output_toks": 5, "arrival_time": arrival,
                       "queued_ts": queued, "scheduled_ts": queued, "first_token_ts": queued + 1,
                       "last_token_ts": queued + 2})


@pytest.mark.parametrize("clock, field", [("client", "arrival_time"), ("engine", "queued_ts")])
def test_a_vllm_log_spanning_more_than_a_trace_holds_names_its_line_and_field(tmp_path, clock, field):
    # Line 2 arrives first, line 3 a second past the 10^6 s a trace's arrivals may span.
    lines = [_request("a", 5000.0, 50.0), _request("b", 1000.0, 10.0),
             _request("c", 1000.0 + 1e6 + 1, 10.0 + 1e6 + 1), _request("d", 1000.0 + 2e6, 10.0 + 2e6)]
    (tmp_path / "log.jsonl").write_text("\n".join(lines) + "\n")
    message = one_line_error(run_cli("trace", "import", "log.jsonl", "--clock", clock, "--out", "t.jsonl",
                                     cwd=tmp_path))
    assert message.startswith(f"log.jsonl:3: {field}: ") and "1e+06 s" in message and "(line 2)" in message
    assert not (tmp_path / "t.jsonl").exists()


@pytest.mark.parametrize("command", [["sweep", "heteroreason-u280-200", "--set", "fpga.clock_mhz=200"],
                                     ["sensitivity", "heteroreason-u280-200"]])
def test_workers_below_one_is_named_by_the_flag(tmp_path, command):
    message = one_line_error(run_cli(*command, "--workers", "0", "--problems", "2", "--quiet", "--out", "o",
                                     cwd=tmp_path))
    assert message.startswith("--workers: ") and "got 0" in message

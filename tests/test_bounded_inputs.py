"""Inputs are regular files of bounded size, read as UTF-8: a device, a named FIFO or an
endless stream given as a scenario, trace, profile or YAML is refused (or, a pipe given as
a trace, read line by line with each line bounded), an over-long line is an error naming
the file and line, UTF-16 text is named as such, and no message quotes a file's content.

Every command here would read forever, or wait forever, without its bound: each runs
under a generous timeout, and a timeout fails the test."""

import os
import subprocess
import sys
import threading

import pytest

from conftest import ROOT, run_cli

DATA = ROOT / "cosim" / "data"
SECRET = "SECRET-3f9a1c"


def refused(proc, message):
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert proc.stderr.startswith("cosim: error: ") and message in proc.stderr, proc.stderr


def cli(tmp_path, *args):
    return run_cli(*args, cwd=tmp_path, timeout=300)


def scenario_with(tmp_path, role_line):
    (tmp_path / "s.yaml").write_text(f"system: heteroreason\n{role_line}\n")
    return "s.yaml"


@pytest.fixture
def odd_files(tmp_path):
    """zero.yaml and zero.csv (links to /dev/zero) and a named FIFO nobody writes."""
    for name in ("zero.yaml", "zero.csv", "zero.jsonl"):
        os.symlink("/dev/zero", tmp_path / name)
    os.mkfifo(tmp_path / "fifo.yaml")
    return tmp_path


@pytest.mark.parametrize("args,message", [
    (["run", "/dev/zero", "--problems", "1", "--out", "o"], "/dev/zero: is a device; give a regular file"),
    (["run", "zero.yaml", "--problems", "1", "--out", "o"], "zero.yaml: is a device"),
    (["run", "fifo.yaml", "--problems", "1", "--out", "o"], "fifo.yaml: is a FIFO or pipe; give a regular file"),
    (["run", "heteroreason-u280-200", "--trace", "/dev/zero", "--out", "o"], "/dev/zero: is a device"),
    (["run", "heteroreason-u280-200", "--trace", "fifo.yaml", "--out", "o"], "fifo.yaml: is a named FIFO"),
    (["run", "heteroreason-u280-200", "--profile", "zero.yaml", "--problems", "1", "--out", "o"],
     "zero.yaml: is a device"),
    (["trace", "gen", "--profile", "fifo.yaml", "--problems", "1", "--out", "t.jsonl"], "fifo.yaml: is a FIFO"),
    (["trace", "validate", "zero.jsonl"], "zero.jsonl: is a device"),
    (["trace", "profile-data", "/dev/zero"], "/dev/zero: is a device"),
    (["fit", "gpu", "zero.csv", "--model", "qwen2.5-0.5b"], "zero.csv: is a device"),
    (["model", "import", "/dev/zero"], "/dev/zero: is a device"),
])
def test_devices_and_fifos_are_refused_before_a_byte_is_read(odd_files, args, message):
    refused(cli(odd_files, *args), message)
    assert not (odd_files / "o").exists() and not (odd_files / "t.jsonl").exists()


@pytest.mark.parametrize("role", ["target: {device: rtx3090, profile: zero.csv}",
                                  "target: {device: rtx3090, profile: fifo.yaml}",
                                  "prm: {device: zero.yaml}", "prm: {model: fifo.yaml}",
                                  "target: {link: zero.yaml}"])
def test_a_scenario_naming_a_device_or_fifo_is_refused_naming_its_line(odd_files, role):
    refused(cli(odd_files, "run", scenario_with(odd_files, role), "--problems", "1", "--out", "o"),
            "s.yaml:2: ")


def pipe_into(args, cwd, writer_code):
    """The command reading its stdin from a pipe that another process fills."""
    writer = subprocess.Popen([sys.executable, "-c", writer_code], stdout=subprocess.PIPE, cwd=cwd)
    try:
        proc = subprocess.run([sys.executable, "-m", "cosim.cli", *args], cwd=cwd, stdin=writer.stdout,
                              capture_output=True, text=True, timeout=300)
    finally:
        writer.stdout.close()
        writer.kill()
        writer.wait(timeout=60)
    return proc.returncode, proc.stdout, proc.stderr


def test_a_trace_may_come_through_a_pipe_and_an_endless_line_stops_at_its_bound(tmp_path):
    assert cli(tmp_path, "trace", "gen", "--profile", "gsm8k", "--problems", "3", "--out", "t.jsonl",
               "--quiet").returncode == 0
    code, out, err = pipe_into(["trace", "validate", "/dev/stdin"], tmp_path,
                               "import sys; sys.stdout.buffer.write(open('t.jsonl', 'rb').read())")
    assert code == 0 and "valid, 3 problems" in out, err
    endless = "import sys\nwhile True: sys.stdout.buffer.write(b'{' * (1 << 20))"
    code, out, err = pipe_into(["trace", "validate", "/dev/stdin"], tmp_path, endless)
    assert code == 2 and "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert "/dev/stdin:1: the line is longer than 64 MiB" in err


def test_over_long_lines_and_files_are_errors_naming_file_and_line(tmp_path):
    (tmp_path / "long.csv").write_text("phase,tokens,context,seconds\ndecode,1,0," + "1" * 200_000 + "\n")
    refused(cli(tmp_path, "run", scenario_with(tmp_path, "target: {device: rtx3090, profile: long.csv}"),
                "--problems", "1", "--out", "o"), "long.csv:2: the line is longer than 64 KiB")
    (tmp_path / "big.yaml").write_text("# " + "x" * (5 << 20) + "\n")
    refused(cli(tmp_path, "run", "big.yaml", "--out", "o"), "big.yaml: 5242883 bytes, past the 4 MiB")
    # A layer-times CSV goes through the same reader.
    (tmp_path / "layers.csv").write_text("layer_name,input,kv_cache,tp_size,latency(ns)\n" + "a," * 40_000 + "\n")
    refused(cli(tmp_path, "fit", "gpu", "layers.csv", "--model", "qwen2.5-0.5b"), "layers.csv:2: the line is longer")


def test_utf16_inputs_are_named_as_such(tmp_path):
    profile = "phase,tokens,context,seconds\ndecode,1,0,0.02\n"
    (tmp_path / "bom.csv").write_bytes(profile.encode("utf-16"))
    (tmp_path / "nobom.csv").write_bytes(profile.encode("utf-16-le"))
    (tmp_path / "u16.yaml").write_bytes("system: heteroreason\n".encode("utf-16"))
    refused(cli(tmp_path, "run", scenario_with(tmp_path, "target: {device: rtx3090, profile: bom.csv}"),
                "--problems", "1", "--out", "o"), "bom.csv: UTF-16 text (it starts with a UTF-16 byte-order mark)")
    refused(cli(tmp_path, "run", scenario_with(tmp_path, "target: {device: rtx3090, profile: nobom.csv}"),
                "--problems", "1", "--out", "o"), "nobom.csv:1: not UTF-8 text (NUL bytes between the characters")
    refused(cli(tmp_path, "run", "u16.yaml", "--out", "o"), "u16.yaml: UTF-16 text")
    (tmp_path / "t.jsonl").write_bytes('{"version": 1}\n'.encode("utf-16"))
    refused(cli(tmp_path, "trace", "validate", "t.jsonl"), "t.jsonl: UTF-16 text")
    # A UTF-8 byte-order mark (as spreadsheets save CSV) is read past.
    (tmp_path / "excel.csv").write_bytes(b"\xef\xbb\xbf" + profile.encode())
    assert cli(tmp_path, "run", scenario_with(tmp_path, "target: {device: rtx3090, profile: excel.csv}"),
               "--problems", "1", "--out", "o", "--quiet").returncode == 0


@pytest.mark.parametrize("role", ["target: {device: rtx3090, profile: secret.txt}",
                                  "target: {device: rtx3090, profile: secret}",
                                  "prm: {device: secret.yaml}", "prm: {model: secret.yaml}",
                                  "prm: {link: secret.yaml}"])
def test_no_message_quotes_a_file_a_scenario_names(tmp_path, role):
    (tmp_path / "secret.txt").write_text(f"{SECRET},{SECRET}\nmore {SECRET}\n")
    (tmp_path / "secret.yaml").write_text(f"{SECRET}\n")
    (tmp_path / "secret").mkdir()  # an operator-profile folder of files that are not profiles
    for name in ("dense.csv", "per_sequence.csv", "attention.csv", "layers.csv"):
        (tmp_path / "secret" / name).write_text(f"{SECRET}\n1,2\n")
    proc = cli(tmp_path, "run", scenario_with(tmp_path, role), "--problems", "1", "--out", "o")
    refused(proc, "s.yaml:2: ")
    assert SECRET not in proc.stderr


@pytest.mark.parametrize("args", [["trace", "validate", "secret.txt"], ["trace", "profile-data", "secret.txt"],
                                  ["run", "heteroreason-u280-200", "--profile", "secret.yaml", "--out", "o"],
                                  ["run", "heteroreason-u280-200", "--trace", "secret.txt", "--out", "o"],
                                  ["fit", "gpu", "secret.txt", "--model", "qwen2.5-0.5b"],
                                  ["fit", "fpga", "secret.txt"]])
def test_no_message_quotes_a_file_given_on_the_command_line(tmp_path, args):
    (tmp_path / "secret.txt").write_text(f"{SECRET},{SECRET}\nmore {SECRET}\n")
    (tmp_path / "secret.yaml").write_text(f"{SECRET}\n")
    proc = cli(tmp_path, *args)
    refused(proc, "secret.")
    assert SECRET not in proc.stderr

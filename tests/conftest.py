import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = ROOT / "cosim" / "data" / "scenarios"  # the built-in scenarios


def run_cli(*args, cwd, **kwargs):
    """`cosim` in a child process, from a folder that holds no source tree (so the
    installed package is what runs, whichever way it was installed)."""
    return subprocess.run([sys.executable, "-m", "cosim.cli", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, **kwargs)

ERROR = "cosim: error: "  # how the command line begins a user error


def one_line_error(result):
    """The command failed as bad input does: status 2, one line naming what is wrong, no
    traceback. The line, with its prefix."""
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(ERROR) and "Traceback" not in result.stderr, result.stderr
    return lines[0]


def refused_serving(tmp_path, scenario, sets=(), folder="out"):
    """The one-line error of a short `cosim serve` of ``scenario`` with ``--set`` options,
    which writes nothing."""
    options = [a for s in sets for a in ("--set", s)]
    message = one_line_error(run_cli("serve", scenario, *options, "--rate", "1", "--requests", "2", "--quiet",
                                     "--out", tmp_path / folder, cwd=tmp_path))
    assert not (tmp_path / folder).exists()
    return message


# Datasheet figures restated here, independently of the package's YAML, so the
# tests check the shipped data as well as the formulas.
GEN3_RAW_GBPS = 15.75  # 8 GT/s x 16 lanes, 128b/130b, rounded
GEN4_RAW_GBPS = 31.5
U280_HBM_BYTES = 8 * 1024**3
U280_HBM_PEAK_GBPS = 32 * 14.375


def qwen_linear_macs(layers, hidden, heads, kv_heads, head_dim, ffn, head):
    """Weight MACs of one token: q, k, v, o projections, gated MLP, output head."""
    per_layer = hidden * heads * head_dim + 2 * hidden * kv_heads * head_dim + heads * head_dim * hidden
    per_layer += 3 * hidden * ffn
    return layers * per_layer + head


# Qwen2.5-0.5B config: 24 layers, hidden 896, 14/2 heads, head dim 64, FFN 4864, vocab 151936, tied.
DRAFT_MACS = qwen_linear_macs(24, 896, 14, 2, 64, 4864, 896 * 151936)
DRAFT_KV_ELEMENTS = 2 * 24 * 2 * 64
DRAFT_ATTN_MACS_PER_CTX = 2 * 24 * 14 * 64
# Qwen2.5-Math-7B config: 28 layers, hidden 3584, 28/4 heads, head dim 128, FFN 18944, vocab 152064.
TARGET_MACS = qwen_linear_macs(28, 3584, 28, 4, 128, 18944, 3584 * 152064)
TARGET_KV_ELEMENTS = 2 * 28 * 4 * 128
TARGET_ATTN_MACS_PER_CTX = 2 * 28 * 28 * 128


def drawn_power(device, model="qwen2.5-0.5b", overrides=None):
    """A built-in device's power as a run draws it: its state powers, an FPGA board's busy
    states derived from its design (with ``overrides``) for ``model`` (the derivation is
    worked by hand in tests/test_fpga_power.py)."""
    import dataclasses  # lazy: only the energy tests need these
    import cosim
    from cosim import devices
    from cosim.schema import _params
    cfg = cosim.load_device(device)
    for path, value in (overrides or {}).items():
        cfg = _params.replace(cfg, path, value)
    return dataclasses.replace(cfg.power, **devices.kind_of(cfg).state_powers(cfg, cosim.load_model(model)))


@pytest.fixture
def tmp_yaml(tmp_path):
    def write(name, text):
        path = tmp_path / name
        path.write_text(text)
        return path

    return write


# A real Ray head stands for the cluster of docs/serving.md: on the loopback (clustering
# off), with a token of its own, as Ray 2.60 asks of every cluster by default.
RAY_START_BOUND_S = 120.0  # a head starts in about 3 s; ten times that, and more for a busy machine


@pytest.fixture(scope="module")
def ray_head():
    """(address, environment) of a Ray head run for one test module, stopped when it ends: a
    head kept longer would be a child of the test process under tests that count those."""
    import os
    import signal
    import socket
    import tempfile
    import threading
    import time

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = dict(os.environ, RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER="0", RAY_AUTH_MODE="token",
               RAY_AUTH_TOKEN=os.urandom(16).hex())
    # Short: Ray puts its sockets' paths under it, and a Unix socket's path has 107 bytes at most.
    temp = tempfile.mkdtemp(prefix="ray-", dir="/tmp")
    ray = Path(sys.executable).parent / "ray"
    head = subprocess.Popen([str(ray), "start", "--head", "--block", f"--port={port}", "--num-cpus=2",
                             "--include-dashboard=false", "--disable-usage-stats", f"--temp-dir={temp}"],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)
    started, said = threading.Event(), []

    def read():
        for line in head.stdout:
            said.append(line)
            if "Ray runtime started" in line:
                started.set()

    threading.Thread(target=read, daemon=True).start()
    try:
        if not started.wait(RAY_START_BOUND_S):
            pytest.fail("the Ray head did not start:\n" + "".join(said[-30:]))
        yield f"127.0.0.1:{port}", env
    finally:
        # The head, its GCS, raylet and workers share its process group; none may outlive the tests.
        deadline = time.monotonic() + RAY_START_BOUND_S
        while _living(head.pid) and time.monotonic() < deadline:
            os.killpg(head.pid, signal.SIGKILL)
            head.poll()
            time.sleep(0.1)
        head.wait(timeout=RAY_START_BOUND_S)


def _living(group):
    """Whether a process of the group still runs (a zombie waits only to be reaped)."""
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == group and fields[0] != "Z":
            return True
    return False

"""`--executor ray --ray-address` joins a Ray cluster that is already running: here a real
head on the loopback, with a token as Ray asks of a cluster by default. A sweep on it
gives the rows of the local executor; a cluster that cannot be joined is one line."""

import csv
import os
import socket
import time

from conftest import run_cli

GRID = ["--set", "fpga.clock_mhz=150,300", "--set", "pcie.bandwidth_gbps=4,16"]
BASE = ["sweep", "heteroreason-u280-200", *GRID, "--problems", "3", "--quiet"]


def rows(folder):
    with open(folder / "sweep.csv", newline="") as f:
        return [{k: v for k, v in r.items() if k != "wall_s"} for r in csv.DictReader(f)]


def test_a_sweep_on_a_cluster_gives_the_rows_of_the_local_executor(tmp_path, ray_head):
    address, env = ray_head
    on_ray = run_cli(*BASE, "--executor", "ray", "--ray-address", address, "--out", tmp_path / "ray",
                     cwd=tmp_path, env=env)
    assert on_ray.returncode == 0, on_ray.stderr
    local = run_cli(*BASE, "--out", tmp_path / "local", cwd=tmp_path)
    assert local.returncode == 0, local.stderr
    found, expected = rows(tmp_path / "ray"), rows(tmp_path / "local")
    assert len(found) == 4 and all(r["status"] == "ok" for r in found)
    key = lambda r: (float(r["fpga.clock_mhz"]), float(r["pcie.bandwidth_gbps"]))  # noqa: E731
    assert sorted(found, key=key) == sorted(expected, key=key)


def test_a_cluster_that_asks_for_a_token_is_told_in_one_line(tmp_path, ray_head):
    address, env = ray_head
    tokenless = {k: v for k, v in env.items() if k not in ("RAY_AUTH_MODE", "RAY_AUTH_TOKEN")}
    tokenless["HOME"] = str(tmp_path)  # no ~/.ray/auth_token of the user's to find
    done = run_cli(*BASE, "--executor", "ray", "--ray-address", address, "--out", tmp_path / "out",
                   cwd=tmp_path, env=tokenless)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert f"--ray-address: the Ray cluster at {address} asks for its token: set RAY_AUTH_MODE=token" in done.stderr
    assert rows(tmp_path / "out") == []  # no point ran, and none is recorded as run


def test_an_address_where_nothing_listens_is_told_at_once(tmp_path):
    with socket.socket() as probe:  # a port the kernel just handed out, and nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    started = time.monotonic()
    done = run_cli(*BASE, "--executor", "ray", "--ray-address", f"127.0.0.1:{port}", cwd=tmp_path,
                   env=dict(os.environ))
    assert done.returncode == 2
    assert done.stderr == (f"cosim: error: --ray-address: no Ray cluster answers at 127.0.0.1:{port} "
                           f"(Connection refused); start one with `ray start --head` (docs/serving.md)\n")
    # Ray alone retries such an address for minutes; the plain connection is refused at once.
    assert time.monotonic() - started < 120

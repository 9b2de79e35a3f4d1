"""`--executor ray` without `--ray-address` starts a Ray instance that listens on the
loopback alone: a Ray cluster runs any job sent to its ports, so one started for a sweep
must not be reachable from the network. Checked from the kernel's socket tables while the
sweep runs."""

import ipaddress
import os
import socket
import struct
from pathlib import Path

import pytest

import cosim
from cosim._sweep._executors import ray_results

LISTEN = "0A"  # a socket's state in /proc/net/tcp: listening


def _descendants(root):
    """``root`` and every process below it (Ray's GCS and raylet are its children, the
    raylet's workers and agents their children)."""
    parents = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parents[int(stat.parent.name)] = int(fields[1])
    found, frontier = {root}, [root]
    while frontier:
        pid = frontier.pop()
        children = [c for c, p in parents.items() if p == pid and c not in found]
        found.update(children)
        frontier += children
    return found


def _socket_inodes(pids):
    inodes = set()
    for pid in pids:
        try:
            for fd in Path(f"/proc/{pid}/fd").iterdir():
                target = os.readlink(fd)
                if target.startswith("socket:["):
                    inodes.add(int(target[8:-1]))
        except OSError:  # gone meanwhile, or not ours to read
            continue
    return inodes


def _address(hex_address, family):
    """An address of /proc/net/tcp{,6}: 32-bit words in the machine's byte order."""
    raw = bytes.fromhex(hex_address)
    words = b"".join(struct.pack("=I", struct.unpack(">I", raw[i:i + 4])[0]) for i in range(0, len(raw), 4))
    return ipaddress.ip_address(socket.inet_ntop(family, words))


def _listening(inodes):
    """(address, port) of each listening TCP socket among ``inodes``."""
    found = []
    for table, family in (("/proc/net/tcp", socket.AF_INET), ("/proc/net/tcp6", socket.AF_INET6)):
        if not Path(table).exists():
            continue
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            local, state, inode = fields[1], fields[3], int(fields[9])
            if state == LISTEN and inode in inodes:
                host, port = local.split(":")
                found.append((_address(host, family), int(port, 16)))
    return found


def _loopback(address):
    mapped = getattr(address, "ipv4_mapped", None)  # ::ffff:127.0.0.1, a dual-stack socket's view
    return (mapped or address).is_loopback


@pytest.mark.skipif(not Path("/proc/net/tcp").exists(), reason="needs Linux /proc")
def test_the_address_reader_reads_the_kernels_tables():
    # A socket of this process, on a loopback port and on every interface: read back as made.
    with socket.socket() as mine, socket.socket() as wide:
        mine.bind(("127.0.0.1", 0))
        mine.listen()
        wide.bind(("0.0.0.0", 0))
        wide.listen()
        found = {port: address for address, port in _listening(_socket_inodes({os.getpid()}))}
        assert found[mine.getsockname()[1]] == ipaddress.ip_address("127.0.0.1")
        assert found[wide.getsockname()[1]] == ipaddress.ip_address("0.0.0.0")


@pytest.mark.skipif(not Path("/proc/net/tcp").exists(), reason="needs Linux /proc")
def test_a_local_ray_instance_listens_on_the_loopback_alone():
    ray = pytest.importorskip("ray", reason="the Ray executor's test needs the [ray] extra")
    if ray.is_initialized():
        pytest.skip("a Ray instance is already running in this process")
    scn = cosim.load_scenario("heteroreason-u280-200")
    trace = cosim.trace.generate("math500", 2, seed=1)
    points = ray_results(scn, trace, [{"fpga.clock_mhz": 200}, {"fpga.clock_mhz": 300}], 1, None)
    try:
        assert next(points)["status"] == "ok"  # the instance is up and has run a task
        listening = _listening(_socket_inodes(_descendants(os.getpid())))
        assert listening, "found none of the instance's servers"
        assert [(str(a), p) for a, p in listening if not _loopback(a)] == []
        assert [row["status"] for row in points] == ["ok"]
    finally:
        points.close()
    assert not ray.is_initialized()  # the instance was the sweep's own: gone with it

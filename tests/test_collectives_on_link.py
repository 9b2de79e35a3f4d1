"""A parallel group whose GPUs reach each other over PCIe books its collectives on the PCIe
link the system gives the group (models/collective_link.hpp), where the draft's and the
host's transfers to it go too; over NVLink they stay the closed form. The timing of the
booking itself is worked out by hand in tests/cpp/test_collective_link.cpp; here: which
groups book, and that a whole system's run keeps the closed form's result when nothing else
is on the link and moves with contention when something is."""

from __future__ import annotations

import statistics
from pathlib import Path

import pytest
import yaml

import cosim
from cosim.devices import kind_of

LINKS = Path(cosim.__file__).parent / "data" / "links"


def _scenario(tmp_path: Path, name: str, device: str, peer: str = "", serving: bool = False):
    cluster = """cluster:
  draft: {devices: 8, contexts_per_device: 1}
  prm: {devices: 2}
  target: {devices: 2}
batching: {enabled: true}
""" if serving else ""
    text = f"""name: {name}
system: heteroreason
draft: {{device: u280, model: qwen2.5-0.5b, overrides: {{accelerator.clock: 200 MHz}}}}
prm: {{device: {device}, model: qwen2.5-math-prm-7b}}
target: {{device: {device}, model: qwen3-32b, parallel: {{tensor_parallel: 2}}{peer}}}
{cluster}"""
    path = tmp_path / f"{name}.yaml"
    path.write_text(text)
    return cosim.load_scenario(str(path))


@pytest.fixture
def nvlink_kind_pcie(tmp_path):
    """PCIe Gen5's numbers under the NVLink kind: the same closed form, a link of its own."""
    link = yaml.safe_load((LINKS / "pcie_gen5_x16.yaml").read_text())
    link["kind"] = "nvlink"
    path = tmp_path / "nvlink_kind_pcie.yaml"
    path.write_text(yaml.safe_dump(link))
    return f", peer_link: {path}"


def _native_target(scn):
    return kind_of(scn.target.device).native(scn.target, scn, None)


def test_only_a_pcie_group_books_on_its_link(tmp_path, nvlink_kind_pcie):
    # The H100 PCIe card has no peer link of its own: its group uses its PCIe host link.
    assert _native_target(_scenario(tmp_path, "pcie", "h100-pcie"))["peer_link_pcie"] is True
    assert _native_target(_scenario(tmp_path, "sxm", "h100-sxm"))["peer_link_pcie"] is False  # NVLink 4
    assert _native_target(_scenario(tmp_path, "nv", "h100-pcie", nvlink_kind_pcie))["peer_link_pcie"] is False
    # One GPU has no group: nothing to book.
    one = kind_of(cosim.load_scenario("heteroreason-u280-300").target.device)
    assert one.native(cosim.load_scenario("heteroreason-u280-300").target, None, None)["peer_link_pcie"] is False


def test_with_the_link_to_itself_a_run_keeps_the_closed_form(tmp_path, nvlink_kind_pcie):
    # One request at a time: the draft's transfers to the target happen while it waits, never
    # during its collectives, so booking them changes no instant (to the picosecond).
    trace = cosim.trace.generate("math500", 4, seed=0)
    booked = cosim.simulate(_scenario(tmp_path, "pcie", "h100-pcie"), trace)
    closed = cosim.simulate(_scenario(tmp_path, "nv", "h100-pcie", nvlink_kind_pcie), trace)
    for a, b in zip(booked.per_problem, closed.per_problem):
        assert dict(a)["latency_s"] == dict(b)["latency_s"]
        assert dict(a)["energy_j"] == dict(b)["energy_j"]
    # Served alone, the group's collectives held its link and no pass waited for it; the
    # NVLink-kind group and the one-GPU PRM book nothing.
    one = cosim.trace.generate("math500", 1, seed=0)
    booked = cosim.serve.run(_scenario(tmp_path, "pcie1", "h100-pcie", serving=True), one, rate=1.0, seed=1)
    closed = cosim.serve.run(_scenario(tmp_path, "nv1", "h100-pcie", nvlink_kind_pcie, serving=True), one, rate=1.0,
                             seed=1)
    used = [d for d in booked.devices if d["role"] == "target" and d["collective_ns"] > 0.0]
    assert len(used) == 1 and used[0]["collective_wait_ns"] == 0.0 and used[0]["transfer_wait_ns"] == 0.0
    assert all(d["collective_ns"] == 0.0 for d in booked.devices if d["role"] != "target")
    assert all(d["collective_ns"] == 0.0 for d in closed.devices)


def test_serving_moves_with_the_traffic_on_the_link(tmp_path, nvlink_kind_pcie):
    # Eight requests' drafts send to the two targets while their batches run: some of those
    # transfers meet the collectives on the targets' links, which changes when iterations end.
    trace = cosim.trace.generate("math500", 48, seed=0)
    booked = cosim.serve.run(_scenario(tmp_path, "pcie", "h100-pcie", serving=True), trace, rate=4.0, seed=1)
    closed = cosim.serve.run(_scenario(tmp_path, "nv", "h100-pcie", nvlink_kind_pcie, serving=True), trace,
                             rate=4.0, seed=1)
    a = [dict(r)["latency_s"] for r in booked.per_request]
    b = [dict(r)["latency_s"] for r in closed.per_request]
    assert len(a) == len(b) == 48
    assert a != b
    # The transfers are a few kilobytes each, against milliseconds of decoding: the change is small.
    assert statistics.mean(a) == pytest.approx(statistics.mean(b), rel=0.02)
    # The collectives are booked as each iteration's compute ends, mostly before the transfers
    # that meet them: those transfers wait, on the targets' links only.
    targets = [d for d in booked.devices if d["role"] == "target"]
    assert any(d["transfer_wait_ns"] > 0.0 for d in targets)
    assert all(d["collective_wait_ns"] >= 0.0 for d in targets)
    assert all(d["transfer_wait_ns"] == 0.0 for d in booked.devices if d["role"] != "target")
    assert all(d["transfer_wait_ns"] == 0.0 and d["collective_wait_ns"] == 0.0 for d in closed.devices)


# Qwen3-32B on two GPUs over PCIe Gen5 (63 GB/s at 0.8, 1 us a transfer): a pass over n
# tokens moves 2 x 64 layers of all-reduces, each 2 ring steps of n x 5120 x 2 / 2 bytes:
# 256 steps and 1,310,720 n bytes each way.
STEPS_NS = 256 * 1000.0
TOKEN_NS = 1_310_720 / (63.0 * 0.8)


def test_the_waveform_shows_the_collectives_on_the_target_link(tmp_path):
    from test_waveforms import read_vcd
    vcd = tmp_path / "run.vcd"
    cosim.simulate(_scenario(tmp_path, "pcie", "h100-pcie"), cosim.trace.generate("math500", 1, seed=0), vcd=vcd)
    changes = read_vcd(vcd)
    # Only the target's link carries a group's collectives (the PRM is one GPU).
    assert "pcie.target_collectives" in changes
    assert "pcie.prm_collectives" not in changes and "pcie.draft_collectives" not in changes
    held = changes["pcie.target_collectives"]
    assert {int(v) for _, v in held} == {0, 2}  # both directions at once, nothing in the way
    spans = [(t1 - t0) / 1000.0 for (t0, v0), (t1, _) in zip(held, held[1:]) if int(v0) == 2]
    assert len(spans) > 10
    # Each span is one pass's collectives: 256 steps and a whole number of tokens' bytes.
    for ns in spans:
        tokens = (ns - STEPS_NS) / TOKEN_NS
        assert tokens == pytest.approx(round(tokens), abs=1e-3) and round(tokens) >= 1
    assert sum(1 for ns in spans if ns == pytest.approx(STEPS_NS + TOKEN_NS, abs=1e-3)) > len(spans) / 2
    # The GTKWave view beside it shows them.
    assert "pcie.target_collectives" in vcd.with_suffix(".gtkw").read_text()

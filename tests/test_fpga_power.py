"""An FPGA board's power from its decoder's design: its idle floor plus the energy of the
MACs and memory bytes of what it does over the time it takes, worked by hand here from the
model's shapes and the design's timing formula."""

import pytest
import yaml

from cosim import ConfigError, hardware, load_device, load_model, standalone
from cosim import devices
from conftest import (DRAFT_ATTN_MACS_PER_CTX, DRAFT_KV_ELEMENTS, DRAFT_MACS, one_line_error, qwen_linear_macs,
                      run_cli)

IDLE_W, MAC_PJ, BIT_PJ = 37.0, 5.0, 7.0  # u280.yaml: the FlexLLM log's floor, the estimates
CLOCK_MHZ, MACS, PIPELINE = 200.0, 305.0, 400  # the U280 design (u280.yaml)
LAYERS = 24  # Qwen2.5-0.5B


def token_ns(context):
    ns_per_cycle = 1e3 / CLOCK_MHZ
    compute = (DRAFT_MACS + DRAFT_ATTN_MACS_PER_CTX * context) / MACS * ns_per_cycle
    # The design is bound by its MAC array (16 ports x 512 bits at 200 MHz carry far more).
    return compute + LAYERS * PIPELINE * ns_per_cycle


def states():
    u280 = load_device("u280")
    return devices.kind_of(u280).state_powers(u280, load_model("qwen2.5-0.5b"))


def test_decode_power_is_idle_plus_the_tokens_macs_and_bytes_over_its_time():
    # A token at context 0: its weight MACs, and its W8 weights streamed once (1 byte each).
    by_hand = IDLE_W + (MAC_PJ * DRAFT_MACS + BIT_PJ * 8 * DRAFT_MACS * 1) / token_ns(0) * 1e-3
    assert states()["decode_w"] == pytest.approx(by_hand, rel=1e-9)
    assert 40.0 < by_hand < 41.0  # about 3.5 W above the floor: 61 GMAC/s and 61 GB/s


def test_prefill_power_is_a_local_prefills_of_512_tokens():
    n = 512
    macs = n * DRAFT_MACS + DRAFT_ATTN_MACS_PER_CTX * n * (n - 1) / 2
    nbytes = DRAFT_MACS * 1 + n * DRAFT_KV_ELEMENTS * 1  # weights once, the new tokens' KV written
    ns = macs / MACS * (1e3 / CLOCK_MHZ) + LAYERS * PIPELINE * (1e3 / CLOCK_MHZ)  # compute-bound
    by_hand = IDLE_W + (MAC_PJ * macs + BIT_PJ * 8 * nbytes) / ns * 1e-3
    assert states()["prefill_w"] == pytest.approx(by_hand, rel=1e-9)
    assert states()["idle_w"] == IDLE_W and states()["transfer_w"] == 41.0


def test_a_memory_bound_board_draws_its_memory_traffic():
    # The KV260 streams Llama-2-7B's W4 weights (AWQ g128: 0.51953125 bytes a weight) from DDR4
    # at 28 pJ a bit: nearly all its busy power; its MACs at 5 pJ the rest.
    kv260 = load_device("kv260-llama-fpga")
    found = devices.kind_of(kv260).state_powers(kv260, load_model("llama-2-7b"))
    timing = standalone.fpga_timing("kv260-llama-fpga", "llama-2-7b", [0])
    assert timing["bound"][0] in ("ports", "hbm")
    macs = qwen_linear_macs(32, 4096, 32, 32, 128, 11008, 4096 * 32000)  # Llama-2-7B's shapes
    memory_w = 28.0 * 8 * macs * 0.51953125 / timing["ns"][0] * 1e-3
    mac_w = 5.0 * macs / timing["ns"][0] * 1e-3
    assert found["decode_w"] == pytest.approx(kv260.power.idle_w + memory_w + mac_w, rel=1e-9)
    assert memory_w > 20 * mac_w


def test_a_simulated_decode_draws_the_derived_power():
    result = standalone.fpga_decode("u280", "qwen2.5-0.5b", 0, 3)
    assert result.energy_j == pytest.approx(states()["decode_w"] * result.time_ns * 1e-9, rel=1e-9)


def test_state_powers_beside_design_energies_or_a_load_model_are_refused(tmp_path):
    data = yaml.safe_load(hardware.builtin_path("device", "u280").read_text())
    both = tmp_path / "both.yaml"
    both.write_text(yaml.safe_dump({**data, "power": {**data["power"], "decode": "50 W"}}, sort_keys=False))
    with pytest.raises(ConfigError, match="prefill_w and decode_w are state powers; with mac_energy_pj"):
        standalone.fpga_decode(str(both), "qwen2.5-0.5b", 0, 1)
    limit = tmp_path / "limit.yaml"
    limit.write_text(yaml.safe_dump({**data, "power": {**data["power"], "limit": "200 W"}}, sort_keys=False))
    with pytest.raises(ConfigError, match="limit_w: the load model is a GPU's"):
        standalone.fpga_decode(str(limit), "qwen2.5-0.5b", 0, 1)
    bad_unit = tmp_path / "unit.yaml"
    bad_unit.write_text(yaml.safe_dump({**data, "power": {**data["power"], "mac_energy": "5 W"}}, sort_keys=False))
    line = one_line_error(run_cli("run", "heteroreason-u280-200", "--set", f"draft.device={bad_unit}",
                                  "--problems", "1", cwd=tmp_path))
    assert "mac_energy" in line and "energy unit" in line


def test_a_gpu_given_a_designs_energies_is_refused(tmp_path):
    data = yaml.safe_load(hardware.builtin_path("device", "rtx3090").read_text())
    gpu = tmp_path / "gpu.yaml"
    gpu.write_text(yaml.safe_dump({**data, "power": {**data["power"], "mac_energy": "5 pJ"}}, sort_keys=False))
    with pytest.raises(ConfigError, match="mac_energy_pj and memory_energy_pj_per_bit are an FPGA design's"):
        standalone.gpu_decode(str(gpu), "qwen2.5-0.5b", 2)


def test_a_power_timeline_refuses_a_board_whose_power_follows_its_work():
    with pytest.raises(ConfigError, match="draws the design model"):
        standalone.power_timeline("u280", [("decode", 1e6)])

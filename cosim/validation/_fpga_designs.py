"""Case fpga-designs: the FPGA decoder model against published FPGA decoders.

llama-fpga's Llama-2-7B decoder on four boards (kv260-llama-fpga, zcu104-llama-fpga,
zcu104-llama-fpga-ps-pl, u250-llama-fpga: their ports, clocks and memories from the
designs' Vivado block designs, 4-bit weights from its packing script) against the decode
rates measured on each; the mean rate over a 1,024-token run, as the demos count tokens.

Then the FPGA decoder model with FlexLLM's U280 decode datapath
(u280-flexllm: 16 x 512-bit HBM ports, 2,048 MAC lanes, 300 MHz) and with the V80 design
(v80: the same sizing rule on the V80's 32 pseudo-channels), running FlexLLM's
Llama-3.2-1B with 4-bit weights and an 8-bit KV cache, against what FlexLLM published:
its decode throughput over an A100's running the model in BF16 (measured on the U280,
projected for the V80), its energy efficiency over the A100's (decoded tokens per joule,
each simulated at its power model), and its U280 power log against the board's decode
power as the design model derives it (its idle floor, the MACs and the HBM bytes of a token
over the token's time).

The A100 side is the a100-80gb device (vLLM with CUDA graphs), so each ratio checks the
FPGA model and the GPU model together. Throughput is the mean over 1,024 decoded tokens
after a short prompt (FlexLLM's benches force 1,024 new tokens). The V80 row's design is
the v80 rule applied to 4-bit weights: the ports' 32 x 512 bits feed 4,096 lanes.
"""

from __future__ import annotations

from importlib import resources
from typing import Any

import yaml

from .. import devices, standalone
from ..config.hardware import FpgaDevice, load_device, load_model
from ..schema import _params

CASE = "fpga-designs"
A100 = "a100-80gb"
WEIGHT_BITS = 4  # FlexLLM's SpinQuant weights


def data(name: str = "flexllm") -> dict[str, Any]:
    path = resources.files("cosim") / "data" / "validation" / f"{name}.yaml"
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def balanced_macs(device: FpgaDevice, weight_bits: float) -> float:
    """The MAC lanes that consume every port's full width of weights each cycle."""
    return device.accelerator.hbm_ports * device.accelerator.port_width_bits / weight_bits


def fpga_rate(device: str, model: str, tokens: int, overrides: dict[str, Any]) -> float:
    ns = standalone.fpga_timing(device, model, contexts=range(tokens), overrides=overrides)["ns"]
    return tokens / (sum(ns) * 1e-9)


def decode_power(device: str, model: str, overrides: dict[str, Any]) -> float:
    """The board's power while decoding, as its design model derives it (docs/hardware.md)."""
    cfg = load_device(device)
    for path, value in overrides.items():
        cfg = _params.replace(cfg, path, value)
    return devices.kind_of(cfg).state_powers(cfg, load_model(model))["decode_w"]


def gpu_rate(device: str, model: str, tokens: int) -> float:
    ns = standalone.gpu_timing(device, model, [("decode", 1, c) for c in range(tokens)])["ns"]
    return tokens / (sum(ns) * 1e-9)


def llama_fpga_rows() -> list[dict[str, Any]]:
    """Each llama-fpga board's decode rate, predicted from its design alone."""
    table = data("llama-fpga")
    model, tokens = table["model"], int(table["decode_tokens"])
    return [{"case": CASE, "quantity": f"llama-fpga {load_device(device).name.split(' (')[0]} decode, "
                                       f"Llama-2-7B W4", "unit": "tok/s",
             "measured": float(rate), "predicted": fpga_rate(device, model, tokens, {})}
            for device, rate in table["decode_tokens_per_s"].items()]


def rows() -> list[dict[str, Any]]:
    return llama_fpga_rows() + flexllm_rows()


def flexllm_rows() -> list[dict[str, Any]]:
    table = data()
    model, tokens = table["model"], int(table["decode_tokens"])
    weights = {"accelerator.weight_bytes_per_param": WEIGHT_BITS / 8}
    a100 = gpu_rate(A100, model, tokens)
    u280 = fpga_rate("u280-flexllm", model, tokens, weights)
    v80_design = {**weights, "accelerator.macs_per_cycle": balanced_macs(load_device("v80"), WEIGHT_BITS)}
    v80 = fpga_rate("v80", model, tokens, v80_design)
    published = table["decode_throughput_vs_a100"]
    running = [w for w in table["power_log_w"] if w > 40.0]  # the log's running range, above its 37 W floor
    # Energy per decoded token of each, simulated: the board's and the GPU's power over the decode.
    gpu_j = standalone.gpu_decode(A100, model, tokens)["energy_j"]
    fpga_j = standalone.fpga_decode("u280-flexllm", model, 0, tokens, overrides=weights)["energy_j"]
    return [
        {"case": CASE, "quantity": "FlexLLM U280 decode / A100 BF16, Llama-3.2-1B", "unit": "x",
         "measured": float(published["u280"]), "predicted": u280 / a100},
        {"case": CASE, "quantity": "V80 decode / A100 BF16 (FlexLLM's projection)", "unit": "x",
         "measured": float(published["v80"]), "predicted": v80 / a100},
        {"case": CASE, "quantity": "FlexLLM U280 decode tokens/J / A100 BF16, Llama-3.2-1B", "unit": "x",
         "measured": float(table["energy_efficiency_vs_a100"]["u280"]), "predicted": gpu_j / fpga_j},
        {"case": CASE, "quantity": "FlexLLM U280 board power running (log mean above 40 W)", "unit": "W",
         "measured": sum(running) / len(running), "predicted": decode_power("u280-flexllm", model, weights)},
    ]

"""Infers the MAC array of the HeteroReason U280 draft decoder from the paper's Jetson
comparison: a Jetson Orin Nano drafting the W8A8 0.5B model (~17 tok/s) slows the whole
system about 5-6x against the U280-based system measured at 200 MHz.

The script bisects `accelerator.macs_per_cycle` of the `u280` device until the mean over
the four dataset profiles and both configs of latency(heteroreason-jetson) /
latency(heteroreason-u280 at 200 MHz) equals the target (5.5, the middle of 5-6), with
every other parameter as shipped. Run it again after changing the workload profiles or the
GPU parameters, and put the value it prints into cosim/data/devices/u280.yaml.

    python scripts/calibrate_u280.py [--problems 500] [--seed 1] [--target 5.5]
"""

from __future__ import annotations

import argparse
import statistics

import cosim

DATASETS = ("gsm8k", "math500", "gaokao2023en", "olympiadbench")


def slowdown(macs: float, traces: dict, jetson: dict) -> float:
    ratios = []
    for (dataset, config), trace in traces.items():
        scn = cosim.scenario("heteroreason", config, draft={
            "device": "u280", "overrides": {"accelerator.macs_per_cycle": macs, "accelerator.clock": "200 MHz"}})
        ratios.append(jetson[dataset, config] / cosim.simulate(scn, trace).summary["latency_s"])
    return statistics.fmean(ratios)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problems", type=int, default=500)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--target", type=float, default=5.5)
    args = parser.parse_args()
    traces, jetson = {}, {}
    for dataset in DATASETS:
        for config in (1, 2):
            trace = cosim.trace.generate(dataset, args.problems, args.seed, config=config).in_memory()
            traces[dataset, config] = trace
            scn = cosim.scenario("heteroreason", config, draft={"device": "jetson_orin_nano"})
            jetson[dataset, config] = cosim.simulate(scn, trace).summary["latency_s"]
    lo, hi = 16.0, 8192.0  # the slowdown grows with the MAC array
    for _ in range(30):
        mid = (lo * hi) ** 0.5
        if slowdown(mid, traces, jetson) < args.target:
            lo = mid
        else:
            hi = mid
        if hi / lo < 1.002:
            break
    macs = (lo * hi) ** 0.5
    rate = 1e9 / cosim.standalone.fpga_timing(
        "u280", contexts=[512], overrides={"accelerator.macs_per_cycle": macs})["ns"][0]
    print(f"macs_per_cycle {macs:.1f}: slowdown {slowdown(macs, traces, jetson):.3f} "
          f"(target {args.target}); decode {rate:.1f} tok/s at context 512, 200 MHz")


if __name__ == "__main__":
    main()

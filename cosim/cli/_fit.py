"""`cosim fit fpga|gpu MEASURED.csv --device D [--model M] [--params a,b] [--out F.yaml]`."""

from __future__ import annotations

import argparse

from ..outputs._atomic import writable_file
from ..outputs._check import check_files
from ..schema._units import parse_quantity
from ..errors import ConfigError
from ..fit import KINDS, DeviceKindError, fit_fpga, fit_gpu, write_device
from ..fit._device_yaml import fit_inputs
from ..fit._models import FPGA_PARAMS, GPU_PARAMS


def add_parser(sub: argparse._SubParsersAction) -> None:
    fit = sub.add_parser("fit", help="fit a device's parameters to measured latencies; write a device YAML")
    kinds = fit.add_subparsers(dest="fit_kind", required=True, metavar="KIND")
    for kind, default_device, default_model, params in (
            ("fpga", "u280", "qwen2.5-0.5b", FPGA_PARAMS), ("gpu", "rtx3090", None, GPU_PARAMS)):
        p = kinds.add_parser(kind, help=f"fit the {'FPGA decoder design' if kind == 'fpga' else 'GPU proxy'} "
                                        f"({', '.join(params)})")
        p.add_argument("measured", help="CSV phase,tokens,context,seconds (decode rows: seconds per token)" + (
            "; or per-layer kernel times (LLMServingSim's layer_name,input,kv_cache,tp_size,latency(ns)): "
            "their forward passes of 1 to 2,048 tokens fit the efficiencies and the roofline exponent, "
            "overheads aside; or a folder of operator times (LLMServingSim's or Vidur's profiles, "
            "docs/hardware.md), summed into lone decodes and prefills the same way" if kind == "gpu" else ""))
        p.add_argument("--device", default=default_device, help=f"device to start from (default {default_device})")
        p.add_argument("--model", default=default_model, required=default_model is None,
                       help="the model the points were measured with" +
                            (f" (default {default_model})" if default_model else ""))
        if kind == "fpga":
            p.add_argument("--clock", help="the kernel clock of the measurement, e.g. '200 MHz' (default: the "
                                           "device's clock)")
        default = ", ".join(params) if kind == "fpga" else \
            "forward_overhead_ns, memory_efficiency, and compute_efficiency when there are prefill rows"
        p.add_argument("--params", help=f"comma-separated parameters to fit (default: {default})")
        p.add_argument("--out", help="write the device YAML with the fitted values here")
        p.set_defaults(func=cmd_fit)


def cmd_fit(args: argparse.Namespace) -> int:
    out = None
    if args.out:  # checked against every file the fit reads, before it runs
        out, = check_files([("--out", args.out)], fit_inputs(args.measured, args.device, args.model))
        writable_file(out, "--out")
    if getattr(args, "clock", None) is not None:  # fit fpga only
        try:  # a frequency with its unit; the device's rule for it is checked by the fit
            parse_quantity(args.clock, "clock_mhz")
        except ValueError as exc:
            raise ConfigError(f"--clock: {exc}") from None
    try:
        if args.fit_kind == "fpga":
            overrides = {"accelerator.clock": args.clock} if args.clock else None
            result = fit_fpga(args.measured, args.device, args.model, args.params, overrides)
        else:
            result = fit_gpu(args.measured, args.device, args.model, args.params)
    except DeviceKindError as exc:
        raise ConfigError(f"--device {args.device}: {exc.device} is {KINDS[exc.kind]}, not {KINDS[args.fit_kind]}; "
                          f"fit it with cosim fit {exc.kind}") from None
    print(f"{args.fit_kind} fit of {args.device} ({args.model}) to {args.measured}:\n")
    print(result.table())
    if out is not None:
        write_device(result, args.device, out)
        print(f"\nwrote {out}")
    return 0

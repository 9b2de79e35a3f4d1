"""`cosim fit fpga|gpu MEASURED.csv --device D [--model M] [--params a,b] [--out F.yaml]`, and
`cosim fit power SERIES.csv --device D [--model M] [--params a,b] [--out F.yaml]`."""

from __future__ import annotations

import argparse

from ..outputs._atomic import writable_file
from ..outputs._check import check_files
from ..schema._units import parse_quantity
from ..errors import ConfigError
from ..fit import FITTERS, KINDS, DeviceKindError, write_device
from ..fit._device_yaml import fit_inputs, source_file, write_fitted_device
from ..fit._power import HEADER as POWER_HEADER, POWER_PARAMS, fit_power


def add_parser(sub: argparse._SubParsersAction) -> None:
    fit = sub.add_parser("fit", help="fit a device's parameters to measured latencies; write a device YAML")
    kinds = fit.add_subparsers(dest="fit_kind", required=True, metavar="KIND")
    for f in FITTERS.values():
        p = kinds.add_parser(f.kind, help=f"fit the {f.what} ({', '.join(f.params)})")
        p.add_argument("measured", help="CSV phase,tokens,context,seconds (decode rows: seconds per token)" + f.measured)
        p.add_argument("--device", default=f.device, help=f"device to start from (default {f.device})")
        p.add_argument("--model", default=f.model, required=f.model is None,
                       help="the model the points were measured with" + (f" (default {f.model})" if f.model else ""))
        if f.clock:
            p.add_argument("--clock", help="the kernel clock of the measurement, e.g. '200 MHz' (default: the "
                                           "device's clock)")
        p.add_argument("--params", help=f"comma-separated parameters to fit (default: {f.default_params})")
        p.add_argument("--out", help="write the device YAML with the fitted values here")
        p.set_defaults(func=cmd_fit)
    p = kinds.add_parser("power", help=f"fit a GPU's load model ({', '.join(POWER_PARAMS)}) to a measured power "
                                       f"series")
    p.add_argument("measured", help=f"CSV {','.join(POWER_HEADER)}: per row an interval of steady serving, the "
                                    f"step it repeated, its measured time and the group's average power")
    p.add_argument("--device", default="h100-sxm", help="the GPU, with its idle and limit power (default h100-sxm)")
    p.add_argument("--model", help="the model of rows whose model cell is empty")
    p.add_argument("--params", help=f"comma-separated parameters to fit (default: {', '.join(POWER_PARAMS)})")
    p.add_argument("--out", help="write the device YAML with the fitted values here")
    p.set_defaults(func=cmd_fit_power)


def cmd_fit(args: argparse.Namespace) -> int:
    out = None
    if args.out:  # checked against every file the fit reads, before it runs
        out, = check_files([("--out", args.out)], fit_inputs(args.measured, args.device, args.model))
        writable_file(out, "--out")
    clock = getattr(args, "clock", None)  # a fit whose kind has a clock
    if clock is not None:
        try:  # a frequency with its unit; the device's rule for it is checked by the fit
            parse_quantity(clock, "clock_mhz")
        except ValueError as exc:
            raise ConfigError(f"--clock: {exc}") from None
    try:
        overrides = {"accelerator.clock": clock} if clock else None
        result = FITTERS[args.fit_kind].fit(args.measured, args.device, args.model, args.params, overrides)
    except DeviceKindError as exc:
        raise ConfigError(f"--device {args.device}: {exc.device} is {KINDS[exc.kind]}, not {KINDS[args.fit_kind]}; "
                          f"fit it with cosim fit {exc.kind}") from None
    print(f"{args.fit_kind} fit of {args.device} ({args.model}) to {args.measured}:\n")
    print(result.table())
    if out is not None:
        write_device(result, args.device, out)
        print(f"\nwrote {out}")
    return 0


def cmd_fit_power(args: argparse.Namespace) -> int:
    out = None
    if args.out:
        reads = {f"the fit's input power series {args.measured}": args.measured,
                 f"the device file {source_file(args.device)} the fit starts from": source_file(args.device)}
        out, = check_files([("--out", args.out)], reads)
        writable_file(out, "--out")
    result = fit_power(args.measured, args.device, args.model, args.params)
    print(f"power fit of {args.device} to {args.measured}:\n")
    print(result.table())
    if out is not None:
        write_fitted_device(args.device, "power", result.citations(),
                            f"load model fitted by cosim fit power to {result.source}", out)
        print(f"\nwrote {out}")
    return 0

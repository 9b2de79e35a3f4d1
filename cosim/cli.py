"""The ``cosim`` command line."""

from __future__ import annotations

import argparse
import sys

from . import hardware
from ._params import describe
from .errors import CosimError

_CONFIG_CLASSES = {
    "pcie": hardware.PcieLinkConfig,
    "hbm": hardware.HbmConfig,
    "fpga": hardware.FpgaAcceleratorConfig,
    "gpu": hardware.GpuConfig,
    "power": hardware.PowerConfig,
    "model": hardware.ModelConfig,
}


def _cmd_demo(args: argparse.Namespace) -> int:
    from ._demo import run_demo

    run_demo()
    return 0


def _cmd_params(args: argparse.Namespace) -> int:
    for group, cls in _CONFIG_CLASSES.items():
        if args.group and group != args.group:
            continue
        print(f"[{group}]")
        for row in describe(cls):
            rule = f" ({row['rule']})" if row["rule"] else ""
            print(f"  {row['name']:<24} {row['unit']:<8} {row['help']}{rule}")
        print()
    return 0


def _cmd_builtins(args: argparse.Namespace) -> int:
    for what in ("device", "link", "model"):
        print(f"{what}s: {', '.join(hardware.builtin_names(what))}")
    return 0


def _cmd_trace_gen(args: argparse.Namespace) -> int:
    from . import trace

    result = trace.generate(args.profile, args.problems, args.seed, backtracking=not args.no_backtracking)
    path = result.save(args.out)
    if not args.quiet:
        print(trace.format_table(trace.trace_statistics(result)))
        print(f"wrote {len(result)} problems to {path}")
    return 0


def _cmd_trace_stats(args: argparse.Namespace) -> int:
    from . import trace

    for path in args.traces:
        print(f"{path}:")
        print(trace.format_table(trace.trace_statistics(trace.load(path))))
    return 0


def _cmd_trace_validate(args: argparse.Namespace) -> int:
    from . import trace

    for path in args.traces:
        loaded = trace.load(path)
        print(f"{path}: valid, {len(loaded)} problems (version 1, "
              f"{'with' if loaded.header.backtracking else 'without'} backtracking)")
    return 0


def _cmd_trace_profile_data(args: argparse.Namespace) -> int:
    from ._dataset_stats import dataset_statistics, format_statistics

    for path in args.files:
        for line in format_statistics(dataset_statistics(path)):
            print(line)
    return 0


def _add_trace_commands(sub: argparse._SubParsersAction) -> None:
    from .trace import builtin_profiles

    tr = sub.add_parser("trace", help="workload tools: generate, check and describe traces")
    tsub = tr.add_subparsers(dest="trace_command", required=True, metavar="TRACE_COMMAND")
    gen = tsub.add_parser("gen", help="generate a synthetic trace from a dataset profile")
    gen.add_argument("--profile", required=True,
                     help=f"built-in profile ({', '.join(builtin_profiles())}) or a profile YAML path")
    gen.add_argument("--problems", type=int, default=100, help="number of problems (default 100)")
    gen.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    gen.add_argument("--no-backtracking", action="store_true", help="the forward-only (RSD) run of the same problems")
    gen.add_argument("--out", required=True, help="trace file to write (JSON Lines)")
    gen.add_argument("--quiet", action="store_true", help="print nothing")
    gen.set_defaults(func=_cmd_trace_gen)
    stats = tsub.add_parser("stats", help="per-dataset statistics of traces")
    stats.add_argument("traces", nargs="+")
    stats.set_defaults(func=_cmd_trace_stats)
    validate = tsub.add_parser("validate", help="check traces against the format and the algorithm")
    validate.add_argument("traces", nargs="+")
    validate.set_defaults(func=_cmd_trace_validate)
    pdata = tsub.add_parser("profile-data", help="recompute profile statistics from a dataset JSONL file "
                                                 "(questions, and model responses if present); needs the [data] extra")
    pdata.add_argument("files", nargs="+")
    pdata.set_defaults(func=_cmd_trace_profile_data)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="cosim",
        description="Co-simulate speculative reasoning with the draft model on an FPGA and the PRM and "
        "target models on GPUs (SystemC/TLM-2.0 models).",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    demo = sub.add_parser("demo", help="run each hardware model alone on the built-in defaults")
    demo.set_defaults(func=_cmd_demo)
    params = sub.add_parser("params", help="list every configuration parameter with its unit and meaning")
    params.add_argument("group", nargs="?", choices=sorted(_CONFIG_CLASSES), help="only this group")
    params.set_defaults(func=_cmd_params)
    builtins = sub.add_parser("builtins", help="list the built-in devices, links and models")
    builtins.set_defaults(func=_cmd_builtins)
    _add_trace_commands(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except CosimError as exc:
        print(f"cosim: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("cosim: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())

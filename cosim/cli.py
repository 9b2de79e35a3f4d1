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

"""The ``cosim`` command line."""

from __future__ import annotations

import argparse
import os
import signal
import sys

from . import _commands
from .. import _inputs

from ..config import hardware
from ..config._sources import counts as source_counts, find as find_sources
from ..devices._architecture import names as architecture_names
from ..config._acceptance import names as acceptance_names
from ..schema._params import describe
from ..errors import CosimError
from ..config._cluster import POOL_CLASSES, Batching
from ..config._speculation import Speculation
from ..config.scenario import Serving, Toggles, builtin_scenarios
from ..trace import DatasetProfile, TARGETS, builtin_profiles
from ._demo import run_demo
from ._trace_import import add_parser as add_trace_import
from ._serve import add_parsers as add_serve_parsers
from ._fit import add_parser as add_fit_parser
from ._model_cmd import add_parser as add_model_parser
from ._validate_cmd import add_parser as add_validate_parser
from ._sensitivity import add_parser as add_sensitivity_parser
from ._flags import flagged
from ._signals import Terminated, run_terminable  # noqa: F401 - Terminated: cosim.cli's name for it
from ..engine._isolation import stop_workers


def param_groups() -> dict[str, type]:
    """Every group of parameters `cosim params` lists, by its name, with its configuration class."""
    return {
        "pcie": hardware.PcieLinkConfig,
        "hbm": hardware.HbmConfig,
        "fpga": hardware.FpgaAcceleratorConfig,
        "fpga.profile": hardware.FpgaProfileConfig,  # a device's optional measured profile
        "gpu": hardware.GpuConfig,
        "power": hardware.PowerConfig,
        "model": hardware.ModelConfig,
        "parallel": hardware.ParallelConfig,  # a GPU role's parallel group
        "toggles": Toggles,
        "serving": Serving,
        **{f"cluster.{pool}": cls for pool, cls in POOL_CLASSES.items()},
        "batching": Batching,
        "speculation": Speculation,  # the speculative-decoding system's section
        "profile": DatasetProfile,
    }


_GROUPS = tuple(param_groups())


def _cmd_demo(args: argparse.Namespace) -> int:
    run_demo()
    return 0


def _cmd_params(args: argparse.Namespace) -> int:
    for group, cls in param_groups().items():
        if args.group and group != args.group:
            continue
        print(f"[{group}]")
        rows = describe(cls)
        width = max([24, *(len(row["name"]) for row in rows)])
        for row in rows:
            rule = f" ({row['bounds']})" if row["bounds"] else ""
            print(f"  {row['name']:<{width}} {row['unit']:<8} {row['help']}{rule}")
            if row["note"]:  # where a default no device file cites comes from
                bounds = f" (plausible range {row['range'][0]:g} to {row['range'][1]:g})" if row["range"] else ""
                print(f"  {'':<{width}} {'':<8} default {getattr(cls(), row['name'])!r}, {row['note']}{bounds}")
        print()
    return 0


def _cmd_builtins(args: argparse.Namespace) -> int:
    if args.sources:
        what, values = find_sources(args.sources)
        tally = source_counts(values)
        cite = "1 value cites" if tally["source"] == 1 else f"{tally['source']} values cite"
        estimate = "1 is an estimate" if tally["estimate"] == 1 else f"{tally['estimate']} are estimates"
        print(f"{what} {args.sources}: {cite} a source, {estimate}")
        for v in values:
            print(f"  {v.key} = {v.value}" + (f"  [{v.kind}] {v.note}" if v.note else ""))
            if v.range:
                print(f"      plausible range {v.range}")
        return 0
    for what in ("device", "link", "model"):
        print(f"{what}s: {', '.join(hardware.builtin_names(what))}")
    print(f"GPU architectures: {', '.join(architecture_names())}")
    print(f"acceptance profiles: {', '.join(acceptance_names())}")
    print(f"dataset profiles: {', '.join(builtin_profiles())}")
    print(f"scenarios: {', '.join(builtin_scenarios())}")
    return 0


def _workload_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("workload (a trace file, or a synthetic trace from a dataset profile)")
    group.add_argument("--trace", help="trace file (JSON Lines) to replay")
    group.add_argument("--profile", help="dataset profile to draw a trace from (default math500)")
    group.add_argument("--problems", type=int, help="problems to draw (default 100)")
    group.add_argument("--seed", type=int, help="random seed (default 0)")
    group.add_argument("--no-backtracking", action="store_true", help="draw the forward-only (RSD) run")


def _add_trace_commands(sub: argparse._SubParsersAction) -> None:
    tr = sub.add_parser("trace", help="workload tools: generate, check and describe traces")
    tsub = tr.add_subparsers(dest="trace_command", required=True, metavar="TRACE_COMMAND")
    gen = tsub.add_parser("gen", help="generate a synthetic trace from a dataset profile")
    gen.add_argument("--profile", required=True,
                     help=f"built-in profile ({', '.join(builtin_profiles())}) or a profile YAML path")
    gen.add_argument("--problems", type=int, default=100, help="number of problems (default 100)")
    gen.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    gen.add_argument("--no-backtracking", action="store_true", help="the forward-only (RSD) run of the same problems")
    gen.add_argument("--target", help=f"the model that refines rejected steps: {' or '.join(TARGETS)} "
                                      "(default: Config 1's)")
    gen.add_argument("--config", type=int, help="1 (7B target) or 2 (1.5B target): names the target instead")
    gen.add_argument("--accept-threshold", type=float, default=0.7,
                     help="PRM score a draft step needs to be kept (default 0.7)")
    gen.add_argument("--backtrack-threshold", type=float, default=0.7,
                     help="PRM score a refinement needs, or the run backtracks (default 0.7)")
    gen.add_argument("--max-backtracks", type=int, default=5, help="backtracks per problem (default 5)")
    gen.add_argument("--out", required=True, help="trace file to write (JSON Lines)")
    gen.add_argument("--quiet", action="store_true", help="print nothing")
    gen.set_defaults(func=_commands.cmd_trace_gen)
    stats = tsub.add_parser("stats", help="per-dataset statistics of traces")
    stats.add_argument("traces", nargs="+")
    stats.set_defaults(func=_commands.cmd_trace_stats)
    validate = tsub.add_parser("validate", help="check traces against the format and the algorithm")
    validate.add_argument("traces", nargs="+")
    validate.set_defaults(func=_commands.cmd_trace_validate)
    pdata = tsub.add_parser("profile-data", help="recompute profile statistics from a dataset JSONL file "
                                                 "(questions; model responses, and the PRM score fit from their "
                                                 "score and pred_score, if present); needs the [data] extra")
    pdata.add_argument("files", nargs="+")
    pdata.set_defaults(func=_commands.cmd_trace_profile_data)
    rsd = tsub.add_parser("import-rsd", help="rebuild a forward-only trace from RSD's --save_outputs JSON Lines")
    rsd.add_argument("file", help="RSD outputs, one JSON object per problem")
    rsd.add_argument("--dataset", required=True, help="dataset name to give the problems")
    rsd.add_argument("--out", help="trace to write (default FILE.trace.jsonl)")
    rsd.add_argument("--tokenizer", help="local HuggingFace tokenizer folder (default: the offline proxy)")
    rsd.add_argument("--skip-bad", action="store_true", help="skip records that fail their checks, and count them")
    rsd.add_argument("--threshold", type=float, default=0.7, help="the PRM acceptance threshold of the run "
                                                                   "(default 0.7)")
    rsd.set_defaults(func=_commands.cmd_trace_import_rsd)
    add_trace_import(tsub)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="cosim",
        description="Co-simulate speculative reasoning with the draft model on an FPGA and the PRM and "
        "target models on GPUs (SystemC/TLM-2.0 models).",
        epilog="Examples (scenarios: cosim builtins, or a scenario YAML):\n"
               "  cosim run heteroreason-u280-300 --profile olympiadbench --problems 200\n"
               "  cosim sweep heteroreason-u280-200 --set pcie.bandwidth_gbps=2,4,8,16,32 "
               "--set fpga.clock_mhz=200,250,300 --workers 2\n"
               "  cosim serve cluster-heteroreason-u280-200 --rate 1.4 --requests 2000 --slo 30\n  cosim report",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    run = sub.add_parser("run", help="simulate one scenario on one trace")
    run.add_argument("scenario", help="a built-in scenario (cosim builtins) or a scenario YAML")
    run.add_argument("--config", type=int, choices=(1, 2), help="1: the 7B target, 2: the 1.5B target (default: "
                                                                "the scenario's)")
    _workload_options(run)
    run.add_argument("--set", action="append", default=[], metavar="PATH=VALUE",
                     help="a scenario value, e.g. fpga.clock=300 MHz, or a role's file: target.model=FILE, "
                          "target.device=FILE, target.profile=DIR (draft, prm, target; repeat)")
    run.add_argument("--vcd", help="write SystemC waveforms (VCD) here")
    run.add_argument("--vcd-detail", choices=("step", "token"), default="step",
                     help="step (default): pointers per step boundary and verdict, shadow sync as one summary "
                          "state; token: every drafted token and shadow-sync pass (slower)")
    run.add_argument("--timeline", help="write a Perfetto/Chrome trace-event timeline (JSON) here")
    run.add_argument("--policy", metavar="MODULE:CLASS", help="live co-simulation: CLASS(trace) decides each "
                                                               "step, verdict and backtrack as the simulation "
                                                               "reaches it (cosim.live.Policy). FILE.py:CLASS "
                                                               "imports FILE.py with its folder on the import "
                                                               "path: this runs the file's code, as python would")
    run.add_argument("--out", help="folder for per_problem.csv, summary.json, scenario.resolved.yaml "
                                   "(default out/<scenario name>)")
    run.add_argument("--quiet", action="store_true", help="no progress bar")
    run.set_defaults(func=_commands.cmd_run)

    sweep = sub.add_parser("sweep", help="simulate a grid of parameter values")
    sweep.add_argument("scenario", help="a built-in scenario (cosim builtins) or a scenario YAML")
    sweep.add_argument("--config", type=int, choices=(1, 2), help="1: the 7B target, 2: the 1.5B target "
                                                                  "(default: the scenario's)")
    sweep.add_argument("--set", action="append", required=True, metavar="PATH=V1,V2,...",
                       help="a parameter and its values, e.g. pcie.bandwidth_gbps=2,4,8 or fpga.clock=200 MHz,300 MHz "
                            "(repeat for a grid; paths: pcie.*, fpga.*, hbm.*, draft|prm|target.device|link|model.*, "
                            "toggles.*, serving.*, cluster.draft|prm|target.*, batching.*)")
    _workload_options(sweep)
    sweep.add_argument("--workers", type=int, default=1, help="points simulated at once (default 1)")
    sweep.add_argument("--executor", choices=("local", "ray"), default="local",
                       help="local worker processes, or Ray (optional extra [ray])")
    sweep.add_argument("--ray-address", help="Ray cluster to join: HOST:PORT as `ray start --head` prints it "
                                             "(e.g. 10.0.0.5:6379); default: a local Ray with --workers CPUs")
    sweep.add_argument("--out", help="folder for sweep.csv, sweep.parquet, points.jsonl "
                                     "(default out/sweep-<scenario name>)")
    sweep.add_argument("--quiet", action="store_true", help="no progress bar")
    sweep.set_defaults(func=_commands.cmd_sweep)

    report = sub.add_parser("report", help="the paper-style evaluation on built-in defaults")
    report.add_argument("--problems", type=int, default=300, help="problems per dataset (default 300)")
    report.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    report.add_argument("--out", help="folder for report.md, report.json and the figures (default out/report)")
    report.add_argument("--quiet", action="store_true", help="no progress bar")
    report.set_defaults(func=_commands.cmd_report)

    add_serve_parsers(sub)
    _add_trace_commands(sub)
    add_fit_parser(sub)
    add_model_parser(sub)
    add_validate_parser(sub)
    add_sensitivity_parser(sub)

    rec = sub.add_parser("record", help="run BRSD with real models; write the trace and measured latency profiles "
                                        "(optional extra [record]: torch, transformers)")
    rec.add_argument("--draft", required=True, help="draft model folder (HuggingFace causal LM)")
    rec.add_argument("--target", required=True, help="target model folder (same tokenizer as the draft)")
    rec.add_argument("--prm", required=True, help="PRM folder: a causal LM with value_head.pt (Linear(hidden, 1))")
    rec.add_argument("--dataset", required=True, help="problems, JSON Lines with question/problem and answer")
    rec.add_argument("--problems", type=int, default=10, help="problems to run (default 10)")
    rec.add_argument("--max-step-tokens", type=int, default=256, help="longest step (default 256)")
    rec.add_argument("--max-steps", type=int, default=40, help="most steps per problem (default 40)")
    rec.add_argument("--accept-threshold", type=float, default=0.7, help="PRM acceptance threshold (default 0.7)")
    rec.add_argument("--backtrack-threshold", type=float, default=0.7, help="backtracking threshold (default 0.7)")
    rec.add_argument("--max-backtracks", type=int, default=5, help="backtracks per problem (default 5)")
    rec.add_argument("--no-backtracking", action="store_true", help="forward-only RSD")
    rec.add_argument("--device", default="cpu", help="torch device (default cpu)")
    rec.add_argument("--simulate", metavar="SCENARIO", help="simulate the run on SCENARIO in lockstep with the "
                                                            "models (live co-simulation): the trace, the profiles "
                                                            "and the simulated result together")
    rec.add_argument("--out", help="folder for trace.jsonl and profile_<role>.csv (default out/record)")
    rec.add_argument("--quiet", action="store_true", help="no progress bar")
    rec.set_defaults(func=_commands.cmd_record)

    demo = sub.add_parser("demo", help="each hardware model alone, then the systems on a small trace")
    demo.set_defaults(func=_cmd_demo)
    params = sub.add_parser("params", help="list every configuration parameter with its unit and meaning")
    params.add_argument("group", nargs="?", choices=_GROUPS, help="only this group")
    params.set_defaults(func=_cmd_params)
    builtins = sub.add_parser("builtins", help="list the built-in devices, links, models, GPU architectures, "
                                               "acceptance profiles and dataset profiles",
                              epilog="Example: cosim builtins --sources h100-sxm",
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    builtins.add_argument("--sources", metavar="NAME",
                          help="a built-in device, link, model or GPU architecture: each of its values with its "
                               "source, or the estimate's reasoning and plausible range (a GPU's include those it "
                               "takes from its architecture)")
    builtins.set_defaults(func=_cmd_builtins)
    return parser


def _run(args: argparse.Namespace) -> int:
    try:
        with _inputs.recording():  # every file read, so that no output replaces one
            return args.func(args)
    except CosimError as exc:
        print(f"cosim: error: {flagged(args.command, exc)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("cosim: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader went away (`cosim validate | head`): what it wanted it has. Point
        # stdout at /dev/null so the interpreter's final flush does not raise again.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
        return 128 + signal.SIGPIPE


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return run_terminable(lambda: _run(args))
    finally:
        stop_workers()  # none outlives the command, wherever a signal found it


if __name__ == "__main__":
    sys.exit(main())

"""``cosim sensitivity``: which plausible ranges a scenario's figure depends on (SALib's
Morris screening or Sobol indices), printed ranked, with the figure's band, a tornado
figure and the journal of points (docs/uncertainty.md)."""

from __future__ import annotations

import argparse
import csv
import io
import json
from pathlib import Path
from typing import Any

from .._stats._bootstrap import unavailable_text
from ..errors import ConfigError
from ..result import METRICS
from .. import trace as traces
from ..config.scenario import load_scenario
from ..outputs._atomic import writable_folder, write_atomically
from ..outputs._check import check_files
from ..uncertainty._sensitivity import check_metric, sensitivity
from ._protect import later_inputs
from ._serve_inputs import check_config_used
from ._tornado import tornado
from ..uncertainty._factors import describe_range

_FILES = ("sensitivity.json", "sensitivity.csv", "tornado.png", "points.jsonl")
TOP = 15  # factors printed and drawn (every one is in the JSON and CSV)


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("sensitivity", help="which estimates a figure depends on: its sensitivity to the plausible "
                                           "ranges of the parameters (SALib Morris or Sobol)",
                       epilog="Examples:\n  cosim sensitivity heteroreason-u280-200 --metric speedup --workers 2\n"
                              "  cosim sensitivity heteroreason-u280-300 --range fpga.clock_mhz=250:350 "
                              "--only 'u280:*,fpga.*' --method sobol --samples 32",
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("scenario", help="a built-in scenario (cosim builtins) or a scenario YAML")
    p.add_argument("--config", type=int, choices=(1, 2), help="1: the 7B target, 2: the 1.5B target")
    p.add_argument("--metric", default="latency_s", help=f"the figure: one of {', '.join(METRICS)} (default "
                                                          "latency_s; speedup runs gpu-baseline beside each point)")
    p.add_argument("--method", default="auto", choices=("auto", "morris", "sobol"),
                   help="morris (screening, elementary effects), sobol (total-order indices), or auto: sobol up "
                        "to 10 factors, morris beyond (default)")
    p.add_argument("--samples", type=int, help="Morris trajectories (default 10, at least 4) or Sobol base samples "
                                               "(a power of 2, default 64, at least 16)")
    group = p.add_argument_group("workload (a trace file, or problems drawn from a dataset profile; a drawn "
                                 "workload's ranged profile parameters are factors too)")
    group.add_argument("--trace", help="trace file to replay at every point")
    group.add_argument("--profile", help="dataset profile (default math500)")
    group.add_argument("--problems", type=int, help="problems to draw (default 100)")
    group.add_argument("--seed", type=int, default=0, help="seed of the drawn problems and of the sampling "
                                                           "(default 0)")
    p.add_argument("--range", action="append", default=[], metavar="NAME=LOW:HIGH",
                   help="add a factor or narrow one: a scenario path (fpga.clock_mhz=150:300) or a factor's name "
                        "(rtx3090:gpu.request_overhead_ns=15ms:40ms); repeat")
    p.add_argument("--only", action="append", default=[], metavar="PATTERNS",
                   help="keep only the factors matching these comma-separated patterns (u280:*,rtx3090:gpu.*)")
    p.add_argument("--workers", type=int, default=1, help="points simulated at once (default 1)")
    p.add_argument("--executor", choices=("local", "ray"), default="local", help="local processes, or Ray")
    p.add_argument("--ray-address", help="Ray cluster to join (HOST:PORT)")
    p.add_argument("--out", help="folder for sensitivity.json, sensitivity.csv, tornado.png and points.jsonl "
                                 "(default out/sensitivity-<scenario name>)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=cmd_sensitivity)


def cmd_sensitivity(args: argparse.Namespace) -> int:
    check_metric(args.metric)
    if args.trace and (args.profile is not None or args.problems is not None):
        raise ConfigError("--trace replays a file: --profile and --problems would be ignored; drop them")
    if args.problems is not None and args.problems < 2:
        raise ConfigError(f"--problems: at least 2, got {args.problems}")
    scn = load_scenario(args.scenario, args.config)
    default = f"out/sensitivity-{scn.name}" + ("" if scn.config == 1 else f"-config{scn.config}")
    folder = Path(args.out or default)
    check_files([("--out", folder / name) for name in _FILES],
                {"the scenario": args.scenario, "--trace": args.trace, **later_inputs(args.profile)})
    writable_folder(folder, "--out")
    if args.trace:
        check_config_used(args.config, scn)
    trace = traces.load(args.trace) if args.trace else None
    analysis = sensitivity(scn, args.metric, profile=args.profile or "math500", problems=args.problems or 100,
                           seed=args.seed, trace=trace, method=args.method, samples=args.samples, ranges=args.range,
                           only=args.only, workers=args.workers, executor=args.executor,
                           ray_address=args.ray_address, out=folder, progress=not args.quiet)
    result = analysis.to_json()
    write_atomically(folder / "sensitivity.json", json.dumps(result, indent=1))
    write_atomically(folder / "sensitivity.csv", _csv(result))
    tornado(analysis, folder / "tornado.png", TOP)
    print(_table(analysis, result))
    print(f"\nwrote {folder}/sensitivity.json, sensitivity.csv, tornado.png, points.jsonl (a rerun skips finished "
          f"points)")
    return 0


def _csv(result: dict[str, Any]) -> str:
    index = result["index"]
    columns = ["rank", "name", index, f"{index}_conf", "sigma" if result["method"] == "morris" else "S1", "low",
               "high", "nominal", "at_low", "at_high", "kind", "declared"]
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(columns)
    for rank, row in enumerate(result["ranking"], 1):
        writer.writerow([rank, *(row[c] for c in columns[1:])])
    return out.getvalue()


def _table(analysis: Any, result: dict[str, Any]) -> str:
    name = {"morris": f"Morris screening, {analysis.samples} trajectories",
            "sobol": f"Sobol indices, {analysis.samples} base samples"}[analysis.method]
    index = "mu*" if analysis.method == "morris" else "ST"
    other = "sigma" if analysis.method == "morris" else "S1"
    figure = analysis.metric + (f" over {result['baseline']}" if result.get("baseline") else "")
    lines = [f"{result['scenario']} (Config {result['config']}): {figure} on {result['workload']}",
             f"{name} (seed {analysis.seed}): {analysis.points} points, {len(analysis.factors)} factors",
             f"nominal {analysis.nominal:.4g}; band over the ranges (2.5-97.5% of the sampled points) "
             f"[{analysis.band[0]:.4g}, {analysis.band[1]:.4g}], min-max [{analysis.extremes[0]:.4g}, "
             f"{analysis.extremes[1]:.4g}]", ""]
    width = max(len(r.name) for r in analysis.ranking[:TOP])
    lines.append(f"{'rank':>4}  {'factor':<{width}}  {index:>9} {'+/-':>8} {other:>9}  {'at low':>9} {'at high':>9}  "
                 f"range")
    by_name = {f.name: f for f in analysis.factors}
    for rank, r in enumerate(analysis.ranking[:TOP], 1):
        f = by_name[r.name]
        conf = "n/a" if r.conf is None else f"{r.conf:.2g}"
        lines.append(f"{rank:>4}  {r.name:<{width}}  {r.index:>9.4g} {conf:>8} {r.first:>9.4g}  "
                     f"{r.low_value:>9.4g} {r.high_value:>9.4g}  {describe_range(f)} ({f.kind})")
    if len(analysis.ranking) > TOP:
        lines.append(f"      ... {len(analysis.ranking) - TOP} more in sensitivity.csv")
    if any(r.conf is None for r in analysis.ranking):
        lines.append(f"+/-: {unavailable_text()}: {analysis.samples} trajectories are too few for a bootstrap "
                     f"interval of mu* (docs/metrics.md)")
    return "\n".join(lines)

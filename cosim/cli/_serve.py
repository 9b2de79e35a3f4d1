"""``cosim serve`` (requests arriving over time on a cluster) and ``cosim plan`` (the
cheapest cluster that meets a p99 objective at a rate)."""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from pathlib import Path

import yaml

from ..errors import ConfigError
from ._progress import finished_bar
from ..outputs._arrow import column, write_csv
from ..outputs._atomic import write_atomically
from ..outputs._safety import RunFolder
from ..serve import run, with_arrivals
from ._protect import check_run_outputs, later_inputs
from ._run_outputs import RunOutputs
from ._words import counted, noun
from . import _estimate
from ..serve._run import waveform_section
from ..serve._timeline import write_serve_timeline
from .._stats._bootstrap import MIN_UNITS
from .._stats._serving import BLOCKS, serve_intervals
from ..uncertainty._power_band import band as power_band
from .._token_metrics import format_latency
from ..schema._rows import DEVICES
from ._plan_cmd import run_plans
from ._serve_inputs import arrivals_text, requests_of, scenario_with_settings

_SERVE_FILES = ("per_request.csv", "per_request.arrow", "summary.json", "devices.csv", "scenario.resolved.yaml",
                "trace.jsonl")


def _arrival_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("requests (a trace file, or a synthetic trace from a dataset profile)")
    group.add_argument("--trace", help="trace file to serve (its arrival_s times, unless --rate is given)")
    group.add_argument("--profile", help="dataset profile to draw requests from (default math500)")
    group.add_argument("--requests", type=int, help="requests to draw (default 1000)")
    group.add_argument("--seed", type=int, help="random seed of the requests and their arrivals (default 0)")
    group.add_argument("--rate", type=float, help="arrivals per second (Poisson, or Gamma with --cv)")
    group.add_argument("--cv", type=float, help="coefficient of variation of the inter-arrival times (Gamma; "
                                                "1 is as variable as Poisson, more is burstier)")
    parser.add_argument("--set", action="append", default=[], metavar="PATH=VALUE",
                        help="a scenario value, e.g. cluster.target.devices=2 or batching.enabled=true, or a role's "
                             "file: target.model=FILE, target.device=FILE, target.profile=DIR (repeat)")


def add_parsers(sub: argparse._SubParsersAction) -> None:
    serve = sub.add_parser("serve", help="serve requests arriving over time on a cluster: tail latency, "
                                         "throughput, energy, utilisation")
    serve.add_argument("scenario", help="a built-in scenario (cosim builtins) or a scenario YAML "
                                        "(its cluster: and batching: sections; one of each without them)")
    serve.add_argument("--config", type=int, choices=(1, 2), help="1: the 7B target, 2: the 1.5B target")
    _arrival_options(serve)
    serve.add_argument("--slo", type=float, help="latency objective in seconds: its attainment is reported")
    serve.add_argument("--timeline", help="write a Perfetto/Chrome timeline (a track per device) here")
    serve.add_argument("--vcd", help="write SystemC waveforms (VCD) of a request slot's requests and the "
                                     "devices it is bound to here, with a GTKWave save file beside it")
    serve.add_argument("--vcd-slot", type=int, default=None,
                       help="the request slot the waveform follows (default 0; slots = draft devices x contexts)")
    serve.add_argument("--vcd-window", default=None, metavar="START:END",
                       help="seconds of simulated time the waveform changes in, e.g. 100:160 or 100: (to the end)")
    serve.add_argument("--out", help="folder for per_request.csv/.arrow, summary.json, devices.csv "
                                     "(default out/serve-<scenario name>)")
    serve.add_argument("--no-power-band", action="store_true",
                       help="skip the power model's band of the energy (two more runs, every ranged power "
                            "parameter at its low, then its high end)")
    serve.add_argument("--quiet", action="store_true", help="no progress bar")
    serve.set_defaults(func=cmd_serve)

    plan = sub.add_parser("plan", help="the cheapest cluster whose p99 latency meets an objective at a rate")
    plan.add_argument("scenarios", nargs="+", help="built-in scenarios or scenario YAMLs; each gets its plan")
    plan.add_argument("--config", type=int, choices=(1, 2), help="1: the 7B target, 2: the 1.5B target")
    _arrival_options(plan)
    plan.add_argument("--slo", type=float, required=True, help="p99 latency objective in seconds")
    plan.add_argument("--draft", default="1-8", help="draft devices to try: 1-8 or 1,2,4 (default 1-8)")
    plan.add_argument("--prm", default="1-4", help="PRM GPUs to try (default 1-4)")
    plan.add_argument("--target", default="1-4", help="target GPUs to try (default 1-4)")
    plan.add_argument("--costs", help="YAML of a cost per device: {draft: C, prm: C, target: C} (default: each "
                                      "device's highest power in watts)")
    plan.add_argument("--workers", type=int, default=1, help="clusters simulated at once (default 1)")
    plan.add_argument("--executor", choices=("local", "ray"), default="local", help="local processes, or Ray")
    plan.add_argument("--ray-address", help="Ray cluster to join (HOST:PORT)")
    plan.add_argument("--out", help="folder for plan.json and plan.csv (default out/plan)")
    plan.add_argument("--quiet", action="store_true", help="no progress output")
    plan.set_defaults(func=cmd_plan)


def _vcd_window(text: str | None) -> tuple[float, float | None] | None:
    """START:END seconds (END may be left out: to the end of the run)."""
    if text is None:
        return None
    start, sep, end = text.partition(":")
    try:
        if not sep:
            raise ValueError
        window = (float(start), float(end) if end.strip() else None)
    except ValueError:
        raise ConfigError(f"--vcd-window: give START:END in seconds (END may be empty), got {text!r}") from None
    if not all(math.isfinite(v) for v in window if v is not None):
        raise ConfigError(f"--vcd-window: finite seconds, got {text!r}")
    return window


def cmd_serve(args: argparse.Namespace) -> int:
    scn = scenario_with_settings(args.scenario, args.config, args.set)
    folder = Path(args.out or f"out/serve-{scn.name}" + ("" if scn.config == 1 else f"-config{scn.config}"))
    outs = RunOutputs()
    outs.check_timeline(args.timeline)
    vcd = outs.waveform(args.vcd)
    for option, value in (("--vcd-slot", args.vcd_slot), ("--vcd-window", args.vcd_window)):
        if value is not None and vcd is None:
            raise ConfigError(f"{option}: it chooses what --vcd writes; give --vcd too")
    window = _vcd_window(args.vcd_window)
    waveform = waveform_section(scn, 0 if args.vcd_slot is None else args.vcd_slot, window)
    outs.check_waveform()
    check_run_outputs(folder, _SERVE_FILES, outs.outputs, {"the scenario": args.scenario, "--trace": args.trace,
                                                           **later_inputs(None if args.trace else args.profile)},
                      named=outs.named)
    requests, described = requests_of(args, scn)
    seed = 0 if args.seed is None else args.seed
    with_arrivals(requests, args.rate, args.cv, seed)  # a bad rate or cv is found before any work
    if len(requests) > _estimate.ESTIMATE_ABOVE:  # what a very long run will cost, said before it starts
        option = f"--trace {args.trace} ({counted(len(requests), 'request')})" if args.trace \
            else f"--requests {len(requests)}"
        print(_estimate.estimate(scn, requests, folder, False, option=option,
                       sample_run=lambda sample: run(scn, sample, rate=args.rate, cv=args.cv, seed=seed))
              + ("" if args.trace else "; the drawn trace is not written (the manifest says how to draw it "
                                       "again)"), flush=True)
    run_folder = RunFolder(folder)
    run_folder.aliases = {f"per_problem.{kind}": f"per_request.{kind}" for kind in ("csv", "arrow")}
    try:
        with run_folder.writing():
            bar, progress = finished_bar(len(requests), "serve", "request", args.quiet)
            with bar:  # closed before an error is printed too, so that the error has its own line
                outs.stage(run_folder)
                result = run(scn, requests, rate=args.rate, cv=args.cv, seed=seed, slo_s=args.slo,
                             rows_to=run_folder.staging, activities=bool(args.timeline), vcd=outs.staged_vcd,
                             vcd_slot=waveform["slot"], vcd_window_s=window, progress=progress)
            if vcd is not None and waveform["start_ns"] >= result.last_end_s * 1e9:
                print(f"cosim: note: --vcd-window opens at {waveform['start_ns'] / 1e9:g} s, after the run ended "
                      f"({result.last_end_s:.3f} s): the waveform holds no change", file=sys.stderr)
            if vcd is not None:  # its save file names the waveform where it will be
                start_s, end_s = waveform["start_ns"] / 1e9, min(result.last_end_s, waveform["end_ns"] / 1e9)
                outs.write_gtkw(result.per_request, max(end_s, start_s), start_s, waveform["slot"])
            for kind in ("csv", "arrow"):  # the rows streamed under the single-request names
                os.replace(run_folder.staged(f"per_problem.{kind}"), run_folder.staged(f"per_request.{kind}"))
            found = serve_intervals(result)
            power = None if args.no_power_band else power_band(
                scn, lambda s: run(s, requests, rate=args.rate, cv=args.cv, seed=seed, slo_s=args.slo),
                lambda r: r.summary.energy_j_per_token)
            summary = {**result.row(), "arrivals": arrivals_text(args), "request_metrics": result.request_summary,
                       "power_band": {"energy_j_per_token": list(power) if power else None},
                       "intervals": {"level": 0.95, "method": f"bootstrap over {BLOCKS} blocks of consecutive requests "
                                     "(BCa for means, percentile for percentiles)", "min_requests": MIN_UNITS,
                                     **{m: iv.to_list() for m, iv in found.items()}}}
            write_atomically(run_folder.staged("summary.json"), json.dumps(summary, indent=1))
            import pyarrow as pa  # lazy: pyarrow, loaded only when a table is written or read

            # Every declared device column; one an engine does not report is left empty.
            write_csv(pa.table({c.name: column([d.get(c.name) for d in result.devices]) for c in DEVICES}),
                      run_folder.staged("devices.csv"))
            write_atomically(run_folder.staged("scenario.resolved.yaml"),
                             yaml.safe_dump(scn.reloadable(), sort_keys=False))
            if not args.trace and len(requests) <= _estimate.ESTIMATE_ABOVE:
                with_arrivals(requests, args.rate, args.cv, seed).save(run_folder.staged("trace.jsonl"))
            if outs.staged_timeline is not None:
                labels = {role: getattr(scn, role).device.name for role in ("draft", "prm", "target")}
                write_serve_timeline(result, outs.staged_timeline, labels)
            run_folder.publish({"command": "cosim serve", "scenario": scn.name,
                                "scenario_fingerprint": scn.fingerprint(), "requests": described,
                                "arrivals": arrivals_text(args), "seed": seed,
                                "trace_fingerprint": requests.fingerprint()})
    except BaseException:
        run_folder.discard()
        raise
    s = result.summary
    print(f"{scn.name} ({scn.system}, Config {scn.config}) serving {described} at {arrivals_text(args)}:\n")
    print(f"  latency p50 / p90 / p99 / max   {s.latency_p50_s:8.2f} {s.latency_p90_s:8.2f} "
          f"{s.latency_p99_s:8.2f} {s.latency_max_s:8.2f} s")
    print(f"  queueing mean / p99             {s.queueing_mean_s:8.2f} {s.queueing_p99_s:8.2f} s")
    if found:  # the 95% intervals, a block bootstrap over the requests (docs/metrics.md)
        print("  95% intervals                   " + ", ".join(
            f"{label} {found[m].format()}" for label, m in (
                ("latency mean", "latency_mean_s"), ("p50", "latency_p50_s"), ("p99", "latency_p99_s"),
                ("queueing mean", "queueing_mean_s"))) + " s")
    print(f"  throughput                      {s.throughput_req_s:8.3f} requests/s, {s.throughput_tok_s:.1f} tok/s")
    if s.slo_attainment is not None:
        slo = found.get("slo_attainment")
        print(f"  within the {s.slo_s:g} s objective        {s.slo_attainment:8.1%}"
              + (f" {slo.spread('.1%')}" if slo else ""))
    print(f"  energy                          {s.energy_j_per_token:8.3f} J/token (idle included)"
          + (f"; power model's band {power[0]:.3f} to {power[1]:.3f}" if power else ""))
    if s.tokens is not None:
        print("  per token, as vLLM's benchmark reports it:")
        print("\n".join("    " + line for line in format_latency(s.tokens).splitlines()))
    for role, pool in s.pools.items():
        batch = "" if pool.mean_batch is None else f", mean batch {pool.mean_batch:.2f}"
        if pool.kv_limited_iterations:
            batch += f", {counted(pool.kv_limited_iterations, 'iteration')} limited by KV memory"
        print(f"  {role:<8} {pool.devices:>3} {noun(pool.devices, 'device') + ',':<8} utilisation "
              f"{pool.utilisation:6.1%}{batch}")
    print(f"\nwrote {folder}/per_request.csv, per_request.arrow, summary.json, devices.csv, "
          f"scenario.resolved.yaml, manifest.json" + ("" if args.trace else ", trace.jsonl") + outs.wrote())
    return 0


def cmd_plan(args: argparse.Namespace) -> int:
    return run_plans(args)

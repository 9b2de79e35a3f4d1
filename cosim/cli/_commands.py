"""What the ``cosim`` subcommands do (the parser lives in cosim.cli)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import yaml
from tqdm import tqdm

from .. import trace as traces
from ..outputs._atomic import writable_file, writable_folder, write_atomically
from ..outputs._check import check_files
from ..outputs._safety import RunFolder
from ..errors import ConfigError
from ..result import Result
from ._estimate import ESTIMATE_ABOVE, estimate
from ._protect import check_run_outputs, later_inputs
from ..config.scenario import load_scenario
from ..uncertainty import intervals, to_json
from ..engine._workflow import simulate
from ._policy_option import load_policy
from ._progress import finished_bar
from ..live import cosimulate
from ._set_option import parse_set
from ._serve_inputs import check_config_used
from ._serve_inputs import scenario_with_settings
from .._sweep import check_points, sweep
from ..report import run_report
from ..trace._dataset_stats import dataset_statistics, format_statistics
from ..report._intervals import cell
from ..record import CausalModel, ValueHeadPrm, read_problems, record_brsd
from ..record._runner import FILES as RECORDED_FILES
from ._record_live import recorded_inputs, record_simulated
from ._run_outputs import RunOutputs
from ._summary import format_summary
from ._words import counted


def _scenario(args: argparse.Namespace) -> Any:
    return load_scenario(args.scenario, args.config)


def _default_out(scn: Any, kind: str = "") -> str:
    return f"out/{kind}{scn.name}" + ("" if scn.config == 1 else f"-config{scn.config}")


def _workload(args: argparse.Namespace, scn: Any) -> tuple[traces.Trace, str]:
    if args.trace:
        drawn = [o for o, v in (("--profile", args.profile), ("--problems", args.problems), ("--seed", args.seed),
                                ("--no-backtracking", args.no_backtracking or None)) if v is not None]
        if drawn:
            raise ConfigError(f"--trace replays a file: {', '.join(drawn)} would be ignored; drop them")
        check_config_used(args.config, scn)
        return traces.load(args.trace), f"trace {args.trace}"
    if args.profile is not None and not args.profile.strip():
        raise ConfigError("--profile: give a profile name or a profile YAML path")
    profile = args.profile or "math500"
    problems = 100 if args.problems is None else args.problems
    seed = 0 if args.seed is None else args.seed
    # Drawn for the scenario's target (it sets how good the refined steps are) and algorithm.
    backtracking = scn.backtracking and not args.no_backtracking
    generated = traces.generate(profile, problems, seed, backtracking=backtracking, config=scn.config)
    return generated, (f"{counted(problems, 'problem')} from profile {profile} (seed {seed}, "
                       f"Config {scn.config}'s target" + ("" if backtracking else ", forward-only") + ")")


def run_intervals(result: Result) -> dict[str, Any]:
    """The 95% interval of every mean of a run (each without ends when too few problems ran)."""
    return intervals(result)


_RUN_FILES = ("per_problem.csv", "per_problem.arrow", "summary.json", "scenario.resolved.yaml", "trace.jsonl")


def cmd_run(args: argparse.Namespace) -> int:
    if args.vcd is None and args.vcd_detail != "step":
        raise ConfigError("--vcd-detail: applies to a waveform; add --vcd FILE")
    if args.policy and args.vcd_detail != "step":
        raise ConfigError("--vcd-detail token: a policy's run shows step detail only")
    scn = scenario_with_settings(args.scenario, args.config, args.set)
    folder = Path(args.out or _default_out(scn))
    outs = RunOutputs()
    outs.waveform(args.vcd)
    outs.check_waveform()
    outs.check_timeline(args.timeline)
    check_run_outputs(folder, _RUN_FILES, outs.outputs, {
        "the scenario": args.scenario, "--trace": args.trace,
        **later_inputs(None if args.trace else args.profile, args.policy)}, named=outs.named)
    workload, described = _workload(args, scn)
    # A generated trace is written beside the results unless it would be huge: the manifest
    # says how to draw it again (profile, problems, seed, config).
    save_trace = not args.trace and len(workload) <= ESTIMATE_ABOVE
    if len(workload) > ESTIMATE_ABOVE:
        print(estimate(scn, workload, folder, save_trace) + ("" if args.trace else
              "; the generated trace is not written (the manifest says how to draw it again)"), flush=True)
    policy = None
    if args.policy:
        policy = load_policy(args.policy, workload)
        save_trace = True  # the trace the policy's answers made: it replays the run
    live = None
    run = RunFolder(folder)
    try:
        with run.writing():
            bar, progress = finished_bar(len(workload), "run", "problem", args.quiet)
            with bar:  # closed before an error is printed too, so that the error has its own line
                outs.stage(run)
                if policy is not None:
                    live = cosimulate(scn, policy, workload, vcd=outs.staged_vcd, timeline=outs.staged_timeline,
                                      rows_to=run.staging, progress=progress)
                    result, workload = live.result, live.trace
                else:
                    result = simulate(scn, workload, vcd=outs.staged_vcd, vcd_detail=args.vcd_detail,
                                      timeline=outs.staged_timeline, rows_to=run.staging, progress=progress)
            outs.write_gtkw(result.per_problem, result.last_end_s)
            found = run_intervals(result)
            write_atomically(run.staged("summary.json"), json.dumps(
                {**result.summary, **({"intervals": to_json(found)} if found else {})}, indent=1))
            write_atomically(run.staged("scenario.resolved.yaml"), yaml.safe_dump(scn.reloadable(), sort_keys=False))
            if save_trace and live is None:  # a live run wrote the trace its answers made there
                workload.save(run.staged("trace.jsonl"))
            run.publish({"command": "cosim run", "scenario": scn.name, "scenario_fingerprint": scn.fingerprint(),
                         "trace": described, "trace_fingerprint": workload.fingerprint()})
    except BaseException:
        run.discard()
        raise
    print(format_summary(result, f"{scn.name} ({scn.system}, Config {scn.config}) on {described}"
                                 + (f", decided by {args.policy}:" if live else ":"), found))
    if live is not None:
        print(f"\n  policy decisions {live.decisions} ({live.us_per_decision:.1f} us each in the policy), "
              f"verdicts against the PRM score {live.overridden_verdicts}")
    print(f"\nwrote {folder}/per_problem.csv, per_problem.arrow, summary.json, scenario.resolved.yaml, manifest.json"
          + (", trace.jsonl" if save_trace else "") + outs.wrote())
    return 0


def cmd_sweep(args: argparse.Namespace) -> int:
    scn = _scenario(args)
    grid: dict[str, list[Any]] = {}
    for option in args.set:
        path, values = parse_set(option)
        if path in grid:
            raise ConfigError(f"--set {path} given twice")
        if not values:
            raise ConfigError(f"--set {path}: give at least one value")
        grid[path] = values
    # Every point with its values applied together, found now, not after other points ran.
    check_points(scn, grid)
    folder = Path(args.out or _default_out(scn, "sweep-"))
    check_files([("--out", folder / name) for name in ("sweep.csv", "sweep.parquet", "points.jsonl")],
                {"the scenario": args.scenario, "--trace": args.trace,
                 **later_inputs(None if args.trace else args.profile)})
    writable_folder(folder, "--out")
    workload, described = _workload(args, scn)
    table = sweep(scn, workload, grid, workers=args.workers, executor=args.executor, ray_address=args.ray_address,
                  out=folder, progress=not args.quiet)
    print(f"{scn.name} sweep on {described}: {counted(len(table.rows), 'point')}, {len(table.failed())} failed")
    first, second = ("latency_p99_s", "throughput_req_s") if table.serving else ("latency_s", "goodput_tok_s")
    print("  ".join(f"{p:>22}" for p in table.parameters) + f"  {first:>14}  {second:>16}  status")
    for row in table.rows:
        values = "  ".join(f"{str(row[p]):>22}" for p in table.parameters)
        if row["status"] == "ok":
            print(f"{values}  {row[first]:>14.4f}  {row[second]:>16.3f}  ok")
        else:
            print(f"{values}  {'':>14}  {'':>16}  {row['error']}")
    print(f"\nwrote {folder}/sweep.csv, sweep.parquet, points.jsonl (a rerun skips finished points)")
    return 0 if not table.failed() else 1


def cmd_report(args: argparse.Namespace) -> int:
    folder = Path(args.out or "out/report")
    run = RunFolder(folder)
    bar = tqdm(total=1, desc="report", unit="run", disable=args.quiet)

    def progress(done: int, total: int, label: str) -> None:
        bar.total = total
        bar.n = done
        bar.set_postfix_str(label, refresh=False)
        bar.refresh()

    try:  # written aside and put in place whole: the folder holds one report, never parts of two
        with run.writing():
            with bar:  # closed before an error is printed too
                report = run_report(args.problems, args.seed, run.staging, progress)
            run.publish({"command": "cosim report", "problems": args.problems, "seed": args.seed})
    except BaseException:
        run.discard()
        raise
    speedups = [r for r in report["records"] if r["system"] == "heteroreason-u280-200"]
    print(f"report on {counted(args.problems, 'problem')} per dataset (seed {args.seed}): {folder}/report.md")
    for r in speedups:
        print(f"  heteroreason-u280-200 speedup on {r['dataset']:<14} Config {r['config']}: "
              + cell(r, "speedup", "{:.2f}", unit="x"))
    print(f"figures: {', '.join(Path(f).name for f in report['figures'])}")
    return 0


def _thresholds(args: argparse.Namespace) -> None:
    for option, value in (("--accept-threshold", args.accept_threshold),
                          ("--backtrack-threshold", args.backtrack_threshold)):
        if not 0.0 <= value <= 1.0:  # NaN fails this too
            raise ConfigError(f"{option}: must be in [0, 1], got {value}")
    if args.max_backtracks < 0:
        raise ConfigError(f"--max-backtracks: must be >= 0, got {args.max_backtracks}")


def cmd_trace_gen(args: argparse.Namespace) -> int:
    _thresholds(args)
    if args.config is not None and args.config not in traces.CONFIGS:
        raise ConfigError(f"--config: must be 1 (7B target) or 2 (1.5B target), got {args.config}")
    if args.target is not None and args.target not in traces.TARGETS:
        raise ConfigError(f"--target: one of {', '.join(traces.TARGETS)}, got {args.target!r}")
    if args.target is not None and args.config is not None and traces.resolve_target(config=args.config) != args.target:
        raise ConfigError(f"--target {args.target} and --config {args.config} name different targets; give one")
    out, = check_files([("--out", args.out)], later_inputs(args.profile))
    writable_file(out, "--out")
    header = traces.TraceHeader(accept_threshold=args.accept_threshold, backtrack_threshold=args.backtrack_threshold,
                                max_backtracks=args.max_backtracks)
    result = traces.generate(args.profile, args.problems, args.seed, backtracking=not args.no_backtracking,
                             header=header, target=args.target, config=args.config)
    path = result.save(out)
    if not args.quiet:
        print(traces.format_table(traces.trace_statistics(result)))
        print(f"wrote {counted(len(result), 'problem')} to {path}")
    return 0


def cmd_trace_stats(args: argparse.Namespace) -> int:
    for path in args.traces:
        print(f"{path}:")
        print(traces.format_table(traces.trace_statistics(traces.load(path))))
    return 0


def cmd_trace_validate(args: argparse.Namespace) -> int:
    for path in args.traces:
        loaded = traces.load(path)
        arrivals = loaded.arrivals()
        arriving = "" if arrivals is None else f", arriving over {arrivals[-1] - arrivals[0]:g} s"
        print(f"{path}: valid, {counted(len(loaded), 'problem')} (version {loaded.version()}, "
              f"{'with' if loaded.header.backtracking else 'without'} backtracking{arriving})")
    return 0


def cmd_trace_profile_data(args: argparse.Namespace) -> int:
    for path in args.files:
        for line in format_statistics(dataset_statistics(path)):
            print(line)
    return 0


def cmd_trace_import_rsd(args: argparse.Namespace) -> int:
    if not 0 <= args.threshold <= 1:
        raise ConfigError(f"--threshold: must be in [0, 1], got {args.threshold}")
    header = traces.TraceHeader(accept_threshold=args.threshold)
    given = args.out or str(Path(args.file).with_suffix("")) + ".trace.jsonl"
    out, = check_files([("--out", given)], {f"the RSD outputs {args.file}": args.file,
                                            f"--tokenizer {args.tokenizer}": args.tokenizer})
    writable_file(out, "--out")
    imported = traces.import_rsd(args.file, args.dataset, tokenizer=args.tokenizer, skip_bad=args.skip_bad,
                                 header=header)
    path = imported.trace.save(out)
    for reason in imported.skipped:
        print(f"skipped: {reason}")
    print(traces.format_table(traces.trace_statistics(imported.trace)))
    print(f"wrote {counted(len(imported.trace), 'problem')} to {path}"
          + (f" ({counted(len(imported.skipped), 'record')} skipped)" if imported.skipped else ""))
    return 0


def cmd_record(args: argparse.Namespace) -> int:
    if args.problems < 1:
        raise ConfigError(f"--problems: must be >= 1, got {args.problems}")
    _thresholds(args)
    for option, value, least in (("--max-step-tokens", args.max_step_tokens, 1), ("--max-steps", args.max_steps, 1)):
        if value < least:
            raise ConfigError(f"{option}: must be >= {least}, got {value}")
    problems = read_problems(args.dataset, args.problems)
    header = traces.TraceHeader(accept_threshold=args.accept_threshold, backtrack_threshold=args.backtrack_threshold,
                                max_backtracks=args.max_backtracks, backtracking=not args.no_backtracking)
    folder = Path(args.out or "out/record")
    if args.simulate:
        return record_simulated(args, problems, header, folder)
    check_files([("--out", folder / name) for name in RECORDED_FILES], recorded_inputs(args))
    writable_folder(folder, "--out")
    draft = CausalModel(args.draft, device=args.device, name="draft")
    target = CausalModel(args.target, device=args.device, name="target")
    prm = ValueHeadPrm(args.prm, device=args.device)
    bar = tqdm(total=len(problems), desc="record", unit="problem", disable=args.quiet)
    with bar:  # closed before an error is printed too
        recording = record_brsd(draft, target, prm, problems, dataset=Path(args.dataset).parent.name or "recorded",
                                header=header, max_step_tokens=args.max_step_tokens, max_steps=args.max_steps,
                                progress=lambda done, total: bar.update(1))
    paths = recording.write(folder)
    for reason in recording.skipped:
        print(f"skipped: {reason}")
    print(traces.format_table(traces.trace_statistics(recording.trace)))
    print("wrote " + ", ".join(str(p) for p in paths.values()))
    return 0

"""``cosim record --simulate SCENARIO``: the recorder's models as the policy of a live
co-simulation: each step generated and scored for real while the simulated hardware
keeps time; the trace, the measured profiles and the simulated result written together."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import yaml

from .. import trace as traces
from ..errors import ConfigError
from ..config.scenario import load_scenario
from ..live import cosimulate
from ..outputs._atomic import write_atomically
from ..outputs._safety import RunFolder
from ..record import CausalModel, Recording, ValueHeadPrm
from ..record._live import RecordingPolicy, prompt_problems
from ..record._runner import FILES, problem_questions
from ._protect import check_run_outputs
from ._summary import format_summary

# What the simulated run adds to the recording's files.
_RUN_FILES = ("per_problem.csv", "per_problem.arrow", "summary.json", "scenario.resolved.yaml")


def recorded_inputs(args: argparse.Namespace) -> dict[str, str]:
    """What `cosim record` reads, for the check of its outputs: the problems and the model folders."""
    return {f"--dataset {args.dataset}": args.dataset, f"--draft {args.draft}": args.draft,
            f"--target {args.target}": args.target, f"--prm {args.prm}": args.prm}


def record_simulated(args: argparse.Namespace, problems: list[Any], header: Any, folder: Path) -> int:
    scn = load_scenario(args.simulate)
    if not scn.backtracking and header.backtracking:
        raise ConfigError(f"--simulate {args.simulate}: runs forward-only RSD; add --no-backtracking")
    check_run_outputs(folder, (*FILES, *_RUN_FILES), {}, {**recorded_inputs(args), "--simulate": args.simulate})
    try:
        from transformers import AutoTokenizer  # lazy: transformers, the optional [record] extra
    except ImportError:
        raise ConfigError("recording needs transformers: pip install 'heteroreason-cosim[record]'") from None
    try:
        tokenizer = AutoTokenizer.from_pretrained(args.draft, local_files_only=True)
    except (OSError, ValueError, KeyError) as exc:
        raise ConfigError(f"draft: {args.draft} holds no tokenizer: {str(exc).splitlines()[0][:200]}") from None
    questions = problem_questions(problems)
    dataset = Path(args.dataset).parent.name or "recorded"
    start = prompt_problems(lambda text: list(tokenizer(text, add_special_tokens=False)["input_ids"]), questions,
                            dataset, header)

    def models() -> Any:  # loaded where the simulation runs
        return (CausalModel(args.draft, device=args.device, name="draft"),
                CausalModel(args.target, device=args.device, name="target"),
                ValueHeadPrm(args.prm, device=args.device))

    policy = RecordingPolicy(models, questions, start, args.max_step_tokens, args.max_steps)
    run = RunFolder(folder)
    try:
        with run.writing():
            live = cosimulate(scn, policy, start, rows_to=run.staging)
            collected = live.policy_outcome or {"timings": {}, "texts": []}
            meta = dict(live.trace.header.metadata, recorded={"draft": "draft", "target": "target",
                                                                "max_step_tokens": args.max_step_tokens,
                                                                "max_steps": args.max_steps})
            made = traces.Trace(traces.TraceHeader(header.accept_threshold, header.backtrack_threshold,
                                                   header.max_backtracks, header.backtracking, meta),
                                live.trace.problems)
            Recording(made, collected["timings"], collected["texts"]).write(run.staging)
            write_atomically(run.staged("summary.json"), json.dumps(live.result.summary, indent=1))
            write_atomically(run.staged("scenario.resolved.yaml"), yaml.safe_dump(scn.reloadable(), sort_keys=False))
            run.publish({"command": "cosim record --simulate", "scenario": scn.name,
                         "scenario_fingerprint": scn.fingerprint(), "dataset": str(args.dataset)})
    except BaseException:
        run.discard()
        raise
    print(traces.format_table(traces.trace_statistics(made)))
    print(format_summary(live.result, f"\n{scn.name} simulated in lockstep with the models:"))
    print(f"\nwrote {folder}/trace.jsonl, the measured profiles, per_problem.csv, summary.json, manifest.json "
          f"(replay: cosim run {args.simulate} --trace {folder}/trace.jsonl)")
    return 0

"""`cosim validate [--case NAME ...] [--data PATH [--device D] [--model M]] [--out DIR]`:
every shipped validation case, or a user's own measurements, as a table on the terminal
and as validation.csv, validation.json and validation.png."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from ..errors import ConfigError
from ..outputs._atomic import writable_folder, write_atomically
from ..outputs._check import check_files
from ..validation import CASES, case_names
from .. import validation

EXAMPLE = "cosim validate --out out/validation"
DATA_EXAMPLE = ("cosim validate --data cosim/data/validation/rtxpro6000-qwen3-30b-a3b --device rtx-pro-6000 "
                "--out out/mine")


def add_parser(sub: argparse._SubParsersAction) -> None:
    cases = "\n".join(f"  {name}: {CASES[module]}" for name, module in zip(case_names(), CASES))
    p = sub.add_parser("validate", help="compare the models with measured hardware: a table of measured, predicted "
                                        "and error, and a figure",
                       description="Runs every shipped validation case (docs/validation.md) and prints case, "
                                   "quantity, measured, predicted and error (predicted / measured - 1), then each "
                                   "case's median and worst absolute error.",
                       epilog=f"Cases:\n{cases}\n\nExamples:\n  {EXAMPLE}\n  {DATA_EXAMPLE}",
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--case", action="append", choices=case_names(), help="run only this case (repeatable)")
    p.add_argument("--data", help="your own measurements instead of the shipped cases: an ML.ENERGY model JSON, or a "
                                   "bench folder of vLLM's requests.jsonl and meta.json with the model's config.json "
                                   "and an optional operator profile in profile/ (and LLMServingSim's "
                                   "llmservingsim_cluster.json, whose link then carries the GPUs' collectives "
                                   "in one more variant)")
    p.add_argument("--device", help="with --data: the GPU the measurements ran on (a built-in name or a device "
                                    "YAML; an ML.ENERGY file of H100 runs defaults to h100-sxm)")
    p.add_argument("--model", help="with --data: the model (a built-in name or a model YAML; default: the one "
                                   "the files name)")
    p.add_argument("--out", default="out/validation", help="folder for validation.csv, validation.json and "
                                                            "validation.png (default out/validation)")
    p.set_defaults(func=cmd_validate)


def cmd_validate(args: argparse.Namespace) -> int:
    folder = Path(args.out)
    # Every file it writes, checked before any case runs.
    inputs = dict(validation.inputs())
    if args.data is None:
        for flag in ("device", "model"):
            if getattr(args, flag) is not None:
                raise ConfigError(f"--{flag}: only with --data (the shipped cases name their own)")
    else:
        inputs[f"--data {args.data}"] = Path(args.data)
    paths = check_files([("--out", folder / name) for name in validation.FILES], inputs)
    writable_folder(folder, "--out")
    rows = validation.run(args.case) if args.data is None or args.case else []
    notes: list[str] = []
    if args.data is not None:
        found, notes = validation.user_rows(args.data, args.device, args.model)
        rows += [validation.check_row(r, f"--data {args.data}, row {i}") for i, r in enumerate(found)]
    print(validation.format_table(rows))
    for note in notes:
        print(f"note: {note}")
    report = {"rows": [r.as_dict() for r in rows], "summary": validation.summary(rows)}
    # All three made before any is written: a failure leaves the earlier files as they were.
    made = (validation.csv_text(rows), json.dumps(report, indent=1) + "\n", validation.figure_png(rows))
    for path, content in zip(paths, made):
        write_atomically(path, content)
    print(f"\nwrote {', '.join(map(str, paths))}")
    return 0

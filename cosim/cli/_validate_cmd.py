"""`cosim validate [--case NAME ...] [--out DIR]`: every shipped validation case, as a
table on the terminal and as validation.csv, validation.json and validation.png."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from ..outputs._atomic import writable_folder, write_atomically
from ..outputs._check import check_files
from ..validation import CASES, case_names
from .. import validation

EXAMPLE = "cosim validate --out out/validation"


def add_parser(sub: argparse._SubParsersAction) -> None:
    cases = "\n".join(f"  {name}: {CASES[module]}" for name, module in zip(case_names(), CASES))
    p = sub.add_parser("validate", help="compare the models with measured hardware: a table of measured, predicted "
                                        "and error, and a figure",
                       description="Runs every shipped validation case (docs/validation.md) and prints case, "
                                   "quantity, measured, predicted and error (predicted / measured - 1), then each "
                                   "case's median and worst absolute error.",
                       epilog=f"Cases:\n{cases}\n\nExample:\n  {EXAMPLE}",
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--case", action="append", choices=case_names(), help="run only this case (repeatable)")
    p.add_argument("--out", default="out/validation", help="folder for validation.csv, validation.json and "
                                                            "validation.png (default out/validation)")
    p.set_defaults(func=cmd_validate)


def cmd_validate(args: argparse.Namespace) -> int:
    folder = Path(args.out)
    # Every file it writes, checked before any case runs.
    paths = check_files([("--out", folder / name) for name in validation.FILES], validation.inputs())
    writable_folder(folder, "--out")
    rows = validation.run(args.case)
    print(validation.format_table(rows))
    report = {"rows": [r.as_dict() for r in rows], "summary": validation.summary(rows)}
    # All three made before any is written: a failure leaves the earlier files as they were.
    made = (validation.csv_text(rows), json.dumps(report, indent=1) + "\n", validation.figure_png(rows))
    for path, content in zip(paths, made):
        write_atomically(path, content)
    print(f"\nwrote {', '.join(map(str, paths))}")
    return 0

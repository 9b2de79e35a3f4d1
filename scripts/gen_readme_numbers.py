"""Rewrites every figure the README and the docs quote from the simulator, each between
marker comments (scripts/doc_spans.py), with what the code computes now: the report's
speedups, intervals and unresolved differences and what they depend on
(scripts/figures_report.py), the serving knees, the vLLM replay and the validation errors
(scripts/figures_serving.py), the models that span GPUs (scripts/figures_scale.py) and the
example policies' tables (scripts/figures_live.py).
tests/test_readme_numbers.py recomputes each figure and fails when a doc's text differs.

    python scripts/gen_readme_numbers.py [--check] [--only NAME ...]

Takes a few minutes on two cores: it runs the report's systems on every dataset and
config, the report's serving sweep, its one-at-a-time sensitivity (Config 1), the policies
and `cosim validate`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # the checkout's cosim, before an installed one

import figures_live  # noqa: E402  (the scripts folder is this script's own)
import figures_report  # noqa: E402
import figures_scale  # noqa: E402
import figures_serving  # noqa: E402
import figures_speculation  # noqa: E402
from doc_spans import rewrite, spans  # noqa: E402

# The files whose marked figures are generated.
DOCS = (ROOT / "README.md", ROOT / "docs" / "hardware.md", ROOT / "docs" / "live.md", ROOT / "docs" / "metrics.md",
        ROOT / "docs" / "validation.md", ROOT / "docs" / "system.md", ROOT / "docs" / "workload.md")
FIGURES: dict[str, Callable[[], str]] = {**figures_report.FIGURES, **figures_serving.FIGURES, **figures_live.FIGURES,
                                         **figures_scale.FIGURES, **figures_speculation.FIGURES}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when a doc's figure is not what the code computes")
    parser.add_argument("--only", nargs="+", metavar="NAME", help="rewrite only these figures")
    args = parser.parse_args()
    texts = {path: path.read_text() for path in DOCS}
    names = {s.name for text in texts.values() for s in spans(text)}
    unknown = sorted(names - FIGURES.keys())
    if unknown:
        sys.exit(f"no figure named {', '.join(unknown)} (scripts/gen_readme_numbers.py's FIGURES)")
    chosen = set(args.only or names)
    values: dict[str, str] = {}
    for name in sorted(names):
        values[name] = FIGURES[name]() if name in chosen else next(
            s.value for text in texts.values() for s in spans(text) if s.name == name)
        print(f"{name}: {values[name]}", flush=True)
    stale = []
    for path, text in texts.items():
        new = rewrite(text, values)
        if new != text:
            stale.append(path.relative_to(ROOT))
            if not args.check:
                path.write_text(new)
    if args.check:
        print(f"stale: {', '.join(map(str, stale))}; run python scripts/gen_readme_numbers.py" if stale
              else "up to date")
        sys.exit(1 if stale else 0)


if __name__ == "__main__":
    main()

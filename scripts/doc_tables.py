"""The part of the docs generators that is the same for each: a generated block between two
marker comments of a Markdown file, rewritten in place or checked (`--check`: exit 1 when
the file is not what the declarations write)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Callable


def between(text: str, begin: str, end: str, block: str) -> str:
    """``text`` with what lies between the markers ``begin`` and ``end`` replaced by ``block``."""
    head, rest = text.split(begin, 1)
    _, tail = rest.split(end, 1)
    return f"{head}{begin}\n{block}\n{end}{tail}"


def run(doc: Path, render: Callable[[str], str], script: str, description: str) -> None:
    """Rewrites ``doc`` as ``render(its text)`` writes it, or with --check says whether it is."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--check", action="store_true", help=f"exit 1 when {doc.name} is stale")
    args = parser.parse_args()
    text = doc.read_text() if doc.exists() else ""
    new = render(text)
    if args.check:
        print("up to date" if new == text else f"stale: run python scripts/{script}")
        sys.exit(0 if new == text else 1)
    doc.write_text(new)

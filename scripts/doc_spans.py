"""Figures quoted in Markdown, each between two marker comments that name it:
``<!-- fig:NAME -->1.20 [1.18, 1.21]<!-- /fig -->`` inline, or a block (a table) with the
markers on lines of their own. The comments do not show when the Markdown is rendered;
scripts/gen_readme_numbers.py rewrites what lies between them, and
tests/test_readme_numbers.py recomputes each figure and compares it with the text."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Mapping

MARK = re.compile(r"<!-- fig:(?P<name>[a-z0-9_]+) -->(?P<value>.*?)<!-- /fig -->", re.S)


@dataclass(frozen=True)
class Span:
    name: str
    value: str  # as shown; a block without the line breaks that put it between its markers
    line: int   # of the opening marker, from 1


def _shown(raw: str) -> str:
    """A block's text sits on lines of its own between the markers: the breaks are not its text."""
    return raw[1:-1] if raw.startswith("\n") and raw.endswith("\n") and len(raw) > 1 else raw


def spans(text: str) -> list[Span]:
    """Every marked figure of ``text``, in order."""
    return [Span(m["name"], _shown(m["value"]), text.count("\n", 0, m.start()) + 1) for m in MARK.finditer(text)]


def rewrite(text: str, values: Mapping[str, str]) -> str:
    """``text`` with each marked figure replaced by its value in ``values`` (a KeyError names
    a marker no figure answers); a value of several lines is written as a block."""
    def replace(m: re.Match[str]) -> str:
        value = values[m["name"]]
        inner = f"\n{value}\n" if "\n" in value else value
        return f"<!-- fig:{m['name']} -->{inner}<!-- /fig -->"

    return MARK.sub(replace, text)

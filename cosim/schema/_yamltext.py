"""Text a command writes into a YAML file by hand (a value, a comment) in a form that loads
back as the text given, whatever it holds: a newline, YAML's other line breaks (U+0085,
U+2028, U+2029), a quote, a '#', an unprintable character."""

from __future__ import annotations

import math

import yaml


def quoted(text: str) -> str:
    """``text`` as a YAML double-quoted scalar that loads back to it, anything that would
    end it or the line escaped."""
    return yaml.safe_dump(text, default_style='"', allow_unicode=True, width=math.inf).rstrip("\n")


def commented(text: str) -> str:
    """``text`` for a comment line: as it is when quoting would only add the quotes, else
    quoted, so that nothing in it ends the comment."""
    shown = quoted(text)
    return text if shown == f'"{text}"' else shown

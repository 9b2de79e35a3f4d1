"""Counts as the command line prints them: "1 device", "2 devices"."""

from __future__ import annotations


def noun(count: int, singular: str, plural: str | None = None) -> str:
    """``singular`` for a count of one, else its plural (``singular + "s"`` unless given)."""
    return singular if count == 1 else plural or f"{singular}s"


def counted(count: int, singular: str, plural: str | None = None) -> str:
    """``count`` and its noun: "1 problem", "3 problems"."""
    return f"{count} {noun(count, singular, plural)}"

"""How validation rows are shown: in panels of the rows drawn together, each in a unit
that keeps its numbers short. A case gives its rows in its own unit (the vLLM replay's
times in milliseconds); a panel whose largest value would need more than MAX_DIGITS
integer digits is shown in the next larger unit of the same kind (TTFT's 65,460 ms as
65.46 s), so no number in the table or on an axis runs past four digits before the
point. The CSV and JSON keep each case's own unit."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Sequence

MAX_DIGITS = 4
# A unit and the next larger one of the same kind, with how many of the first make one of it.
LARGER: dict[str, tuple[str, float]] = {"ns": ("us", 1e3), "us": ("ms", 1e3), "ms": ("s", 1e3)}
WIDE = 1000  # a case's quantities of one unit spanning more than this factor get a panel each


@dataclass(frozen=True)
class Panel:
    """Rows drawn together: their title (no other panel has it), the unit they are shown in,
    and the rows in it (converted)."""

    title: str
    unit: str
    rows: tuple[Any, ...]


def family(row: Any) -> str:
    """The case a row belongs to, its variants together (``rtx4090-vllm (profile)`` is ``rtx4090-vllm``)."""
    return row.case.split(" (")[0]


def _key(row: Any, rows: Sequence[Any]) -> tuple[str, str]:
    """(name, unit) of the panel a row is drawn in: one per case and unit, or one per
    quantity where that case's quantities of the unit span more than WIDE (TTFT against TPOT)."""
    same = [s for s in rows if family(s) == family(row) and s.unit == row.unit]
    values = [v for s in same for v in (s.measured, s.predicted)]
    wide = max(values) / min(values) > WIDE
    return (f"{family(row)}: {row.quantity.split()[0]}" if wide else family(row)), row.unit


def readable_unit(unit: str, largest: float) -> tuple[str, float]:
    """The unit to show values up to ``largest`` (given in ``unit``) in, and the factor to divide
    them by: ``unit`` moved up while the largest value has more than MAX_DIGITS integer digits."""
    factor = 1.0
    while largest / factor >= 10 ** MAX_DIGITS and unit in LARGER:
        unit, step = LARGER[unit]
        factor *= step
    return unit, factor


def _converted(rows: Sequence[Any]) -> tuple[list[Any], list[tuple[str, str]]]:
    """Every row in the unit its group is shown in, and the panel (name, unit) each is drawn in."""
    groups: dict[tuple[str, str], list[int]] = {}
    for i, row in enumerate(rows):
        groups.setdefault(_key(row, rows), []).append(i)
    out: list[Any] = list(rows)
    where: list[tuple[str, str]] = [("", "")] * len(rows)
    for (name, unit), members in groups.items():
        unit_shown, factor = readable_unit(unit, max(max(rows[i].measured, rows[i].predicted) for i in members))
        for i in members:
            r = rows[i]
            out[i] = replace(r, unit=unit_shown, measured=r.measured / factor, predicted=r.predicted / factor)
            where[i] = (name, unit_shown)
    return out, where


def shown(rows: Sequence[Any]) -> list[Any]:
    """``rows`` in their order, each in the unit its panel is shown in."""
    return _converted(rows)[0]


def panels(rows: Sequence[Any]) -> list[Panel]:
    """The rows as drawn, panel by panel in the order they first appear, in their units. A
    case drawn in several units names the unit in each title, so no two titles are the same."""
    converted, where = _converted(rows)
    grouped: dict[tuple[str, str], list[Any]] = {}
    for row, key in zip(converted, where):
        grouped.setdefault(key, []).append(row)
    names = [name for name, _ in grouped]
    return [Panel(name if names.count(name) == 1 else f"{name} ({unit})", unit, tuple(members))
            for (name, unit), members in grouped.items()]

"""Labels in a column beside a panel, each at the height of what it names where it can be
and never overlapping another: the rule is a stack. Sorted by the height each wants, every
label sits at least one label's height above the one below it (pushed up where two want
the same place); if the column then runs past the top, it is pushed back down from the
top, keeping that spacing. A thin leader joins each label to the height it names."""

from __future__ import annotations

from typing import Any, Sequence


def stack(wanted: Sequence[float], height: float, low: float, high: float) -> list[float]:
    """Centres for labels of ``height`` as near to ``wanted`` as the rule allows, within
    [low + height / 2, high - height / 2] when they fit there; any two are at least
    ``height`` apart whether they fit or not."""
    order = sorted(range(len(wanted)), key=lambda i: wanted[i])
    placed = [0.0] * len(wanted)
    below = low - height / 2  # the centre of an imagined label just under the column
    for i in order:
        below = placed[i] = max(wanted[i], below + height)
    above = high + height / 2
    for i in reversed(order):
        above = placed[i] = min(placed[i], above - height)
    return placed


def column(ax: Any, rows: Sequence[tuple[float, str]], *, x: float = 1.02, fontsize: float = 8,
           gid: str = "label", color: str = "0.25") -> list[Any]:
    """Writes each (y in data units, text) of ``rows`` in a column just right of ``ax``,
    stacked so that no two overlap, with a leader from the axes' edge at y to its label.
    Call it once the figure's layout is final: the spacing is worked out in the axes'
    own fraction of its height as drawn."""
    fig = ax.figure
    renderer = fig.canvas.get_renderer()
    texts = [ax.text(x, 0.5, text, transform=ax.transAxes, fontsize=fontsize, va="center", ha="left", color=color,
                     gid=gid, clip_on=False) for _, text in rows]
    if not texts:
        return texts
    # The tallest label's height (with a tenth more as a gap), as a fraction of the axes' height.
    height = 1.1 * max(t.get_window_extent(renderer).height for t in texts) / ax.get_window_extent(renderer).height
    to_axes = ax.transData + ax.transAxes.inverted()
    wanted = [to_axes.transform((0, y))[1] for y, _ in rows]
    for text, want, at in zip(texts, wanted, stack(wanted, height, 0.0, 1.0)):
        text.set_y(at)
        ax.plot([1.0, x - 0.005], [want, at], transform=ax.transAxes, color="0.6", linewidth=0.6, clip_on=False)
    return texts

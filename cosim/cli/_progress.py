"""The progress bar of a command whose run reports how many items are finished."""

from __future__ import annotations

from typing import Any, Callable

from tqdm import tqdm


def finished_bar(total: int, desc: str, unit: str, quiet: bool) -> tuple[Any, Callable[[int], None]]:
    """A bar of ``total`` items (hidden with ``quiet``; it leaves no line when closed) and
    the callback that sets it to the number finished so far."""
    bar = tqdm(total=total, desc=desc, unit=unit, disable=quiet, leave=False)

    def progress(done: int) -> None:
        bar.n = done
        bar.refresh()

    return bar, progress

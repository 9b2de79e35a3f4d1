"""A sequence whose items are made when read (problems drawn or parsed, rows and
activities built from columns), so that what backs it can stay compact."""

from __future__ import annotations

import operator
from collections.abc import Iterator, Sequence
from typing import Any


class LazySequence(Sequence):
    """Subclasses give ``__len__`` and ``_item(i)`` (and may give a faster
    ``__iter__``). Indexing takes ints (negative from the end) and slices (a list);
    it compares equal to any sequence of equal items, and ``+`` joins into a list."""

    def _item(self, index: int) -> Any:
        raise NotImplementedError

    def __getitem__(self, index: Any) -> Any:
        n = len(self)
        if isinstance(index, slice):
            return [self._item(i) for i in range(*index.indices(n))]
        index = operator.index(index)  # ints, numpy integers, bools (as a list takes them)
        if index < 0:
            index += n
        if not 0 <= index < n:
            raise IndexError(f"index {index} of {n}")
        return self._item(index)

    def __iter__(self) -> Iterator[Any]:
        for i in range(len(self)):
            yield self._item(i)

    def __eq__(self, other: object) -> bool:
        # As a list compares: with lists (and other lazy sequences), not with tuples.
        if not isinstance(other, (list, LazySequence)):
            return NotImplemented
        return len(other) == len(self) and all(a == b for a, b in zip(self, other))

    __hash__ = None  # type: ignore[assignment]  # equal to lists, so unhashable like them

    def __add__(self, other: Any) -> list:
        return list(self) + list(other)

    def __radd__(self, other: Any) -> list:
        return list(other) + list(self)

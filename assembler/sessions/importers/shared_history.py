"""A request's history without a copy per request, and requests written as what they share
with the request before.

A transcript's request k sends the history of request k − 1 plus what came since: copied
per request, a 4,000-turn transcript would hold some 64 million item references and build a
block for each. Instead a reader hands each request a :class:`History`, the first ``n``
items of the list it keeps appending to, and :class:`SharedWriter` writes each request as
``keep`` (the blocks it shares with the one before, found by comparing items, not blocks)
plus blocks for the rest only: work and memory in proportion to the transcript."""

from __future__ import annotations

import weakref
from bisect import bisect_left
from collections.abc import Iterator, Sequence
from typing import Any, overload

from assembler.sessions.importers.history import Item, same_but_marker

Block = dict[str, Any]


class History(Sequence[Item]):
    """The first ``length`` items of ``items``, a list its reader only appends to past every
    view it handed out (:meth:`HistoryList.insert` detaches the views it would change)."""

    __slots__ = ("__weakref__", "_items", "_length")

    def __init__(self, items: list[Item], length: int | None = None) -> None:
        self._items = items
        self._length = len(items) if length is None else length

    def __len__(self) -> int:
        return self._length

    @overload
    def __getitem__(self, k: int) -> Item: ...
    @overload
    def __getitem__(self, k: slice) -> list[Item]: ...
    def __getitem__(self, k: int | slice) -> Item | list[Item]:
        if isinstance(k, slice):
            start, stop, step = k.indices(self._length)
            return self._items[start:stop:step]
        if k < 0:
            k += self._length
        if not 0 <= k < self._length:
            raise IndexError("history index out of range")
        return self._items[k]

    def __iter__(self) -> Iterator[Item]:
        items, n = self._items, self._length
        return iter(items) if n == len(items) else iter(items[:n])

    def __eq__(self, other: object) -> bool:
        if isinstance(other, History):
            return self.as_list() == other.as_list()
        if isinstance(other, list):
            return self.as_list() == other
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"History({self.as_list()!r})"

    def as_list(self) -> list[Item]:
        """The items as a list of their own (a copy unless the view is the whole list)."""
        return self._items[: self._length]

    def shares(self, items: list[Item]) -> bool:
        return self._items is items

    def detach(self) -> None:
        """Keep a copy of its own: its list is about to change within the view."""
        self._items = self._items[: self._length]

    def extend(self, more: Sequence[Item]) -> None:
        """Add ``more`` after the view: only a longer view when its list holds them next (the
        view handed out last, of a list only appended to), else a list of its own."""
        end = self._length + len(more)
        nxt = self._items[self._length : end]
        if len(nxt) == len(more) and all(a is b for a, b in zip(nxt, more, strict=True)):
            self._length = end
        else:
            self._items = [*self._items[: self._length], *more]
            self._length = len(self._items)


class HistoryList(list[Item]):
    """A reader's history as it grows; :meth:`view` hands out a request's history without a
    copy, and an insertion inside a view handed out gives that view its own copy first."""

    def __init__(self, items: Sequence[Item] = ()) -> None:
        super().__init__(items)
        # Longest last: the list only grows between views. Weak: a view holds its list, and
        # a list holding its views back would make a cycle that keeps a whole transcript's
        # items until the cyclic collector runs (measured: a worker of `usage` grew from
        # 170 to 350 MB over 250 sessions).
        self._views: list[weakref.ref[History]] = []

    def view(self) -> History:
        v = History(self)
        self._views.append(weakref.ref(v))
        return v

    def insert(self, k: int, item: Item) -> None:  # type: ignore[override]
        if k < 0:
            k = max(0, len(self) + k)
        while self._views:
            v = self._views[-1]()
            if v is not None and len(v) <= k:
                break
            self._views.pop()
            if v is not None:
                v.detach()
        super().insert(k, item)


def last_index(history: Sequence[Item], item: Item) -> int | None:
    """Where ``item`` (that object) stands in ``history``, searched from the end: a marked
    item is one of the last few."""
    for k in range(len(history) - 1, -1, -1):
        if history[k] is item:
            return k
    return None


def continues_exactly(later: Sequence[Item], earlier: Sequence[Item]) -> bool:
    """Whether ``later`` is known to begin with all of ``earlier`` without comparing items:
    two views of one list."""
    return (
        isinstance(later, History)
        and isinstance(earlier, History)
        and later._items is earlier._items
        and len(later) >= len(earlier)
    )


def insert_before(histories: list[Sequence[Item]], extra: dict[int, Item]) -> list[Sequence[Item]]:
    """Each history with ``extra[id(item)]`` placed before ``item``: views of one list share
    one rewritten list (each view as long as its items and the ones placed among them)."""
    rewritten: dict[int, tuple[list[Item], list[int]]] = {}
    out: list[Sequence[Item]] = []
    for h in histories:
        if not isinstance(h, History):
            out.append([x for i in h for x in ((extra[id(i)], i) if id(i) in extra else (i,))])
            continue
        got = rewritten.get(id(h._items))
        if got is None:
            items, at = [], []
            for k, i in enumerate(h._items):
                if id(i) in extra:
                    items.append(extra[id(i)])
                    at.append(k)
                items.append(i)
            got = rewritten[id(h._items)] = (items, at)
        items, at = got
        out.append(History(items, len(h) + bisect_left(at, len(h))))
    return out


def common_items(a: Sequence[Item], b: Sequence[Item]) -> int:
    """How many items ``a`` and ``b`` begin with in common: at once for two views of one
    list, else by comparing list slices (identity first, in C), halving to the first
    difference."""
    n = min(len(a), len(b))
    if isinstance(a, History) and isinstance(b, History) and a._items is b._items:
        return n
    la = a[:n] if isinstance(a, History) else list(a[:n])
    lb = b[:n] if isinstance(b, History) else list(b[:n])
    if la == lb:
        return n
    lo, hi = 0, n  # la[:lo] == lb[:lo]; la[:hi] != lb[:hi]
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if la[:mid] == lb[:mid]:
            lo = mid
        else:
            hi = mid
    return lo


class SharedWriter:
    """Writes each request as ``{"keep": n, "blocks": [...]}`` against the one written before
    it, as ``history.compact_requests`` would from the full block lists, without building
    them: a request is its head blocks (the few an importer lays out before the history),
    its history items, and ``marker``, the index among all its blocks of the one that
    carries the tail cache marker (None: no marker beyond the head's own)."""

    def __init__(self) -> None:
        self._head: list[Block] = []
        self._items: Sequence[Item] = ()
        self._first = True

    def request(
        self, head: list[Block], items: Sequence[Item], marker: int | None = None
    ) -> dict[str, Any]:
        keep = 0 if self._first else self._kept(head, items)
        self._first = False
        self._head, self._items = head, items
        h = len(head)
        blocks = [dict(b) for b in head[keep:]]
        blocks += [items[k].block(k) for k in range(max(0, keep - h), len(items))]
        if marker is not None and marker >= keep:
            blocks[marker - keep]["breakpoint"] = True
        if not keep:
            return {"blocks": blocks}
        out: dict[str, Any] = {"keep": keep, "blocks": blocks}
        marks = [k for k in range(min(keep, h)) if head[k].get("breakpoint")]
        if marker is not None and marker < keep and marker not in marks:
            marks = sorted([*marks, marker])
        if marks:
            out["breakpoints"] = marks
        hour = [k for k in marks if k < h and head[k].get("ttl") == "1h"]
        if hour:
            out["breakpoints_1h"] = hour
        return out

    def _block(self, head: list[Block], items: Sequence[Item], k: int) -> Block:
        return head[k] if k < len(head) else items[k - len(head)].block(k - len(head))

    def _kept(self, head: list[Block], items: Sequence[Item]) -> int:
        """How many blocks the request begins with that the one before began with too
        (markers aside): the heads block by block, the histories by their items."""
        before, h = self._head, len(head)
        k = 0
        while k < min(len(before), h) and same_but_marker(before[k], head[k]):
            k += 1
        if k == len(before) == h:
            k += common_items(self._items, items)
        limit = min(len(before) + len(self._items), h + len(items))
        # past the items in common, compare blocks: items may differ in what a block does
        # not show (a tool call's id)
        while k < limit and same_but_marker(
            self._block(before, self._items, k), self._block(head, items, k)
        ):
            k += 1
        return k

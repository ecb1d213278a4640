"""Sizes from the bill, for every transcript importer. A request's billed input (read +
written + uncached) is known exactly; the transcript's text is counted with a stand-in
tokenizer. ``ScaleFit`` fits one factor per model from the billed growth of consecutive
requests; ``Sizer`` counts an item as the analysis will (its lines, times the factor);
``infer_hidden`` gives the blocks without text the billed growth the others leave
unexplained."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from assembler.sessions.importers.history import SIDE_CALL, Item, Request, TokenCount
from assembler.sessions.importers.records import total_input

# below this many counted tokens of growth a fit says little: the factor stays 1
_FIT_MINIMUM = 2_000


@dataclass
class Sizer:
    """Each history item's size on a model, as the analysis will count it: its text cut in
    lines, each line counted, the sum times the model's factor, rounded (a block without
    text: its declared size)."""

    count: TokenCount
    scales: Mapping[str, float] = field(default_factory=dict)
    _lines: dict[int, int] = field(default_factory=dict)  # id(item) → its counted tokens

    def counted(self, item: Item) -> int:
        n = self._lines.get(id(item))
        if n is None:
            n = self._lines[id(item)] = sum(map(self.count, item.text.splitlines(keepends=True)))
        return n

    def size(self, item: Item, model: str) -> int:
        if item.hidden is not None:
            return item.hidden.tokens
        return round(self.counted(item) * self.scales.get(model, 1.0))


def continues(later: Request, earlier: Request) -> bool:
    """Whether ``later`` is ``earlier``'s history plus what came after (same thread)."""
    n = len(earlier.history)
    return (
        later.thread == earlier.thread
        and len(later.history) >= n
        and (n == 0 or later.history[n - 1] is earlier.history[n - 1])
    )


def billed_pairs(requests: list[Request]) -> list[tuple[Request, Request]]:
    """(earlier, later) for each request with a bill that continues the one before it in its
    conversation (the /compact call, a side request, tells nothing of the next one)."""
    out: list[tuple[Request, Request]] = []
    before: Request | None = None
    for r in requests:
        if r.usage is None or r.label == SIDE_CALL:
            continue
        if before is not None and continues(r, before):
            out.append((before, r))
        before = r
    return out


@dataclass
class ScaleFit:
    """Per model, billed growth against counted growth of each pair of consecutive requests
    seen so far (as ``(ratio, counted tokens)``)."""

    pairs: dict[str, list[tuple[float, int]]] = field(default_factory=dict)

    def add(self, requests: list[Request], sizer: Sizer) -> None:
        """Each pair of consecutive requests of one conversation on one model whose new
        items all have text: what the bill grew by against what the counter counts."""
        for before, r in billed_pairs(requests):
            added = r.history[len(before.history) :]
            if before.model != r.model or not added or any(i.hidden is not None for i in added):
                continue
            assert r.usage is not None and before.usage is not None
            grew = total_input(r.usage) - total_input(before.usage)
            self.add_pair(r.model, grew, sum(map(sizer.counted, added)))

    def add_pair(self, model: str, billed: int, counted: int) -> None:
        """One observation of ``model``: ``billed`` tokens where the counter counts ``counted``
        (the growth of a transcript's request, or a live request's whole input)."""
        if billed > 0 and counted > 0:
            self.pairs.setdefault(model, []).append((billed / counted, counted))

    def scales(self) -> dict[str, float]:
        """Per model, the median of billed over counted growth, each pair weighted by its
        counted tokens, rounded to 3 places (none when the growth seen is too little to
        tell). The median, not the ratio of the sums: where the client sent more than the
        transcript shows, the pair's ratio is off the scale, and the bill's difference
        gets a block of its own (``settle``)."""
        out: dict[str, float] = {}
        for model, pairs in self.pairs.items():
            total = sum(n for _, n in pairs)
            if total < _FIT_MINIMUM:
                continue
            seen = 0
            for ratio, n in sorted(pairs):
                seen += n
                if 2 * seen >= total:
                    out[model] = round(min(10.0, max(0.1, ratio)), 3)
                    break
        return out


def infer_hidden(requests: list[Request], sizer: Sizer) -> None:
    """Size the blocks whose text a transcript lacks from the billed growth.

    Between two consecutive requests of one conversation, ``total(later) −
    total(earlier)`` is what was added: the visible new blocks, counted (times the
    model's factor), plus the hidden ones, split evenly. Thinking stays in the history it
    was sent in: on the real transcripts we measured, the billed total never shrank."""
    for before, r in billed_pairs(requests):
        added = r.history[len(before.history) :]
        unknown = [i.hidden for i in added if i.hidden is not None and not i.hidden.sized]
        if not unknown:
            continue
        assert r.usage is not None and before.usage is not None
        known = sum(sizer.size(i, r.model) for i in added if i.hidden is None or i.hidden.sized)
        rest = total_input(r.usage) - total_input(before.usage) - known
        for h in unknown:
            h.tokens = max(0, rest) // len(unknown)

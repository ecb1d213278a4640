"""Sizes from the bill. A request's billed input (read + written + uncached) is known
exactly; the transcript's text is counted with a stand-in tokenizer and does not hold
everything the client sent. So: one factor per model fits the counted sizes to the bill
(``ScaleFit``, applied to every recorded block of the session, so a block keeps its size
from request to request); the blocks without text take the billed growth they leave
unexplained (``infer_hidden``); the first request of each conversation sizes what the
transcript never shows (system prompt, tools, prepended context); and where a later
request's bill holds more than its blocks, the difference becomes a block of its own
(``settle``): formatting the factor misses, content the transcript does not keep."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from assembler.sessions.importers.claude_code.transcript import Conversation, Transcript
from assembler.sessions.importers.hidden import Hidden
from assembler.sessions.importers.history import SIDE_CALL, Item, Request, TokenCount
from assembler.sessions.importers.records import total_input

# below this many counted tokens of growth a fit says little: the factor stays 1
_FIT_MINIMUM = 2_000
# a request whose bill holds at least this many tokens more than its blocks gets a block for
# them; less stays a residual (a few blocks' formatting the factor does not cover)
SHORTFALL_MINIMUM = 256
SHORTFALL_TEXT = (
    "[not in the transcript: what the bill counts here beyond the recorded blocks "
    "(their formatting, content the client sent that the transcript does not keep)]"
)


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


def _pairs(requests: list[Request]) -> list[tuple[Request, Request]]:
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
        for before, r in _pairs(requests):
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
    for before, r in _pairs(requests):
        added = r.history[len(before.history) :]
        unknown = [i.hidden for i in added if i.hidden is not None and not i.hidden.sized]
        if not unknown:
            continue
        assert r.usage is not None and before.usage is not None
        known = sum(sizer.size(i, r.model) for i in added if i.hidden is None or i.hidden.sized)
        rest = total_input(r.usage) - total_input(before.usage) - known
        for h in unknown:
            h.tokens = max(0, rest) // len(unknown)


def quiet_notifications(t: Transcript) -> None:
    """A task notification makes the client re-send the conversation rewritten (the bill
    reads the system prompt alone), or not (it reads all the previous request left cached);
    which one the transcript does not say, so the bill decides: where it read at least
    what the request before it left cached, the conversation goes on unchanged."""
    quiet = 0
    before: Request | None = None
    for r in t.requests:
        if (r.label or "").startswith("task-notification") and r.usage and before:
            left = before.usage["cache_read"] + before.usage["cache_write"] if before.usage else 0
            if left and r.usage["cache_read"] >= left - max(128, left // 200):
                quiet += 1
        r.rewrites -= quiet
        if r.label != SIDE_CALL:
            before = r


def settle(t: Transcript, sizer: Sizer, minimum: int = SHORTFALL_MINIMUM) -> None:
    """Each request's conversation (``t.conversations``) and, where a bill holds more than
    the blocks by ``minimum`` or more, a block for the difference before the item that
    carries the request's tail marker (before the run of tool results it ends), in that
    request and every later one that sends it.

    A conversation is one first message on one model, not rewritten since: its first
    billed request sizes what its blocks do not hold (system prompt, tools, prepended
    context, after a compaction the files and hook output the client restores), and the
    later ones keep that size, so a prefix read stays a prefix."""
    bases: dict[tuple[int, int, str], int] = {}
    roots: dict[int, int] = {}  # id(first item) → how many first messages came before it
    shortfalls: dict[int, Item] = {}  # id(marked item) → the shortfall block sent before it
    last: Request | None = None
    held_last = 0  # the tokens ``last``'s blocks hold, its shortfall included
    unrecorded = 0
    for r in t.requests:
        root = id(r.history[0]) if r.history else 0
        restarts = roots.setdefault(root, len(roots))
        key = (root, r.rewrites, r.model)
        if r.usage is None:
            t.conversations[id(r)] = Conversation(bases.get(key, unrecorded), restarts)
            continue
        side = r.label == SIDE_CALL
        if last is not None and not side and last.model == r.model and continues(r, last):
            held = held_last + sum(sizer.size(i, r.model) for i in r.history[len(last.history) :])
        else:
            held = sum(sizer.size(i, r.model) for i in r.history) + sum(
                _tokens(shortfalls[id(i)]) for i in r.history if id(i) in shortfalls
            )
        billed = total_input(r.usage)
        base = bases.get(key)
        if base is None:
            base = bases[key] = max(0, billed - held)
        elif (short := billed - base - held) >= minimum and r.history:
            marked = _run_start(r.history, r.marker or r.history[-1])
            if id(marked) not in shortfalls:
                shortfalls[id(marked)] = Item(
                    "user", "unrecorded", SHORTFALL_TEXT, hidden=_sized(short)
                )
                held += short
        unrecorded = base
        t.conversations[id(r)] = Conversation(base, restarts)
        if not side:
            last, held_last = r, held
    if shortfalls:
        for r in t.requests:
            r.history = [
                x
                for i in r.history
                for x in ((shortfalls[id(i)], i) if id(i) in shortfalls else (i,))
            ]


def _run_start(history: list[Item], marked: Item) -> Item:
    """The first of the tool results in a row that end with ``marked`` (``marked`` itself
    when it is none): a block placed before it leaves the run one lookback position."""
    k = next(k for k, i in enumerate(history) if i is marked)
    while k and marked.kind == "tool_result" and history[k - 1].kind == "tool_result":
        k -= 1
    return history[k]


def _tokens(item: Item) -> int:
    return item.hidden.tokens if item.hidden is not None else 0


def _sized(tokens: int) -> Hidden:
    return Hidden(tokens, "the bill's input beyond the recorded blocks", sized=True)

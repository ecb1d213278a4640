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

from collections.abc import Sequence

from assembler.sessions.importers.claude_code.transcript import Conversation, Transcript
from assembler.sessions.importers.hidden import Hidden
from assembler.sessions.importers.history import SIDE_CALL, Item, Request
from assembler.sessions.importers.records import total_input
from assembler.sessions.importers.shared_history import insert_before, last_index
from assembler.sessions.importers.sizing import Sizer, continues

# a request whose bill holds at least this many tokens more than its blocks gets a block for
# them; less stays a residual (a few blocks' formatting the factor does not cover)
SHORTFALL_MINIMUM = 256
SHORTFALL_TEXT = (
    "[not in the transcript: what the bill counts here beyond the recorded blocks "
    "(their formatting, content the client sent that the transcript does not keep)]"
)


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
        histories = insert_before([r.history for r in t.requests], shortfalls)
        for r, history in zip(t.requests, histories, strict=True):
            r.history = history


def _run_start(history: Sequence[Item], marked: Item) -> Item:
    """The first of the tool results in a row that end with ``marked`` (``marked`` itself
    when it is none): a block placed before it leaves the run one lookback position."""
    k = last_index(history, marked)
    assert k is not None  # the marked item is one of the history's
    while k and marked.kind == "tool_result" and history[k - 1].kind == "tool_result":
        k -= 1
    return history[k]


def _tokens(item: Item) -> int:
    return item.hidden.tokens if item.hidden is not None else 0


def _sized(tokens: int) -> Hidden:
    return Hidden(tokens, "the bill's input beyond the recorded blocks", sized=True)

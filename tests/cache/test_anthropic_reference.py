"""The Anthropic simulator against a plain reference written from the rules.

The reference keys every prefix afresh by the blocks' own contents, walks each
breakpoint's lookback block by block and keeps its entries in a dict; the
simulator reuses what the previous request shared with this one and keeps
running figures for speed. On random request sequences (a history growing and
rewritten at its tail, runs of tool blocks, 5m and 1h marks, more than four
markers, changed settings, parallel requests, idle gaps around both lifetimes,
two models on one simulator) both must give the very same result.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from itertools import accumulate, combinations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from assembler.cache.anthropic import AnthropicSimulator
from assembler.cache.rules import anthropic_minimum, invalidation_level, parse_duration, rules
from assembler.cache.segmenter import Segmenter
from assembler.cache.settings_salt import changed_settings
from assembler.cache.simulation import CacheResult, block_states
from assembler.cache.store import CacheStore
from assembler.cache.tokenizers import counter
from assembler.design.layers import Layer, Placement
from assembler.design.wire import WireBlock
from assembler.sessions.model import RequestSettings

T0 = datetime(2026, 5, 4, 8, 0, tzinfo=UTC)
LEVELS = ("tools", "system", "messages")
SETTING_NAMES = tuple(f.name for f in dataclasses.fields(RequestSettings))


@dataclass
class _Entry:
    expires: float
    ready: float


class Reference:
    """Anthropic's rules, one step at a time, with nothing carried between requests
    but the entries and the previous request's settings."""

    def __init__(self, ttl: str | None = None, automatic: bool = False) -> None:
        r = rules()["anthropic"]
        self.ttl = ttl or r["ttl"]["default"]
        self.allowed = r["ttl"]["allowed"]
        self.lookback = int(r["lookback"]["value"])
        self.runs = set(r["lookback"]["runs_count_as_one"])
        self.max_breakpoints = int(r["max_breakpoints"]["value"])
        self.first_response_after = parse_duration(
            r["availability"]["first_response_after"]
        ).total_seconds()
        self.automatic = automatic
        self.segmenter = Segmenter(counter("o200k_base"))
        self.entries: dict[tuple[object, ...], _Entry] = {}
        self.settings: RequestSettings | None = None

    def seconds(self, ttl: str) -> float:
        return parse_duration(self.allowed[ttl]).total_seconds()

    def level_values(self, settings: RequestSettings | None, level: str) -> tuple[object, ...]:
        """The recorded settings that invalidate ``level``: part of the key from its first block."""
        if settings is None:
            return ()
        return tuple(
            (name, getattr(settings, name))
            for name in SETTING_NAMES
            if invalidation_level(name) == level and getattr(settings, name) is not None
        )

    def keys(
        self, blocks: Sequence[WireBlock], model: str, settings: RequestSettings | None
    ) -> tuple[list[tuple[object, ...]], list[int]]:
        """The key of the prefix ending at each block (model, settings of each level
        entered, every block's section and content) and its tokens."""
        keys: list[tuple[object, ...]] = []
        tokens: list[int] = []
        path: tuple[object, ...] = (model, self.level_values(settings, "tools"))
        section = "tools"
        for b in blocks:
            if b.section != section:
                section = b.section
                path += (self.level_values(settings, section),)
            if b.declared_tokens is not None:
                n, content = b.declared_tokens, ("declared", b.text, b.declared_tokens)
            else:
                n, content = self.segmenter.tokens(b.name, b.text), ("text", b.text)
            path += ((b.section, content),)
            keys.append(path)
            tokens.append(n)
        return keys, tokens

    def kind(self, b: WireBlock) -> str:
        parts = b.name.split(" ", 2)
        return parts[1] if len(parts) > 1 and parts[0].startswith("messages[") else ""

    def window(self, blocks: Sequence[WireBlock], mark: int) -> int:
        """The first block inside ``mark``'s lookback: 20 positions, a run of tool_use
        (or of tool_result) blocks being one."""
        positions, i = 1, mark
        while i > 0:
            kind, before = self.kind(blocks[i]), self.kind(blocks[i - 1])
            if not (before == kind and kind in self.runs):
                positions += 1
                if positions > self.lookback:
                    break
            i -= 1
        return i

    def state(self, key: tuple[object, ...], now: float) -> str:
        e = self.entries.get(key)
        if e is None:
            return "missing"
        if e.expires <= now:
            return "expired"
        return "pending" if e.ready >= now else "alive"

    def put(self, key: tuple[object, ...], now: float, seconds: float, ready: float) -> None:
        e = self.entries.get(key)
        if e is not None and e.expires > now:
            e.expires = now + seconds  # a hit refreshes; readable as before
        else:
            self.entries[key] = _Entry(now + seconds, ready)

    def request(
        self,
        blocks: Sequence[WireBlock],
        model: str,
        at: datetime,
        settings: RequestSettings | None,
        ttl: str | None,
    ) -> CacheResult:
        default = ttl or self.ttl
        changes = changed_settings(self.settings, settings, invalidation_level)
        self.settings = settings
        keys, tokens = self.keys(blocks, model, settings)
        cum = list(accumulate(tokens))
        now = at.timestamp()
        started = settings.response_started if settings is not None else None
        ready = started.timestamp() if started is not None else now + self.first_response_after
        explicit = [i for i, b in enumerate(blocks) if b.breakpoint is not None]
        marks = list(explicit)
        cacheable = [i for i, b in enumerate(blocks) if b.cacheable]
        if self.automatic and len(marks) < self.max_breakpoints and cacheable:
            marks = sorted(set(marks) | {cacheable[-1]})
        marks = marks[: self.max_breakpoints]
        eligible = [m for m in marks if cum[m] >= anthropic_minimum(model)]
        life = {m: blocks[m].ttl or default for m in eligible}
        hit, hit_life, expired_at, pending_at, beyond = -1, default, -1, -1, -1
        for mark in eligible:
            start = self.window(blocks, mark)
            found = False
            for pos in range(mark, start - 1, -1):
                state = self.state(keys[pos], now)
                if state == "alive":
                    if pos > hit:
                        hit, hit_life = pos, life[mark]
                    found = True
                    break
                if state == "expired":
                    expired_at = max(expired_at, pos)
                if state == "pending":
                    pending_at = max(pending_at, pos)
            if not found:  # an alive entry before the lookback, past the longest hit so far
                for pos in range(start - 1, hit, -1):
                    if self.state(keys[pos], now) == "alive":
                        beyond = max(beyond, pos)
                        break
        read = cum[hit] if hit >= 0 else 0
        if hit >= 0:
            self.put(keys[hit], now, self.seconds(hit_life), now)
        last_written = last_hour = hit
        for mark in eligible:
            if mark > hit or self.state(keys[mark], now) == "alive":
                self.put(keys[mark], now, self.seconds(life[mark]), ready)
            if mark > hit:
                last_written = mark
                if life[mark] == "1h":
                    last_hour = mark
        write = cum[last_written] - read if last_written > hit else 0
        write_1h = cum[last_hour] - read if last_hour > hit else 0
        states, full = reference_states(tokens, read, write)
        cause = None
        if beyond > hit:
            cause = "lookback_exceeded"
        elif pending_at > hit:
            cause = "concurrent_cold_write"
        elif changes:
            cause = "setting_changed"
        notes: tuple[str, ...] = ()
        if self.automatic and len(explicit) >= self.max_breakpoints:
            notes = ("automatic caching found all 4 breakpoint slots taken by explicit markers",)
        lifetimes = [blocks[m].ttl or default for m in explicit]
        if any(a == "5m" and b == "1h" for a, b in combinations(lifetimes, 2)):
            notes += (
                "a 1h cache_control marker after a 5m one: the Messages API rejects the "
                "request (1-hour entries must come first); simulated as marked",
            )
        if len(explicit) > self.max_breakpoints:
            notes += (
                f"{len(explicit)} cache_control markers: the Messages API accepts at most "
                f"{self.max_breakpoints} and rejects the request; simulated with the first "
                f"{self.max_breakpoints}",
            )
        return CacheResult(
            total=cum[-1] if cum else 0,
            read=read,
            write=write,
            block_tokens=tuple(tokens),
            block_cache=states,
            expired=expired_at > hit,
            below_minimum=bool(marks) and not eligible,
            cached_blocks=full,
            notes=notes,
            cause=cause,
            setting_changes=changes,
            write_1h=write_1h,
        )


def reference_states(tokens: Sequence[int], read: int, write: int) -> tuple[tuple[str, ...], int]:
    """Block by block: read if it lies inside the read prefix (a block of no tokens
    only if it starts inside it), write if it starts inside the written part."""
    states: list[str] = []
    start = full = 0
    for n in tokens:
        end = start + n
        if end <= read and (n > 0 or start < read):
            states.append("read")
            full += 1
        elif start < read + write:
            states.append("write")
        else:
            states.append("uncached")
        start = end
    return tuple(states), full


# --- random request sequences ---------------------------------------------------------------

KINDS = ["text", "text", "tool_use", "tool_result"]
GAPS = [0, 0.2, 1, 30, 299, 301, 3599, 3601]
SETTINGS = [
    None,
    RequestSettings(),
    RequestSettings(tool_choice="auto"),
    RequestSettings(tool_choice="any"),
    RequestSettings(web_search=True),
    RequestSettings(speed="fast"),
    RequestSettings(thinking="enabled:2048", effort="high"),
    RequestSettings(response_started=T0),  # replaced by the step's own start + 1.5 s
]
MODELS = ("claude-sonnet-4-5", "claude-opus-4-7")


@dataclass(frozen=True)
class Step:
    """One request of a random sequence."""

    grow: list[str]  # the kinds of the message blocks appended
    drop: int  # trailing messages dropped
    rewrite: int  # trailing messages rewritten, as new objects
    same_text: bool  # … with their old text
    system_change: bool  # a system block changes
    # None: marks on the tools, the last system block and the last message; else
    # block positions (modulo the count), each with its own lifetime
    marks: list[tuple[int, str | None]] | None
    last_ttl: str | None  # the lifetime of the mark on the last message
    settings: int  # an index into SETTINGS; -1: the previous request's
    gap: float  # seconds since the previous request
    model: int
    write_ttl: str | None  # the request's own write lifetime (a recorded bill)
    resend: int  # > 0: the previous request's blocks less that many at the end, as they were


# a few blocks; runs of text blocks around the lookback's 20 positions; long runs
# of tool_use then tool_result blocks (two positions); a random mix
GROW = st.one_of(
    st.lists(st.sampled_from(KINDS), max_size=4),
    st.lists(st.sampled_from(KINDS), max_size=4),
    st.integers(17, 21).map(lambda n: ["text"] * n),
    st.tuples(st.integers(1, 25), st.integers(1, 25)).map(
        lambda n: ["tool_use"] * n[0] + ["tool_result"] * n[1]
    ),
    st.lists(st.sampled_from(KINDS), min_size=15, max_size=30),
)
STEP = st.builds(
    Step,
    grow=GROW,
    drop=st.sampled_from([0, 0, 0, 1, 2]),
    rewrite=st.sampled_from([0, 0, 0, 1, 2, 3]),
    same_text=st.booleans(),
    system_change=st.sampled_from([False, False, False, True]),
    marks=st.one_of(
        st.none(),
        st.none(),
        st.lists(st.tuples(st.integers(0, 60), st.sampled_from([None, "5m", "1h"])), max_size=6),
    ),
    last_ttl=st.sampled_from([None, None, "5m", "1h"]),
    settings=st.one_of(st.just(-1), st.just(-1), st.just(-1), st.integers(0, len(SETTINGS) - 1)),
    gap=st.sampled_from(GAPS),
    model=st.sampled_from([0, 0, 0, 1]),
    write_ttl=st.sampled_from([None, None, "5m", "1h"]),
    resend=st.sampled_from([0, 0, 0, 0, 0, 1, 2]),
)


class Conversation:
    """The blocks of successive requests, kept as objects the way the wire keeps them."""

    def __init__(self, sizes: list[int], text_blocks: bool) -> None:
        self.sizes = sizes
        self.text_blocks = text_blocks
        self.count = 0
        self.tools = self.block("tools", Placement.TOOLS, "tools")
        self.system = [self.block(f"system {i}", Placement.SYSTEM) for i in range(3)]
        self.messages: list[WireBlock] = []

    def block(self, name: str, placement: Placement, kind: str = "", same: str = "") -> WireBlock:
        self.count += 1
        n = self.sizes[self.count % len(self.sizes)]
        body = same or f"{name} v{self.count}"
        if self.text_blocks and kind in ("text", "system") and n < 200:
            # content the segmenter counts: lines of about a dozen tokens, or none at all
            text = same or "".join(f"{body} line {i}: cached prefixes\n" for i in range(n // 10))
            return WireBlock(name, Layer.L1, placement, text, True)
        return WireBlock(name, Layer.L1, placement, body, True, declared_tokens=n)

    def message(self, i: int, kind: str, same: WireBlock | None = None) -> WireBlock:
        role = "assistant" if kind == "tool_use" else "user"
        b = self.block(
            f"messages[{i}] {kind} {i}", Placement.HISTORY, kind, same.text if same else ""
        )
        return dataclasses.replace(b, role=role, cacheable=kind != "text" or i % 3 != 0)

    def step(self, step: Step) -> list[WireBlock]:
        del self.messages[max(0, len(self.messages) - step.drop) :]
        for k in range(max(0, len(self.messages) - step.rewrite), len(self.messages)):
            old = self.messages[k]
            kind = old.name.split(" ")[1]
            self.messages[k] = self.message(k, kind, old if step.same_text else None)
        for kind in step.grow:
            self.messages.append(self.message(len(self.messages), kind))
        if step.system_change:
            self.system[1] = self.block("system 1", Placement.SYSTEM, "system")
        blocks = [self.tools, *self.system, *self.messages]
        want: dict[int, str | None]
        if step.marks is None:
            want = {0: None, len(self.system): None, len(blocks) - 1: step.last_ttl}
        else:
            want = {p % len(blocks): t for p, t in step.marks}
        out = []
        for i, b in enumerate(blocks):
            bp, ttl = (i + 1, want[i]) if i in want else (None, None)
            if (b.breakpoint is None) != (bp is None) or b.ttl != ttl:
                b = dataclasses.replace(b, breakpoint=bp, ttl=ttl)
                self.keep(i, b)
            out.append(b)
        return out

    def keep(self, i: int, b: WireBlock) -> None:
        """The marked object stays the block's object in later requests, as on the wire."""
        if i == 0:
            self.tools = b
        elif i <= len(self.system):
            self.system[i - 1] = b
        else:
            self.messages[i - 1 - len(self.system)] = b


def replay(
    steps: Sequence[Step],
    sizes: list[int],
    text_blocks: bool = False,
    ttl: str | None = None,
    automatic: bool = False,
) -> list[CacheResult]:
    """Each request's result, asserted equal to the reference's."""
    conv = Conversation(sizes, text_blocks)
    sim = AnthropicSimulator(Segmenter(counter("o200k_base")), ttl, automatic=automatic)
    ref = Reference(ttl, automatic)
    store = CacheStore()
    at = T0
    recorded: RequestSettings | None = None
    blocks: list[WireBlock] = []
    results = []
    for step in steps:
        if step.resend and len(blocks) > step.resend:
            blocks = blocks[: -step.resend]
        else:
            blocks = conv.step(step)
        at += timedelta(seconds=step.gap)
        recorded = recorded if step.settings < 0 else SETTINGS[step.settings]
        if recorded is not None and recorded.response_started is not None:
            recorded = dataclasses.replace(recorded, response_started=at + timedelta(seconds=1.5))
        model = MODELS[step.model]
        want = ref.request(blocks, model, at, recorded, step.write_ttl)
        got = sim.request(blocks, model, at, store, recorded, ttl=step.write_ttl)
        assert got == want
        results.append(got)
    return results


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(
    steps=st.lists(STEP, min_size=1, max_size=30),
    sizes=st.lists(st.sampled_from([0, 5, 40, 120, 400, 900, 1500, 3000]), min_size=1, max_size=6),
    text_blocks=st.booleans(),
    ttl=st.sampled_from([None, "5m", "1h"]),
    automatic=st.booleans(),
)
def test_simulator_gives_what_the_reference_gives(
    steps: list[Step], sizes: list[int], text_blocks: bool, ttl: str | None, automatic: bool
) -> None:
    replay(steps, sizes, text_blocks, ttl, automatic)


def step(**changes: object) -> Step:
    """A request that sends the history as it stands, a second after the previous one."""
    plain = Step([], 0, 0, False, False, None, None, -1, 1, 0, None, 0)
    return dataclasses.replace(plain, **changes)


@pytest.mark.parametrize(
    ("grow", "reaches"),
    [
        (["text"] * 19, True),  # the previous last message is the 20th position back
        (["text"] * 20, False),
        (["tool_use"] * 12 + ["tool_result"] * 12 + ["text"] * 17, True),  # 19 positions
        (["tool_use"] * 12 + ["tool_result"] * 12 + ["text"] * 18, False),
        (["tool_use", "tool_result"] * 10, False),  # runs of one block: 20 positions
    ],
)
def test_the_lookback_edge_as_the_reference_walks_it(grow: list[str], reaches: bool) -> None:
    first, second = replay([step(grow=["text"] * 3), step(grow=grow)], [400])
    assert (second.read == first.write, second.cause) == (
        (True, None) if reaches else (False, "lookback_exceeded")
    )


def test_a_hit_found_through_a_later_marks_window_is_refreshed_for_that_marks_lifetime() -> None:
    results = replay(
        [
            step(grow=["text"] * 3, last_ttl="1h"),
            step(grow=["text"] * 2, last_ttl="1h"),  # reads the 1h entry, refreshed for 1h
            step(rewrite=2, gap=600, last_ttl="1h"),  # past 5 minutes: still there
        ],
        [400],
    )
    assert results[2].read == results[0].write


@settings(max_examples=300, deadline=None)
@given(
    tokens=st.lists(st.sampled_from([0, 0, 1, 7, 100]), max_size=12),
    read=st.integers(0, 250),
    write=st.integers(0, 250),
)
def test_block_states_are_the_block_by_block_ones(tokens: list[int], read: int, write: int) -> None:
    total = sum(tokens)
    read = min(read, total)
    write = min(write, total - read)
    assert block_states(tokens, read, write) == reference_states(tokens, read, write)

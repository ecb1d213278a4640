"""The per-step shortcuts of the analysis give what a plain walk over every block gives.

Change labels, layer sums and block records reuse the previous step's for the
leading blocks that are its very objects; the first difference starts after
them; prices come from rates worked out once; the local day from an hour known
to lie in one day. Each is compared here with a simple implementation that
looks at everything again (the engine's earlier code), on random sequences of
steps that share prefixes, swap blocks for copies, change texts, tokens and
cache states, insert, drop and repeat names.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

from hypothesis import given, settings
from hypothesis import strategies as st

from assembler.analysis.engine.block_records import (
    LAYER_NAMES,
    BlockRecords,
    LayerSums,
    PreviousStep,
    block_changes,
    first_difference,
    step_changes,
)
from assembler.analysis.engine.local_days import LocalDays
from assembler.analysis.engine.pipeline import RecordedAssemblies, recorded_assembly
from assembler.analysis.engine.results import BlockAnalysis
from assembler.cache.prices.pricing import price, step_cost, step_pricer
from assembler.cache.simulation import CacheResult
from assembler.design.blocks import BlockRecord
from assembler.design.layers import Layer, Placement
from assembler.design.piece_text import Content, PieceText
from assembler.design.wire import Wire, WireBlock, leading_same
from assembler.sessions.versions import SMALL, StoredText, TextVersions

# --- the reference: every block looked at again ----------------------------------------


def ref_text_of(prev: PreviousStep, name: str) -> Content | None:
    return next((b.content for b in prev.blocks if b.name == name), None)


def ref_changes(
    blocks: Sequence[WireBlock], prev: PreviousStep | None, released: bool
) -> tuple[str, ...]:
    if prev is None:
        return ("new",) * len(blocks)
    out: list[str] = []
    before = prev.blocks
    for i, b in enumerate(blocks):
        if i < len(before) and before[i] is b:
            out.append("unchanged")
            continue
        old = before[i].content if i < len(before) and before[i].name == b.name else None
        if old is None:
            old = ref_text_of(prev, b.name)
        if old is None:
            out.append("new")
        elif old is b.content or old == b.content:
            out.append("unchanged")
        elif released and b.name == "call_tree":
            out.append("released")
        else:
            out.append("changed")
    return tuple(out)


def ref_layer_tokens(blocks: Sequence[WireBlock], tokens: Sequence[int]) -> dict[str, int]:
    out = {"total": sum(tokens), "tools": 0, "L0": 0, "L1": 0, "L2": 0}
    for b, n in zip(blocks, tokens, strict=True):
        out["tools" if b.section == "tools" else b.layer] += n
    return out


class RefBlockRecords:
    """Records looked up by name for every block of every step."""

    def __init__(self) -> None:
        self._by_name: dict[str, tuple[WireBlock, dict[tuple[str, str, int], BlockAnalysis]]] = {}
        self._versions: dict[str, TextVersions] = {}

    def _stored(self, b: WireBlock) -> str | StoredText:
        if len(b.content) < SMALL:
            return b.text
        log = self._versions.get(b.name)
        if log is None:
            log = self._versions[b.name] = TextVersions()
        return log.add(b.content)

    def analyses(
        self, blocks: Sequence[WireBlock], result: CacheResult, changes: Sequence[str]
    ) -> tuple[BlockAnalysis, ...]:
        out: list[BlockAnalysis] = []
        by_name = self._by_name
        for b, n, c, ch in zip(
            blocks, result.block_tokens, result.block_cache, changes, strict=True
        ):
            kept = by_name.get(b.name)
            if kept is None or kept[0] is not b:
                kept = by_name[b.name] = (b, {})
            records = kept[1]
            key = (c, ch, n)
            record = records.get(key)
            if record is None:
                same = next(iter(records.values()), None)
                record = records[key] = BlockAnalysis(
                    name=b.name,
                    layer=LAYER_NAMES[b.layer],
                    section=b.section,
                    tokens=n,
                    cache=c,
                    change=ch,
                    breakpoint=b.breakpoint,
                    stored=same.stored if same is not None else self._stored(b),
                    cacheable=b.cacheable,
                    marker_ttl=b.ttl if b.breakpoint is not None else None,
                )
            out.append(record)
        return tuple(out)


def plain(records: Sequence[BlockAnalysis]) -> list[tuple[object, ...]]:
    """A record's fields with its text read back."""
    return [
        (r.name, r.layer, r.section, r.tokens, r.cache, r.change, r.breakpoint, r.text, r.cacheable)
        for r in records
    ]


def ref_first_difference(blocks: Sequence[WireBlock], prev: PreviousStep) -> int:
    before = prev.blocks
    for i, b in enumerate(blocks):
        if i >= len(before):
            return i
        old = before[i]
        if old is not b and (old.name != b.name or old.content != b.content):
            return i
    return len(blocks)


# --- random steps that share prefixes ----------------------------------------------------

NAMES = ("tools", "identity", "environment", "call_tree", "situation", "user_input", "timestamp")
PLACES = (
    (Layer.L0, Placement.TOOLS),
    (Layer.L0, Placement.SYSTEM),
    (Layer.L1, Placement.SYSTEM),
    (Layer.L1, Placement.HISTORY),
    (Layer.L2, Placement.USER_MESSAGE),
)
STATES = ("read", "write", "uncached")
LONG = "x" * SMALL  # texts past SMALL are kept as deltas between versions


@dataclass
class Step:
    blocks: tuple[WireBlock, ...]
    tokens: tuple[int, ...]
    states: tuple[str, ...]
    released: bool


@st.composite
def texts(draw: st.DrawFn) -> Content:
    """Short or long, plain or held as pieces (as the call tree is)."""
    body = draw(st.sampled_from(["a", "b", "ab", ""]))
    head = LONG if draw(st.booleans()) else ""
    if draw(st.booleans()):
        return PieceText((head, body) if head else (body,))
    return head + "\n" + body if head else body


@st.composite
def new_blocks(draw: st.DrawFn, name: str | None = None, text: Content | None = None) -> WireBlock:
    layer, placement = draw(st.sampled_from(PLACES))
    return WireBlock(
        draw(st.sampled_from(NAMES)) if name is None else name,
        layer,
        placement,
        draw(texts()) if text is None else text,
        draw(st.booleans()),
        draw(st.sampled_from([None, 1, 2])),
    )


@st.composite
def step_sequences(draw: st.DrawFn) -> list[Step]:
    steps: list[Step] = []
    before: tuple[WireBlock, ...] = ()
    tokens_before: tuple[int, ...] = ()
    states_before: tuple[str, ...] = ()
    for _ in range(draw(st.integers(1, 8))):
        keep = draw(st.integers(0, len(before)))  # the very blocks of the last step
        blocks = list(before[:keep])
        for old in before[keep:]:
            what = draw(st.sampled_from(["same", "copy", "edit", "drop", "insert"]))
            if what == "same":
                blocks.append(old)
            elif what == "copy":  # another object with the same text, plain or as pieces
                blocks.append(
                    draw(new_blocks(old.name, draw(st.sampled_from([old.text, old.content]))))
                )
            elif what == "edit":
                blocks.append(draw(new_blocks(old.name)))
            elif what == "insert":
                blocks += [draw(new_blocks()), old]
        blocks += draw(st.lists(new_blocks(), max_size=3))
        if blocks and draw(st.booleans()):  # a block moved elsewhere
            i, j = draw(st.integers(0, len(blocks) - 1)), draw(st.integers(0, len(blocks) - 1))
            blocks.insert(j, blocks.pop(i))
        same = leading_same(blocks, before)
        # the blocks kept keep their tokens and states unless the draw says otherwise
        tokens = [
            tokens_before[i] if i < same and draw(st.integers(0, 3)) else draw(st.integers(0, 9))
            for i in range(len(blocks))
        ]
        states = [
            states_before[i]
            if i < same and draw(st.integers(0, 3))
            else draw(st.sampled_from(STATES))
            for i in range(len(blocks))
        ]
        step = Step(tuple(blocks), tuple(tokens), tuple(states), draw(st.booleans()))
        steps.append(step)
        before, tokens_before, states_before = step.blocks, step.tokens, step.states
    return steps


def _result(step: Step) -> CacheResult:
    return CacheResult(sum(step.tokens), 0, 0, step.tokens, step.states)


def _previous(step: Step) -> PreviousStep:
    at = datetime(2026, 3, 2, tzinfo=UTC)
    return PreviousStep(step.blocks, 0, 0, "m", "anthropic", at, "2026-03-02", 0)


@given(step_sequences())
@settings(max_examples=300, deadline=None)
def test_changes_layers_records_and_first_difference_match_a_full_walk(steps: list[Step]) -> None:
    records, reference = BlockRecords(), RefBlockRecords()
    sums = LayerSums()
    prev: PreviousStep | None = None
    for step in steps:
        blocks = step.blocks
        same = leading_same(blocks, prev.blocks) if prev is not None else 0
        assert same == leading_same(blocks, prev.blocks if prev else ())
        want = ref_changes(blocks, prev, step.released)
        changes = block_changes(blocks, prev, step.released, same)
        assert changes == want
        assert block_changes(blocks, prev, step.released) == want  # same counted inside
        assert sums.of(blocks, step.tokens, same) == ref_layer_tokens(blocks, step.tokens)
        got = records.analyses(blocks, _result(step), changes, same)
        assert got == reference.analyses(blocks, _result(step), changes)
        assert plain(got) == plain(reference.analyses(blocks, _result(step), changes))
        assert [r.text for r in got] == [b.text for b in blocks]
        if prev is not None:
            first = ref_first_difference(blocks, prev)
            assert first_difference(blocks, prev, same) == first
            # the engine's one walk: the labels and the first difference together
            assert step_changes(blocks, prev, step.released, same) == (want, first)
        prev = _previous(step)


@given(step_sequences())
@settings(max_examples=100, deadline=None)
def test_records_counted_inside_match_records_told_the_shared_prefix(steps: list[Step]) -> None:
    told, counted = BlockRecords(), BlockRecords()
    told_sums, counted_sums = LayerSums(), LayerSums()
    prev: PreviousStep | None = None
    for step in steps:
        changes = ref_changes(step.blocks, prev, step.released)
        same = leading_same(step.blocks, prev.blocks if prev else ())
        result = _result(step)
        assert told.analyses(step.blocks, result, changes, same) == counted.analyses(
            step.blocks, result, changes
        )
        assert told_sums.of(step.blocks, step.tokens, same) == counted_sums.of(
            step.blocks, step.tokens
        )
        prev = _previous(step)


def test_an_unchanged_block_keeps_its_record_object_across_steps() -> None:
    """The point of the sharing: an unchanged prompt is one record for the session."""
    head = WireBlock("identity", Layer.L0, Placement.SYSTEM, "You are.", True)
    records = BlockRecords()
    first = records.analyses((head,), CacheResult(3, 0, 3, (3,), ("write",)), ("new",))
    later = [
        records.analyses(
            (head, WireBlock("user_input", Layer.L2, Placement.USER_MESSAGE, t, True)),
            CacheResult(5, 3, 0, (3, 2), ("read", "uncached")),
            ("unchanged", "new"),
            1,
        )
        for t in ("one", "two", "three")
    ]
    assert first[0].cache == "write"
    assert later[0][0] is later[1][0] is later[2][0]
    assert later[0][0].cache == "read"
    assert [r[1].text for r in later] == ["one", "two", "three"]


@given(step_sequences())
@settings(max_examples=100, deadline=None)
def test_recorded_requests_keep_records_equal_to_records_made_anew(steps: list[Step]) -> None:
    """A replayed request's records, reused for the blocks that are the very objects of the
    request before, equal the records made for the request alone, and only those are reused."""
    records = RecordedAssemblies()
    before: tuple[WireBlock, ...] = ()
    made: tuple[BlockRecord, ...] = ()
    for step in steps:
        wire = Wire(step.blocks)
        got = records.build(wire).records
        assert got == recorded_assembly(wire).records
        for i, record in enumerate(got):
            shared = i < len(made) and record is made[i]
            kept = i < len(before) and all(
                a is b for a, b in zip(step.blocks[: i + 1], before[: i + 1], strict=True)
            )
            assert shared == kept, i
        before, made = step.blocks, got


# --- prices and days -------------------------------------------------------------------------


@given(
    st.integers(0, 400_000),
    st.integers(0, 400_000),
    st.integers(0, 400_000),
    st.integers(0, 50_000),
    st.sampled_from(["5m", "1h"]),
    st.one_of(st.none(), st.integers(0, 400_000)),
    st.sampled_from(
        [
            ("anthropic", "claude-sonnet-4-5"),
            ("openai", "gpt-4o"),
            ("gemini", "gemini-2.5-pro"),
            ("deepseek", "deepseek-chat"),
        ]
    ),
)
@settings(max_examples=200, deadline=None)
def test_the_step_pricer_gives_the_figures_of_price(
    read: int,
    write: int,
    uncached: int,
    output: int,
    ttl: str,
    write_1h: int | None,
    target: tuple[str, str],
) -> None:
    provider, model = target
    total = read + write + uncached
    usd, plain = step_pricer(provider, model, ttl).cost(read, write, uncached, output, write_1h)
    assert usd == price(
        provider,
        model,
        total_input=total,
        cache_read=read,
        cache_write=write,
        output=output,
        write_1h=ttl == "1h",
        cache_write_1h=write_1h,
    )
    assert plain == price(provider, model, total_input=total, output=output)
    cost = step_cost(
        provider,
        model,
        read=read,
        write=write,
        uncached=uncached,
        output=output,
        ttl=ttl,
        write_1h=write_1h,
    )
    assert (cost.usd, cost.usd_without_cache) == (usd, plain)


ZONES = (
    "UTC",
    "Europe/Berlin",
    "America/New_York",
    "Asia/Kathmandu",  # +05:45
    "Australia/Lord_Howe",  # a half-hour daylight saving shift
    "America/St_Johns",  # -03:30, daylight saving
    "Pacific/Chatham",  # +12:45, daylight saving
    "No/Such_Zone",  # unknown: the time's own date
)


@given(
    st.lists(
        st.tuples(
            st.datetimes(
                min_value=datetime(2024, 1, 1),  # noqa: DTZ001 - hypothesis bounds are naive
                max_value=datetime(2027, 1, 1),  # noqa: DTZ001
                timezones=st.sampled_from([UTC, ZoneInfo("Asia/Tokyo")]) | st.none(),
            ),
            st.sampled_from(ZONES),
        ),
        max_size=40,
    ),
    st.lists(st.integers(0, 7_200), max_size=40),
)
@settings(max_examples=200, deadline=None)
def test_local_days_match_a_conversion_per_step(
    starts: list[tuple[datetime, str]], gaps: list[int]
) -> None:
    """Random times, and runs of close ones (the cached hour is used), in zones with
    odd offsets and daylight saving shifts; times without an offset too."""
    days = LocalDays()
    times = list(starts)
    if starts:  # a run of steps seconds to hours apart from the first
        at, zone = starts[0]
        for gap in gaps:
            at += timedelta(seconds=gap)
            times.append((at, zone))
    for at, zone in times:
        try:
            tz: ZoneInfo | None = ZoneInfo(zone)
        except (KeyError, ValueError):
            tz = None
        want = (at.astimezone(tz) if tz else at).date().isoformat()
        assert days.of(at, zone) == want


def test_local_days_around_a_daylight_saving_midnight() -> None:
    """Every minute of two days around a shift: the cached hours agree with a conversion."""
    days = LocalDays()
    zone = "America/Havana"  # its clocks change at midnight
    start = datetime(2026, 3, 7, 20, tzinfo=UTC)
    for minute in range(0, 48 * 60, 7):
        at = start + timedelta(minutes=minute)
        assert days.of(at, zone) == at.astimezone(ZoneInfo(zone)).date().isoformat()

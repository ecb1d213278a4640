"""Cache simulators: breakpoints, lookback, minimums, lifetimes, units, scopes."""

from __future__ import annotations

import copy
import json
import socket
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from assembler.analysis.engine.analyzer import analyze
from assembler.cache.anthropic import AnthropicSimulator
from assembler.cache.providers import simulator
from assembler.cache.rules import rules
from assembler.cache.segmenter import Segmenter
from assembler.cache.store import CacheStore
from assembler.cache.token_prefix import TokenPrefixSimulator
from assembler.cache.tokenizers import counter
from assembler.design.layers import Layer, Placement
from assembler.design.wire import WireBlock
from assembler.sessions.generator import generate_session
from assembler.sessions.loader import parse_session

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


@pytest.fixture(autouse=True)
def _no_network(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    def refuse(*_: Any, **__: Any) -> None:
        raise AssertionError("a test tried to open a network connection")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    yield


def seg() -> Segmenter:
    return Segmenter(counter("o200k_base"))


def text(n_lines: int, tag: str) -> str:
    """Distinct lines of about 12 tokens each."""
    return "\n".join(
        f"{tag} line {i}: the cache keeps prefixes of requests" for i in range(n_lines)
    )


def block(name: str, body: str, bp: int | None = None, cacheable: bool = True) -> WireBlock:
    return WireBlock(name, Layer.L1, Placement.SYSTEM, body, cacheable, bp)


def tokens_of(s: Segmenter, blocks: list[WireBlock]) -> list[int]:
    return [s.tokens(b.name, b.text) for b in blocks]


# --- Anthropic -----------------------------------------------------------------------------


def test_anthropic_writes_at_breakpoints_and_reads_the_longest_entry() -> None:
    s = seg()
    sim = AnthropicSimulator(s)
    store = CacheStore()
    blocks = [block("a", text(100, "a"), 1), block("b", text(40, "b"), 2), block("c", "tail")]
    n = tokens_of(s, blocks)
    first = sim.request(blocks, "claude-sonnet-4-5", T0, store)
    assert (first.read, first.write, first.uncached) == (0, n[0] + n[1], n[2])
    assert first.block_cache == ("write", "write", "uncached")
    # b changes: the entry at ② is gone, the one at ① is read, ② is written again
    changed = [blocks[0], block("b", text(41, "b"), 2), blocks[2]]
    m = tokens_of(s, changed)
    second = sim.request(changed, "claude-sonnet-4-5", T0 + timedelta(minutes=1), store)
    assert (second.read, second.write, second.uncached) == (m[0], m[1], m[2])
    third = sim.request(changed, "claude-sonnet-4-5", T0 + timedelta(minutes=2), store)
    assert (third.read, third.write) == (m[0] + m[1], 0)


def test_anthropic_lookback_is_20_positions_including_the_breakpoint() -> None:
    s = seg()
    assert rules()["anthropic"]["lookback"]["value"] == 20
    head = block("head", text(120, "h"), 1)
    smalls = [block(f"s{i}", f"small block {i}") for i in range(1, 30)]

    def run(bp_at: int) -> int:
        sim = AnthropicSimulator(s)
        store = CacheStore()
        sim.request([head, *smalls], "claude-sonnet-4-5", T0, store)  # writes at position 0
        later = [WireBlock(head.name, head.layer, head.placement, head.text, True)]
        later += [
            WireBlock(b.name, b.layer, b.placement, b.text, True, 1 if i + 1 == bp_at else None)
            for i, b in enumerate(smalls)
        ]
        return sim.request(later, "claude-sonnet-4-5", T0 + timedelta(seconds=5), store).read

    head_tokens = s.tokens(head.name, head.text)
    assert run(19) == head_tokens  # positions 19..0: 20 positions, entry found
    assert run(20) == 0  # positions 20..1: the entry at 0 is out of reach


@pytest.mark.parametrize(
    ("model", "minimum"), [("claude-sonnet-4-5", 1024), ("claude-haiku-4-5", 4096)]
)
def test_anthropic_below_the_minimum_writes_and_reads_nothing(model: str, minimum: int) -> None:
    s = seg()
    sim = AnthropicSimulator(s)
    assert sim.minimum(model) == minimum
    store = CacheStore()
    small = [block("a", text(10, "a"), 1), block("b", "tail")]
    assert sum(tokens_of(s, small)) < minimum
    for k in range(3):
        r = sim.request(small, model, T0 + timedelta(seconds=k), store)
        assert (r.read, r.write) == (0, 0)
        assert r.below_minimum
    assert len(store) == 0
    # between the two minimums: Sonnet caches it, Haiku 4.5 does not
    mid = [block("a", text(170, "m"), 1)]
    n = sum(tokens_of(s, mid))
    assert 1024 <= n < 4096
    w = AnthropicSimulator(s).request(mid, model, T0, CacheStore()).write
    assert w == (n if minimum == 1024 else 0)


def test_anthropic_ttl_expiry_and_refresh_on_hit() -> None:
    s = seg()
    blocks = [block("a", text(120, "a"), 1)]
    n = s.tokens("a", blocks[0].text)
    for ttl, gap, expected in [("5m", 6, 0), ("1h", 6, n), ("1h", 61, 0)]:
        sim, store = AnthropicSimulator(s, ttl), CacheStore()
        sim.request(blocks, "claude-sonnet-4-5", T0, store)
        r = sim.request(blocks, "claude-sonnet-4-5", T0 + timedelta(minutes=gap), store)
        assert r.read == expected, (ttl, gap)
        assert r.expired == (expected == 0)
    # a hit at 4 min refreshes the 5m entry: still alive at 8 min
    sim, store = AnthropicSimulator(s, "5m"), CacheStore()
    for minute, read in [(0, 0), (4, n), (8, n), (14, 0)]:
        r = sim.request(blocks, "claude-sonnet-4-5", T0 + timedelta(minutes=minute), store)
        assert r.read == read, minute


def test_anthropic_caches_are_separate_per_model() -> None:
    s = seg()
    sim, store = AnthropicSimulator(s), CacheStore()
    blocks = [block("a", text(120, "a"), 1)]
    sim.request(blocks, "claude-sonnet-4-5", T0, store)
    assert sim.request(blocks, "claude-opus-4-1", T0 + timedelta(seconds=5), store).read == 0
    assert sim.request(blocks, "claude-sonnet-4-5", T0 + timedelta(seconds=9), store).read > 0


def test_anthropic_automatic_mode_puts_one_breakpoint_on_the_last_cacheable_block() -> None:
    s = seg()
    blocks = [
        block("a", text(100, "a")),
        block("b", text(20, "b")),
        block("c", "x", cacheable=False),
    ]
    n = tokens_of(s, blocks)
    plain, auto = AnthropicSimulator(s), AnthropicSimulator(s, automatic=True)
    assert auto.breakpoints(blocks) == [1]
    for sim, expected in [(plain, 0), (auto, n[0] + n[1])]:
        store = CacheStore()
        sim.request(blocks, "claude-sonnet-4-5", T0, store)
        assert (
            sim.request(blocks, "claude-sonnet-4-5", T0 + timedelta(seconds=3), store).read
            == expected
        )


# --- token-prefix providers ----------------------------------------------------------------


def test_openai_reads_are_multiples_of_128_and_zero_below_1024() -> None:
    s = seg()
    sim = simulator("openai", s)
    assert isinstance(sim, TokenPrefixSimulator)
    for lines in range(20, 200, 7):
        store = CacheStore()
        base = text(lines, "p")
        sim.request([block("a", base + "\nfirst ending")], "gpt-5", T0, store)
        r = sim.request(
            [block("a", base + "\nother ending")], "gpt-5", T0 + timedelta(seconds=5), store
        )
        shared = s.tokens("x", base + "\n")
        assert r.read % 128 == 0
        if shared < 1024:
            assert r.read == 0
        else:
            assert shared - 128 < r.read <= shared
        assert r.read + r.write + r.uncached == r.total


def test_openai_small_prompt_is_not_cached_at_all() -> None:
    s = seg()
    sim, store = simulator("openai", s), CacheStore()
    small = [block("a", text(30, "a"))]
    for k in range(2):
        r = sim.request(small, "gpt-5", T0 + timedelta(seconds=k), store)
        assert (r.read, r.write) == (0, 0)


def test_openai_retention_by_family() -> None:
    s = seg()
    blocks = [block("a", text(150, "a"))]
    # in-memory retention for every model: extended (24h) retention is opt-in per request
    cases = [("gpt-4o", 11, False), ("gpt-4o", 9, True), ("gpt-5", 9, True), ("gpt-5", 11, False)]
    for model, gap, hit in cases:
        sim, store = simulator("openai", s), CacheStore()
        sim.request(blocks, model, T0, store)
        r = sim.request(blocks, model, T0 + timedelta(minutes=gap), store)
        assert (r.read > 0) == hit, (model, gap)


def test_openai_prompt_cache_key_separates_scopes() -> None:
    s = seg()
    blocks = [block("a", text(150, "a"))]
    store = CacheStore()
    simulator("openai", s, cache_key="k1").request(blocks, "gpt-5", T0, store)
    later = T0 + timedelta(seconds=5)
    assert simulator("openai", s, cache_key="k2").request(blocks, "gpt-5", later, store).read == 0
    assert simulator("openai", s, cache_key="k1").request(blocks, "gpt-5", later, store).read > 0


def test_deepseek_reads_in_64_token_units() -> None:
    s = seg()
    sim = simulator("deepseek", s)
    for lines in (3, 9, 40, 77):
        store = CacheStore()
        base = text(lines, "d")
        sim.request([block("a", base + "\nA")], "deepseek-chat", T0, store)
        r = sim.request(
            [block("a", base + "\nB")], "deepseek-chat", T0 + timedelta(seconds=1), store
        )
        shared = s.tokens("x", base + "\n")
        assert r.read % 64 == 0
        assert r.read == (shared // 64) * 64


def test_gemini_minimum_per_model_and_no_rounding() -> None:
    s = seg()
    sim = simulator("gemini", s)
    assert sim.minimum("gemini-2.5-pro") == 2048
    assert sim.minimum("gemini-3-pro") == 4096
    store = CacheStore()
    base = text(200, "g")
    shared = s.tokens("x", base + "\n")
    assert 2048 <= shared < 4096
    for model, expected in [("gemini-2.5-pro", shared), ("gemini-3-pro", 0)]:
        sim.request([block("a", base + "\nA")], model, T0, store)
        r = sim.request([block("a", base + "\nB")], model, T0 + timedelta(seconds=1), store)
        assert r.read == expected, model


# --- the store across sessions --------------------------------------------------------------


def test_a_store_is_shared_by_sessions_that_share_a_prefix() -> None:
    data = generate_session(4, 11)
    other = copy.deepcopy(data)
    other["session"]["id"] = "another-session"
    other["session"]["bindings"]["session_id"] = "another"
    a, b = parse_session(json.dumps(data)), parse_session(json.dumps(other))
    alone = analyze(b, ttl="1h")
    assert alone.steps[0].read == 0
    # at the same instant as a's first request, b's is parallel to it: an entry is
    # readable only once the response that wrote it has started, so b writes too
    store = CacheStore()
    analyze(a, ttl="1h", store=store)
    parallel = analyze(b, ttl="1h", store=store).steps[0]
    assert (parallel.read, parallel.write) == (0, alone.steps[0].write)
    # a second later, b reads what a wrote
    for event in other["events"]:
        at = datetime.fromisoformat(event["at"].replace("Z", "+00:00"))
        event["at"] = (at + timedelta(seconds=1)).isoformat()
    later = parse_session(json.dumps(other))
    store = CacheStore()
    analyze(a, ttl="1h", store=store)
    first = analyze(later, ttl="1h", store=store).steps[0]
    assert first.read >= first.tokens["tools"] + first.tokens["L0"]


def test_every_rule_names_its_source() -> None:
    for provider, table in rules().items():
        for name, rule in table.items():
            assert isinstance(rule, dict), (provider, name)
            assert str(rule.get("source", "")).strip(), f"{provider}.{name} has no source"


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.sampled_from(["a\n", "bb\n", "c", "\r\n", "\r", "dd\u2028", "e f\n", "\n"]), max_size=30
    ),
    st.lists(st.sampled_from(["a\n", "bb\n", "c", "\r\n", "\r", "g\n", "\n"]), max_size=10),
    st.integers(min_value=0, max_value=30),
)
def test_incremental_split_equals_a_fresh_split(base: list[str], tail: list[str], cut: int) -> None:
    from assembler.cache.segmenter import SHORT_BLOCK, Segmenter
    from assembler.cache.tokenizers import TokenCounter

    for head in ("", "x" * SHORT_BLOCK + "\n"):  # short blocks, then long ones split by lines
        before = head + "".join(base)
        after = head + "".join(base[:cut]) + "".join(tail)
        warm = Segmenter(TokenCounter("o200k_base"))
        warm.split("block", before)
        fresh = Segmenter(TokenCounter("o200k_base"))
        assert warm.split("block", after) == fresh.split("block", after)
        # the same text has the same fingerprint however it was reached
        block = WireBlock("block", Layer.L1, Placement.HISTORY, after, True)
        assert warm.measure(block) == fresh.measure(block)
        # and the same running line fingerprints, kept lines and new ones alike
        assert warm.segments(block) == fresh.segments(block)


def test_a_hard_limit_expires_each_entry_from_its_own_write() -> None:
    """Max age counts from each entry's write: the head written an hour ago has passed
    its limit, yet the longer prefix written minutes ago is read."""
    from assembler.cache.rules import Retention

    sim = TokenPrefixSimulator(
        "openai", seg(), retention=Retention(timedelta(minutes=10), timedelta(hours=1))
    )
    store = CacheStore()
    t0 = datetime(2026, 3, 12, 9, 0, tzinfo=UTC)
    blocks = [block("head", text(120, "head"))]
    sim.request(blocks, "gpt-4o", t0, store)
    for k in range(1, 12):  # a growing history, one request every 5 minutes up to +55 min
        blocks = [*blocks, block(f"turn {k}", text(20, f"turn {k}"))]
        sim.request(blocks, "gpt-4o", t0 + timedelta(minutes=5 * k), store)
    written = sum(tokens_of(seg(), blocks))
    # at +61 min the head's entry is past its hour; the prefix written at +55 min is not
    blocks = [*blocks, block("turn 12", text(20, "turn 12"))]
    later = sim.request(blocks, "gpt-4o", t0 + timedelta(minutes=61), store)
    assert later.read == written - written % 128 and later.read > 0


def test_counts_of_many_texts_are_the_counts_of_each_and_tokenize_each_text_once() -> None:
    from assembler.cache.tokenizers import TokenCounter

    counter = TokenCounter("o200k_base")
    counter.count("seen before\n")
    texts = ["new line\n", "seen before\n", "new line\n", "", "another one\n", "seen before\n"]
    alone = TokenCounter("o200k_base")
    assert counter.counts(texts) == [alone.count(t) for t in texts]
    assert counter.calls == 1 + 3  # the text seen before, then each new text once
    assert counter.counts(texts) == [alone.count(t) for t in texts]
    assert counter.calls == 4  # all of them known now
    assert counter.counts([]) == []

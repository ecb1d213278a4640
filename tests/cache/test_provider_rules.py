"""Each provider rule of cache_rules.yaml as a scenario with numbers."""

from __future__ import annotations

import json
from bisect import bisect_left
from datetime import UTC, datetime, timedelta
from itertools import pairwise

from hypothesis import given, settings
from hypothesis import strategies as st

from assembler.analysis.engine.analyzer import analyze
from assembler.analysis.reports.report_json import analysis_json, rules_lines
from assembler.cache.anthropic import AnthropicSimulator
from assembler.cache.prefix_units import PrefixUnitSimulator
from assembler.cache.providers import cache_platform, simulator
from assembler.cache.rules import minimum_rule, normalize_model, rules, rules_version
from assembler.cache.segmenter import Segmenter
from assembler.cache.store import CacheStore
from assembler.cache.token_prefix import TokenPrefixSimulator
from assembler.cache.tokenizers import counter
from assembler.design.layers import Layer, Placement
from assembler.design.wire import WireBlock
from assembler.sessions.loader import parse_session
from assembler.sessions.model import RecordedBlock, RequestSettings
from assembler.sessions.recorded import recorded_wire

T0 = datetime(2026, 10, 3, 9, 0, tzinfo=UTC)
PLACES = {"tools": Placement.TOOLS, "system": Placement.SYSTEM, "messages": Placement.HISTORY}


def seg() -> Segmenter:
    return Segmenter(counter("o200k_base"))


def blk(
    name: str, tokens: int, section: str = "messages", bp: bool = False, role: str = "user"
) -> WireBlock:
    """A block of exactly ``tokens`` tokens (declared), its content named by ``name``."""
    return WireBlock(name, Layer.L1, PLACES[section], name, True, 1 if bp else None, tokens, role)


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


# --- Anthropic ---------------------------------------------------------------------------


def test_minimums_per_model_are_not_monotonic_and_an_unknown_model_warns() -> None:
    assert minimum_rule("anthropic", "claude-opus-5-5").tokens == 512
    assert minimum_rule("anthropic", "claude-opus-4-7").tokens == 2048
    assert minimum_rule("anthropic", "claude-opus-4-6").tokens == 4096
    assert minimum_rule("anthropic", "claude-opus-4-8").tokens == 1024
    assert minimum_rule("anthropic", "claude-mythos-preview").tokens == 2048
    # platform decorations do not hide the model
    assert normalize_model("us.anthropic.claude-opus-4-7-v1:0") == "claude-opus-4-7"
    assert minimum_rule("anthropic", "us.anthropic.claude-opus-4-7-v1:0").tokens == 2048
    assert minimum_rule("anthropic", "claude-sonnet-4-5@20250929").tokens == 1024
    known = minimum_rule("anthropic", "claude-haiku-4-5")
    assert (
        known.warning is None and known.rule == "anthropic.min_cacheable_tokens[claude-haiku-4-5]"
    )
    unknown = minimum_rule("anthropic", "claude-haiku-5-5")
    assert unknown.tokens == 1024
    assert unknown.warning == (
        "claude-haiku-5-5: not listed in anthropic.min_cacheable_tokens; used the default "
        "1,024 (anthropic.min_cacheable_tokens.default)"
    )


def test_below_the_minimum_nothing_is_cached_and_no_error() -> None:
    s, store = seg(), CacheStore()
    opus = AnthropicSimulator(s).request(
        [blk("system", 600, "system", bp=True)], "claude-opus-5-5", T0, store
    )
    assert (opus.read, opus.write) == (0, 600)
    haiku = AnthropicSimulator(s).request(
        [blk("system", 3000, "system", bp=True)], "claude-haiku-4-5", T0, store
    )
    assert (haiku.read, haiku.write, haiku.uncached, haiku.below_minimum) == (0, 0, 3000, True)


def _tool_turn(kind: str, n: int, start: int) -> list[WireBlock]:
    role = "assistant" if kind == "tool_use" else "user"
    return [blk(f"messages[{start + i}] {kind} {i}", 20, role=role) for i in range(n)]


def test_a_run_of_30_tool_use_blocks_is_one_lookback_position() -> None:
    s, store = seg(), CacheStore()
    sim = AnthropicSimulator(s)
    system = blk("system", 2000, "system", bp=True)
    question = blk("messages[0] text", 100)
    first = sim.request(
        [system, blk("messages[0] text", 100, bp=True)], "claude-sonnet-4-5", at(0), store
    )
    assert (first.read, first.write) == (0, 2100)
    uses = _tool_turn("tool_use", 30, 1)
    results = _tool_turn("tool_result", 30, 31)
    marked = [*results[:-1], blk(results[-1].name, 20, bp=True)]
    second = sim.request([system, question, *uses, *marked], "claude-sonnet-4-5", at(10), store)
    # 60 blocks back, but two positions: the entry after the question is found
    assert (second.read, second.write, second.cause) == (2100, 1200, None)


def test_sixty_plain_blocks_put_the_entry_beyond_the_lookback() -> None:
    s, store = seg(), CacheStore()
    sim = AnthropicSimulator(s)
    system = blk("system", 2000, "system", bp=True)
    question = blk("messages[0] text", 100)
    sim.request([system, blk("messages[0] text", 100, bp=True)], "claude-sonnet-4-5", at(0), store)
    plain = [blk(f"messages[{i}] text {i}", 20) for i in range(1, 61)]
    plain[-1] = blk(plain[-1].name, 20, bp=True)
    second = sim.request([system, question, *plain], "claude-sonnet-4-5", at(10), store)
    assert (second.read, second.write, second.cause) == (2000, 1300, "lookback_exceeded")


def test_the_lookback_never_finds_what_the_same_request_writes() -> None:
    s = seg()
    blocks = [blk("system", 2000, "system", bp=True), blk("messages[0] text", 500, bp=True)]
    result = AnthropicSimulator(s).request(blocks, "claude-sonnet-4-5", T0, CacheStore())
    assert (result.read, result.write) == (0, 2500)


def test_automatic_caching_takes_one_of_the_four_slots_on_the_last_cacheable_block() -> None:
    sim = AnthropicSimulator(seg(), automatic=True)
    three = [blk(f"b{i}", 600, "system", bp=i < 3) for i in range(5)]
    assert sim.breakpoints(three) == [0, 1, 2, 4]
    four = [blk(f"b{i}", 600, "system", bp=i < 4) for i in range(6)]
    assert sim.breakpoints(four) == [0, 1, 2, 3]
    result = sim.request(four, "claude-sonnet-4-5", T0, CacheStore())
    assert result.notes == (
        "automatic caching found all 4 breakpoint slots taken by explicit markers",
    )


def test_parallel_requests_on_a_cold_prefix_each_pay_the_write() -> None:
    s, store = seg(), CacheStore()
    sim = AnthropicSimulator(s)
    blocks = [blk("system", 20_000, "system", bp=True)]
    first_response = RequestSettings(response_started=at(1.5))
    results = [
        sim.request(blocks, "claude-sonnet-4-5", at(0), store, first_response),
        sim.request(blocks, "claude-sonnet-4-5", at(0.2), store),
        sim.request(blocks, "claude-sonnet-4-5", at(0.4), store),
    ]
    assert [(r.read, r.write) for r in results] == [(0, 20_000)] * 3
    assert [r.cause for r in results[1:]] == ["concurrent_cold_write"] * 2
    later = sim.request(blocks, "claude-sonnet-4-5", at(3), store)
    assert (later.read, later.write) == (20_000, 0)


def _request(settings: RequestSettings | None) -> tuple[list[WireBlock], RequestSettings | None]:
    return [
        blk("tools", 1500, "tools", bp=True),
        blk("system", 2500, "system", bp=True),
        blk("messages[0] text", 3000, bp=True),
    ], settings


def test_a_changed_setting_invalidates_the_level_the_rules_name() -> None:
    cases = {
        # setting: (before, after) → read after the change
        "effort": (RequestSettings(effort="high"), RequestSettings(effort="medium"), 4000),
        "tool_choice": (
            RequestSettings(tool_choice="auto"),
            RequestSettings(tool_choice="any"),
            4000,
        ),
        "images": (RequestSettings(images=1), RequestSettings(images=2), 4000),
        "thinking": (None, RequestSettings(thinking="enabled:2048"), 4000),
        "web_search": (RequestSettings(web_search=True), RequestSettings(), 1500),
        "speed": (RequestSettings(), RequestSettings(speed="fast"), 1500),
        "citations": (RequestSettings(), RequestSettings(citations=True), 1500),
    }
    for name, (before, after, read) in cases.items():
        sim, store = AnthropicSimulator(seg()), CacheStore()
        blocks, _ = _request(before)
        sim.request(blocks, "claude-sonnet-4-5", at(0), store, before)
        again = sim.request(blocks, "claude-sonnet-4-5", at(10), store, after)
        assert (again.read, again.cause) == (read, "setting_changed"), name
        assert [c[0] for c in again.setting_changes] == [name]
        same = sim.request(blocks, "claude-sonnet-4-5", at(20), store, after)
        assert same.read == 7000 and same.cause is None, name
    effort = cases["effort"]
    sim = AnthropicSimulator(seg())
    sim.request(_request(None)[0], "claude-sonnet-4-5", at(0), CacheStore(), effort[0])
    changed = sim.request(_request(None)[0], "claude-sonnet-4-5", at(1), CacheStore(), effort[1])
    assert changed.setting_changes == (("effort", "high", "medium"),)


# --- OpenAI ------------------------------------------------------------------------------


def _openai(model: str, suffix: str, marked_prefix: bool = False) -> list[WireBlock]:
    return [
        blk("policy", 50_000, "system", bp=marked_prefix),
        blk(f"messages[0] {suffix}", 300),
    ]


def test_gpt_5_6_reads_nothing_when_only_the_suffix_after_a_stable_prefix_changed() -> None:
    sim, store = simulator("openai", seg()), CacheStore()
    first = sim.request(_openai("gpt-5.6", "a"), "gpt-5.6", at(0), store)
    assert (first.read, first.write) == (0, 50_300)  # written: billed as cache_write_tokens
    second = sim.request(_openai("gpt-5.6", "b"), "gpt-5.6", at(10), store)
    assert (second.read, second.cause) == (0, "breakpoint_mismatch")


def test_gpt_5_6_reads_exactly_at_an_explicit_breakpoint_without_rounding() -> None:
    sim, store = simulator("openai", seg()), CacheStore()
    sim.request(_openai("gpt-5.6", "a", True), "gpt-5.6", at(0), store)
    second = sim.request(_openai("gpt-5.6", "b", True), "gpt-5.6", at(10), store)
    assert (second.read, second.write) == (50_000, 300)


def test_before_gpt_5_6_the_prefix_is_read_rounded_down_to_128() -> None:
    sim, store = simulator("openai", seg()), CacheStore()
    sim.request(_openai("gpt-5-codex", "a"), "gpt-5-codex", at(0), store)
    second = sim.request(_openai("gpt-5-codex", "b"), "gpt-5-codex", at(10), store)
    assert second.read == 49_920


def test_the_512_step_from_an_offset_of_384_is_data_and_rounds_as_observed() -> None:
    observed = rules()["openai"]["increment"]["observed"][0]
    assert (observed["step"], observed["offset"], observed["models"]) == (512, 384, ["gpt-5.5"])
    assert "4,480, 4,992, 5,504" in observed["evidence"]
    sim = TokenPrefixSimulator("openai", seg())
    assert [sim._floor(n, 1024, (512, 384)) for n in (50_000, 4_500, 5_000, 1_000)] == [
        49_536,
        4_480,
        4_992,
        0,
    ]
    assert sim._floor(50_000, 1024, (128, 0)) == 49_920


def test_gpt_5_5_reads_in_512_token_steps_from_384() -> None:
    """The codemie-code rollout's reads (gpt-5.5): all 48 non-zero reads are 384 + 512k,
    e.g. 41,344 after a request of 41,614 tokens, where 128-token steps give 41,600."""
    assert sim_rounding("gpt-5.5") == (512, 384)
    assert sim_rounding("gpt-5.5-2026-04-23") == (512, 384)
    assert sim_rounding("gpt-5-codex") == sim_rounding("gpt-5.1-codex") == (128, 0)
    sim, store = simulator("openai", seg()), CacheStore()
    sim.request(_openai("gpt-5.5", "a"), "gpt-5.5", at(0), store)
    second = sim.request(_openai("gpt-5.5", "b"), "gpt-5.5", at(10), store)
    assert second.read == 49_536  # 50,000 matched: 384 + 96 x 512


def sim_rounding(model: str) -> tuple[int, int]:
    return TokenPrefixSimulator("openai", seg()).rounding(model)


def test_gpt_5_6_writes_at_most_four_breakpoints_and_considers_the_latest_80() -> None:
    sim, store = simulator("openai", seg()), CacheStore()
    marks = [blk(f"system {i}", 2000, "system", bp=True) for i in range(6)]
    first = sim.request([*marks, blk("messages[0] q", 10)], "gpt-5.6", at(0), store)
    # the latest 4 breakpoints: system 3, 4, 5 and the managed one after the question
    assert first.write == 12_010
    scope = store.scope("openai", "gpt-5.6", "")
    assert len(scope.recent) == 4
    for n in range(30):  # 30 more conversations, 3 new breakpoints each
        other = [blk(f"other {n} {i}", 2000, "system", bp=True) for i in range(3)]
        sim.request(other, "gpt-5.6", at(1 + n), store)
    assert len(scope.recent) == 80
    again = sim.request([*marks, blk("messages[0] q", 10)], "gpt-5.6", at(100), store)
    assert again.read == 0  # alive, but no longer among the latest 80 breakpoints


def test_gpt_5_6_explicit_mode_without_a_breakpoint_caches_nothing() -> None:
    sim, store = simulator("openai", seg()), CacheStore()
    explicit = RequestSettings(cache_mode="explicit")
    blocks = _openai("gpt-5.6", "a")
    first = sim.request(blocks, "gpt-5.6", at(0), store, explicit)
    second = sim.request(blocks, "gpt-5.6", at(10), store, explicit)
    assert (first.write, second.read) == (0, 0)


def test_prompt_cache_key_and_retention_as_recorded() -> None:
    sim, store = simulator("openai", seg()), CacheStore()
    blocks = _openai("gpt-5.4", "a")
    sim.request(blocks, "gpt-5.4", at(0), store, RequestSettings(prompt_cache_key="a"))
    moved = sim.request(blocks, "gpt-5.4", at(10), store, RequestSettings(prompt_cache_key="b"))
    assert (moved.read, moved.cause) == (0, "cache_key_changed")
    # in-memory retention: 2 hours later the entry is gone; 24h keeps it
    for retention, read in (("in_memory", 0), ("24h", 50_176)):
        sim, store = simulator("openai", seg()), CacheStore()
        kept = RequestSettings(retention=retention)
        sim.request(blocks, "gpt-5.4", at(0), store, kept)
        assert sim.request(blocks, "gpt-5.4", at(7200), store, kept).read == read, retention


# --- DeepSeek, Gemini ----------------------------------------------------------------------


def test_deepseek_v4_reads_only_a_full_prefix_unit() -> None:
    sim, store = simulator("deepseek", seg()), CacheStore()
    a = blk("system A", 3000, "system")
    reads = [
        sim.request([a, blk(f"messages[0] {x}", 500)], "deepseek-v4-flash", at(i), store).read
        for i, x in enumerate("BCD")
    ]
    assert reads == [0, 0, 3000]  # A+C stored A as the common prefix; A+D reads it


def test_deepseek_v4_stores_a_unit_at_the_end_of_the_model_output() -> None:
    sim, store = PrefixUnitSimulator(seg()), CacheStore()
    question = blk("messages[0] q", 2000)
    sim.request([question], "deepseek-v4-flash", at(0), store)
    answer = blk("messages[1] a", 400, role="assistant")
    turn = sim.request(
        [question, answer, blk("messages[2] q2", 50)], "deepseek-v4-flash", at(9), store
    )
    assert turn.read == 2400


def test_deepseek_before_v4_reads_64_token_units() -> None:
    sim, store = simulator("deepseek", seg()), CacheStore()
    a = blk("system A", 3000, "system")
    sim.request([a, blk("messages[0] B", 500)], "deepseek-chat", at(0), store)
    second = sim.request([a, blk("messages[0] C", 500)], "deepseek-chat", at(1), store)
    assert second.read == 3000 - 3000 % 64


def test_gemini_minimums_per_model_and_the_read_is_an_expectation() -> None:
    blocks = [blk("system", 3000, "system"), blk("messages[0] q", 10)]
    for model, read in (("gemini-3.5-flash", 0), ("gemini-2.5-pro", 3010)):
        sim, store = simulator("gemini", seg()), CacheStore()
        sim.request(blocks, model, at(0), store)
        again = sim.request(blocks, model, at(10), store)
        assert (again.read, again.expected) == (read, True), model
    assert minimum_rule("gemini", "gemini-4-argon").tokens == 4096
    assert minimum_rule("gemini", "gemini-9").warning is not None


def test_every_rule_has_a_source_and_dates_and_each_provider_a_version() -> None:
    for provider, table in rules().items():
        assert rules_version(provider) >= "2026-10-01", provider
        for name, rule in table.items():
            if name == "rules_version":
                continue
            assert str(rule.get("source", "")).strip(), (provider, name)
            assert "effective" in rule and rule.get("checked"), (provider, name)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(["text", "tool_use", "tool_result"]), min_size=1, max_size=80))
def test_the_lookback_window_spans_at_most_20_positions(kinds: list[str]) -> None:
    sim = AnthropicSimulator(seg())
    blocks = [blk(f"messages[{i}] {k}", 10) for i, k in enumerate(kinds)]
    mark = len(blocks) - 1
    # the positions the simulator keys the request with, and its lookback start rule
    keyed = sim._keyed(blocks, "claude-sonnet-4-5", sim._salts).positions
    start = bisect_left(keyed, keyed[mark] - sim.lookback + 1, 0, mark)
    window = kinds[start : mark + 1]
    # a position: one block, or a run of tool_use / of tool_result blocks
    positions = 1 + sum(
        not (a == b and a in ("tool_use", "tool_result")) for a, b in pairwise(window)
    )
    assert positions <= 20
    if start > 0:  # it stopped because one more block would start a 21st position
        before = kinds[start - 1]
        assert positions == 20 and not (before == kinds[start] and before != "text")


# --- platforms -------------------------------------------------------------------------------


def test_bedrock_and_vertex_keep_caches_apart_from_the_api_and_each_other() -> None:
    """The same prefix sent to the API, then Bedrock, then Vertex, then the API again: each
    platform pays its own write; the API's entry is still read at the end."""
    s, store = seg(), CacheStore()
    sim = simulator("anthropic", s)
    prompt = [blk("system", 3000, "system", bp=True)]
    seen = []
    for i, name in enumerate(("anthropic", "anthropic-bedrock", "anthropic-vertex", "anthropic")):
        r = sim.request(
            prompt, "claude-sonnet-4-5", at(10 * i), store.on_platform(cache_platform(name))
        )
        seen.append((r.read, r.write))
    assert seen == [(0, 3000), (0, 3000), (0, 3000), (3000, 0)]
    assert cache_platform("Anthropic-Bedrock") == "anthropic-bedrock"
    assert cache_platform("anthropic") == cache_platform("openai") == ""
    assert store.on_platform("") is store and len(store) == 3


def test_a_session_that_switches_platform_does_not_read_the_other_platforms_entries() -> None:
    """An imported session served by the API, then by Bedrock (a change event), then by the
    API again: the Bedrock call reads nothing, the API call after it reads the API's entry."""
    blocks = [
        {"section": "system", "name": "system", "text": "rules", "tokens": 3000, "breakpoint": True}
    ]
    events: list[dict[str, object]] = [
        {"type": "enter", "at": "2026-10-03T09:00:00Z", "function": "main"}
    ]
    for i, platform in enumerate((None, "anthropic-bedrock", "anthropic")):
        when = f"2026-10-03T09:0{i}:00Z"
        if platform is not None:
            events.append({"type": "change", "at": when, "provider": platform})
        events.append({"type": "llm", "at": when, "request": {"blocks": blocks}})
    events.append({"type": "exit", "at": "2026-10-03T09:03:00Z", "function": "main"})
    doc = {
        "format": "context-session/1",
        "session": {
            "id": "s",
            "agent": {"name": "a"},
            "provider": "anthropic",
            "model": "claude-sonnet-4-5-20250929",
        },
        "events": events,
    }
    a = analyze(parse_session(json.dumps(doc), "platforms.json"))
    assert [(s.platform, s.read, s.write) for s in a.steps] == [
        ("anthropic", 0, 3000),
        ("anthropic-bedrock", 0, 3000),
        ("anthropic", 3000, 0),
    ]
    miss = a.steps[1].miss
    assert miss is not None and (miss.reason, miss.cause) == ("model switched", "model_changed")
    assert "switched from anthropic API to anthropic-bedrock, whose cache is separate" in (
        miss.sentence
    )


# --- recorded markers beyond four ------------------------------------------------------------


def _recorded(n: int, tokens: int = 2000) -> tuple[RecordedBlock, ...]:
    marked = tuple(
        RecordedBlock("system", f"system[{i}]", f"part {i}", tokens=tokens, breakpoint=True)
        for i in range(n)
    )
    return (*marked, RecordedBlock("messages", "messages[0] text", "Why?", tokens=10))


def test_every_recorded_marker_is_kept_and_gpt_5_6_writes_the_latest_four() -> None:
    """Six explicit prompt_cache_breakpoint markers: all six reach the simulator, which
    writes the latest four (markers 3-6) and reads the request again through the sixth."""
    wire = recorded_wire(_recorded(6))
    assert [b.breakpoint for b in wire.blocks] == [1, 2, 3, 4, 5, 6, None]
    sim, store = simulator("openai", seg()), CacheStore()
    explicit = RequestSettings(cache_mode="explicit")
    first = sim.request(wire.blocks, "gpt-5.6", at(0), store, explicit)
    assert first.write == 12_000  # through the sixth marker; four markers would stop at 8,000
    again = sim.request(wire.blocks, "gpt-5.6", at(10), store, explicit)
    assert again.read == 12_000


def test_more_than_four_cache_control_markers_is_a_warning_not_a_silent_drop() -> None:
    """Anthropic rejects a request with more than 4 cache_control blocks: the simulator
    uses the first four and the analysis warns, naming the step."""
    blocks = [
        {"section": "system", "name": f"system[{i}]", "text": f"part {i}", "tokens": 2000,
         "breakpoint": True}
        for i in range(5)
    ]  # fmt: skip
    doc = {
        "format": "context-session/1",
        "session": {"id": "s", "agent": {"name": "a"}, "provider": "anthropic",
                    "model": "claude-sonnet-4-5"},
        "events": [
            {"type": "enter", "at": "2026-10-03T09:00:00Z", "function": "main"},
            {"type": "llm", "at": "2026-10-03T09:00:00Z", "request": {"blocks": blocks}},
            {"type": "exit", "at": "2026-10-03T09:01:00Z", "function": "main"},
        ],
    }  # fmt: skip
    a = analyze(parse_session(json.dumps(doc), "markers.json"))
    (step,) = a.steps
    assert [b.breakpoint for b in step.blocks] == [1, 2, 3, 4, 5]
    assert (step.write, step.uncached) == (8_000, 2_000)  # written through the fourth
    note = (
        "5 cache_control markers: the Messages API accepts at most 4 and rejects the "
        "request; simulated with the first 4"
    )
    assert step.warnings == (note,)
    assert analysis_json(a)["steps"][0]["warnings"] == [note]
    assert f"warning: step 1: {note}" in rules_lines(a)

"""Scenario tests that assert numbers, and a property test over generated sessions."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from assembler.analysis.engine.analyzer import analyze
from assembler.analysis.engine.layouts import builtin_layout
from assembler.analysis.engine.results import BlockAnalysis, Miss, SessionAnalysis, StepAnalysis
from assembler.analysis.reports.report_json import analysis_json
from assembler.analysis.reports.report_rows import ROW_COLUMNS, analysis_rows
from assembler.cache.tokenizers import counter
from assembler.sessions.generator import generate_session
from assembler.sessions.loader import load_session, parse_session
from assembler.sessions.model import Session

MIDNIGHT = Path(__file__).resolve().parents[3] / "sample_sessions" / "coding_agent_midnight.yaml"
MODELS = {
    "anthropic": "claude-sonnet-4-5",
    "openai": "gpt-5",
    "gemini": "gemini-2.5-pro",
    "deepseek": "deepseek-chat",
}


@pytest.fixture(autouse=True)
def _no_network(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    def refuse(*_: Any, **__: Any) -> None:
        raise AssertionError("a test tried to open a network connection")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    yield


def _session(data: dict[str, Any]) -> Session:
    return parse_session(json.dumps(data), "<generated>")


def _iso(t: datetime) -> str:
    return t.isoformat().replace("+00:00", "Z")


def inline_midnight_session() -> Session:
    """A small generated session whose events run from 23:58 to past midnight, 10 s apart."""
    data = generate_session(12, 7)
    start = datetime(2026, 3, 12, 23, 58, 0, tzinfo=UTC)
    for i, event in enumerate(data["events"]):
        event["at"] = _iso(start + timedelta(seconds=10 * i))
    return _session(data)


def _first_after_midnight(a: SessionAnalysis) -> int:
    """Index of the first step on a later local day than the step before it (UTC here)."""
    for i in range(1, len(a.steps)):
        if a.steps[i].timestamp.date() != a.steps[i - 1].timestamp.date():
            return i
    raise AssertionError("the session does not cross midnight")


def _midnight_case() -> tuple[Session, str]:
    """The sample file when it exists, otherwise the inline equivalent."""
    if MIDNIGHT.exists():
        return load_session(MIDNIGHT), "file"
    return inline_midnight_session(), "inline"


# --- (a) midnight ---------------------------------------------------------------------------


def _assert_midnight(session: Session, index_of: Any) -> None:
    seed = analyze(session, builtin_layout("seed"))
    moved = analyze(session, builtin_layout("date-in-l0"))
    i = index_of(seed)
    s, m = seed.steps[i], moved.steps[i]
    # seed: the date sits at the tail of L1, after breakpoint ③ (reading 5), so tools, L0
    # and the whole L1 project part stay cached; only the date and what follows are written
    names = [b.name for b in s.blocks]
    date = names.index("current_date")
    assert s.blocks[date - 1].breakpoint == 3
    assert s.read == sum(b.tokens for b in s.blocks[:date])
    assert s.write == sum(b.tokens for b in s.blocks[date:] if b.cache == "write")
    assert {b.name for b in s.blocks if b.cache == "write"} == {"current_date", "call_tree"}
    assert s.miss is not None and s.miss.component == "current_date"
    assert s.miss.reason == "content changed" and "midnight" in s.miss.sentence
    # date-in-l0: the date is inside L0, so only the tools stay cached
    assert m.read == m.tokens["tools"]
    assert m.miss is not None and m.miss.component == "current_date" and m.miss.layer == "L0"
    assert m.read < s.read


def test_a_midnight_keeps_tools_and_l0_under_seed_but_only_tools_under_date_in_l0() -> None:
    session, kind = _midnight_case()
    if kind == "file":

        def index_of(a: SessionAnalysis) -> int:
            return next(i for i, st_ in enumerate(a.steps) if st_.label == "after-midnight")

        _assert_midnight(session, index_of)
    else:
        _assert_midnight(session, _first_after_midnight)


def test_a_midnight_inline_session() -> None:
    _assert_midnight(inline_midnight_session(), _first_after_midnight)


# --- (b) idle gaps ----------------------------------------------------------------------------


def test_b_gap_over_5_minutes_empties_the_cache_with_5m_but_not_1h() -> None:
    session, kind = _midnight_case()
    if kind == "file":
        short = analyze(session, ttl="5m")
        index = next(i for i, s in enumerate(short.steps) if s.label == "after-idle-gap")
    else:  # make a 19-minute gap before the last step
        data = generate_session(5, 3)
        last = max(i for i, e in enumerate(data["events"]) if e["type"] == "llm")
        for e in data["events"][last:]:
            e["at"] = _iso(
                datetime.fromisoformat(e["at"].replace("Z", "+00:00")) + timedelta(minutes=19)
            )
        session = _session(data)
        short = analyze(session, ttl="5m")
        index = len(short.steps) - 1
    gap = short.steps[index].timestamp - short.steps[index - 1].timestamp
    assert timedelta(minutes=5) < gap < timedelta(hours=1)
    long = analyze(session, ttl="1h")
    s, h = short.steps[index], long.steps[index]
    assert s.read == 0
    assert s.miss is not None and s.miss.reason == "expired"
    assert h.read >= h.tokens["tools"] + h.tokens["L0"]
    assert long.ttl == "1h" and short.ttl == "5m"


# --- (f) released subtrees -----------------------------------------------------------------------


def _released_steps(a: SessionAnalysis) -> list[int]:
    out = []
    for i, s in enumerate(a.steps):
        if any(b.name == "call_tree" and b.change == "released" for b in s.blocks):
            out.append(i)
    return out


def _tree(s: StepAnalysis) -> BlockAnalysis:
    return next(b for b in s.blocks if b.name == "call_tree")


def test_f_the_step_after_a_subtree_finishes_keeps_everything_before_it_cached(
    research_session: Session,
) -> None:
    anth = analyze(research_session, ttl="1h")
    released = _released_steps(anth)
    assert len(released) >= 3
    for i in released:
        s = anth.steps[i]
        # everything through breakpoint ③; the date after it is written again with the tree
        three = next(j for j, b in enumerate(s.blocks) if b.breakpoint == 3)
        before = sum(b.tokens for b in s.blocks[: three + 1])
        assert s.read >= before, s.step
    # token-prefix caching keeps the unchanged head of the tree as well
    oa = analyze(research_session, provider="openai", model="gpt-5")
    count = counter("o200k_base").count
    for i in _released_steps(oa):
        s, prev = oa.steps[i], oa.steps[i - 1]
        tree = _tree(s)
        before = sum(b.tokens for b in s.blocks[: s.blocks.index(tree)])
        new_lines = tree.text.splitlines(keepends=True)
        old_lines = _tree(prev).text.splitlines(keepends=True)
        for new, old in zip(new_lines, old_lines, strict=False):
            if new != old:
                break
            before += count(new)
        assert s.read >= (before // 128) * 128, s.step


# --- other reasons -------------------------------------------------------------------------------


def test_a_model_switch_starts_a_separate_cache() -> None:
    data = generate_session(6, 2)
    llm_at = [i for i, e in enumerate(data["events"]) if e["type"] == "llm"]
    k = llm_at[3]
    data["events"].insert(
        k, {"type": "change", "at": data["events"][k - 1]["at"], "model": "claude-opus-4-1"}
    )
    a = analyze(_session(data), ttl="1h")
    assert [s.model for s in a.steps] == ["claude-sonnet-4-5"] * 3 + ["claude-opus-4-1"] * 3
    switched = a.steps[3]
    assert switched.read == 0
    assert switched.miss is not None and switched.miss.reason == "model switched"
    assert a.steps[4].read > 0


def test_no_breakpoints_reads_nothing_and_says_why(research_session: Session) -> None:
    a = analyze(research_session, builtin_layout("no-breakpoints"), ttl="1h")
    assert all(s.read == 0 and s.write == 0 for s in a.steps)
    assert a.steps[1].miss is not None and a.steps[1].miss.reason == "no breakpoint"


def test_progress_is_reported_per_step(research_session: Session) -> None:
    seen: list[tuple[int, int]] = []
    a = analyze(research_session, progress=lambda i, n: seen.append((i, n)))
    assert seen == [(i, len(a.steps)) for i in range(1, len(a.steps) + 1)]


# --- the contract ----------------------------------------------------------------------------------


def test_json_and_rows_shape(research_session: Session) -> None:
    a = analyze(research_session)
    j = analysis_json(a)
    assert {"session", "layout", "provider", "model", "steps", "totals"} <= set(j)
    step = j["steps"][1]
    assert {
        "step",
        "label",
        "function",
        "timestamp",
        "tokens",
        "cache",
        "miss",
        "cost",
        "blocks",
    } <= set(step)
    assert set(step["tokens"]) == {"total", "tools", "L0", "L1", "L2"}
    assert {"read", "write", "uncached", "hit_ratio"} <= set(step["cache"])
    assert set(step["cost"]) == {"usd", "usd_without_cache"}
    assert {"component", "layer", "reason", "tokens_lost"} <= set(step["miss"])
    assert {b["cache"] for s in j["steps"] for b in s["blocks"]} <= {"read", "write", "uncached"}
    assert {b["change"] for s in j["steps"] for b in s["blocks"]} <= {
        "new",
        "changed",
        "unchanged",
        "released",
    }
    simulated_totals = {
        "tokens",
        "read",
        "write",
        "uncached",
        "hit_ratio",
        "usd",
        "usd_without_cache",
    }
    # one step of the sample records the provider's usage: the measured sums join the totals,
    # and its bill
    measured_totals = {"measured_read", "measured_write", "measured_uncached", "billed"}
    assert set(j["totals"]) == simulated_totals | measured_totals
    assert "measured_totals" not in j
    recorded = [s.measured for s in a.steps if s.measured is not None]
    assert j["totals"]["measured_read"] == sum(u.cache_read for u in recorded)
    assert j["totals"]["measured_write"] == sum(u.cache_write for u in recorded)
    assert j["totals"]["measured_uncached"] == sum(u.input for u in recorded)
    assert j["totals"]["tokens"] == sum(s["tokens"]["total"] for s in j["steps"])
    json.dumps(j)  # serialisable
    rows = analysis_rows(a)
    assert len(rows) == len(a.steps) and rows[1]["miss_component"] == a.steps[1].miss.component  # type: ignore[union-attr]
    assert all(list(r) == list(ROW_COLUMNS) for r in rows)
    measured_columns = ("measured_read", "measured_write", "measured_uncached", "measured_agree")
    for r, s in zip(rows, a.steps, strict=True):
        if s.measured is None:  # not recorded: the measured columns are empty
            assert {r[c] for c in measured_columns} == {""}
        else:
            assert r["measured_read"] == s.measured.cache_read
            assert r["measured_agree"] in ("yes", "no")
    # without any measured usage, the totals have the simulated keys only
    bare = replace(a, steps=tuple(replace(s, measured=None) for s in a.steps))
    assert set(analysis_json(bare)["totals"]) == simulated_totals
    assert {r[c] for r in analysis_rows(bare) for c in measured_columns} == {""}
    assert isinstance(a.steps[1].miss, Miss)


# --- property test ---------------------------------------------------------------------------------


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    steps=st.integers(min_value=5, max_value=40),
    seed=st.integers(min_value=0, max_value=10_000),
    provider=st.sampled_from(sorted(MODELS)),
    ttl=st.sampled_from([None, "5m", "1h"]),
)
def test_cache_accounting_holds_on_generated_sessions(
    steps: int, seed: int, provider: str, ttl: str | None
) -> None:
    session = _session(generate_session(steps, seed))
    a = analyze(session, provider=provider, model=MODELS[provider], ttl=ttl)
    assert len(a.steps) == steps
    written_so_far = 0  # the longest prefix any earlier request left in the cache
    for s in a.steps:
        assert min(s.read, s.write, s.uncached) >= 0
        assert s.read + s.write + s.uncached == s.tokens["total"]
        assert sum(b.tokens for b in s.blocks) == s.tokens["total"]
        assert s.tokens["total"] == sum(s.tokens[k] for k in ("tools", "L0", "L1", "L2"))
        assert s.read <= written_so_far
        assert 0.0 <= s.hit_ratio <= 1.0
        assert s.usd <= s.usd_without_cache * 2 + 1e-12  # 1h writes cost 2x input
        written_so_far = max(written_so_far, s.read + s.write)
    assert a.steps[0].read == 0


@pytest.mark.parametrize("enabled", [True, False])
def test_analyze_leaves_the_garbage_collector_as_it_found_it(
    research_session: Session, enabled: bool
) -> None:
    import gc

    seen: list[bool] = []
    (gc.enable if enabled else gc.disable)()
    try:
        analyze(research_session, progress=lambda done, total: seen.append(gc.isenabled()))
        assert gc.isenabled() is enabled
        assert seen and not any(seen)  # paused while the records are built
        with pytest.raises(ZeroDivisionError):  # an error on the way out restores it too
            analyze(research_session, progress=lambda done, total: 1 / 0)
        assert gc.isenabled() is enabled
    finally:
        gc.enable()

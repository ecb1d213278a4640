"""recommend: call-tree budgets in the search, and whether a keep-alive request pays."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from assembler.analysis.advice.breakpoint_search import Trace
from assembler.analysis.advice.recommend_text import keep_alive_sentence
from assembler.analysis.advice.recommend_trace import build_trace, lifetimes
from assembler.analysis.advice.recommendation import budget_candidates, recommend
from assembler.analysis.engine.analyzer import analyze
from assembler.analysis.engine.layouts import builtin_layout
from assembler.sessions.loader import load_session

SAMPLES = Path(__file__).resolve().parents[3] / "sample_sessions"
READ, WRITE_5M, WRITE_1H, INPUT = 0.3e-6, 3.75e-6, 6e-6, 3e-6

# --- budgets ---------------------------------------------------------------------------------


def test_budget_candidates_come_from_the_trees_own_sizes() -> None:
    sizes = [0, *range(100, 1100, 100)]  # a first step without a tree, then 100 … 1,000
    assert budget_candidates(sizes, None, floor=0) == [500, 900]
    assert budget_candidates(sizes, 500, floor=0) == [900]  # the current budget is not one
    assert budget_candidates([400] * 5, None, floor=0) == []  # every tree as large: folds all
    assert budget_candidates([], None, floor=0) == []
    assert budget_candidates(sizes, None, floor=600) == [900]
    # by default no budget is proposed for trees this small (the design folds only when over)
    assert budget_candidates(sizes, None) == []
    assert budget_candidates([s * 10 for s in sizes], None) == [5000, 9000]


def test_small_trees_get_no_budget_by_default() -> None:
    session = load_session(str(SAMPLES / "research_agent.yaml"))
    r = recommend([session], builtin_layout("seed"))
    assert r.recommended.tree_budget is None
    assert not any(c.startswith("tree_budget") for c in r.changes)


def test_a_budget_is_recommended_only_when_it_bills_less_and_says_what_the_model_loses() -> None:
    session = load_session(str(SAMPLES / "research_agent.yaml"))
    seed = builtin_layout("seed")
    _, facts = build_trace([session], seed, "anthropic", session.profile.model)
    r = recommend([session], seed, min_tree_budget=0)
    budget = r.recommended.tree_budget
    assert budget in budget_candidates(facts.tree_sizes, None, floor=0)
    assert r.after_usd == pytest.approx(analyze(session, r.recommended).totals["usd"])
    unfolded = analyze(session, replace(r.recommended, tree_budget=None)).totals["usd"]
    assert r.after_usd < unfolded
    sentence = next(c for c in r.changes if c.startswith(f"tree_budget {budget:,}"))
    assert "changes what the model sees" in sentence
    over = sum(s > (budget or 0) for s in facts.tree_sizes)
    assert f"over it on {over} of {len(facts.tree_sizes)} calls" in sentence


def test_token_prefix_caches_weigh_budgets_too() -> None:
    session = load_session(str(SAMPLES / "research_agent.yaml"))
    seed = builtin_layout("seed")
    r = recommend([session], seed, provider="openai", model="gpt-4o", min_tree_budget=0)
    assert r.after_usd <= r.before_usd
    billed = analyze(session, r.recommended, provider="openai", model="gpt-4o").totals["usd"]
    assert r.after_usd == pytest.approx(billed)
    for budget in budget_candidates(
        build_trace([session], seed, "openai", "gpt-4o")[1].tree_sizes, None, floor=0
    ):
        folded = replace(seed, tree_budget=budget)
        usd = analyze(session, folded, provider="openai", model="gpt-4o").totals["usd"]
        assert r.after_usd <= usd + 1e-12


# --- keep-alive ------------------------------------------------------------------------------


def _trace(cum: list[list[float]], alive: dict[str, list[list[bool]]]) -> Trace:
    steps = len(cum[0])
    return Trace(
        names=tuple(f"c{i}" for i in range(len(cum))),
        cum=np.array(cum),
        alive={k: np.array(v) for k, v in alive.items()},
        total=np.array(cum).max(axis=0) + 100,
        uncached_rate=np.full(steps, INPUT),
        read_rate=np.full(steps, READ),
        write_rate={"5m": np.full(steps, WRITE_5M), "1h": np.full(steps, WRITE_1H)},
        output_usd=0.0,
    )


def _one_prefix(gap: float) -> Trace:
    """10,000 tokens marked 5m; the third call comes after ``gap`` seconds, when it expired."""
    return _trace(
        [[10_000.0] * 3],
        {
            "5m": [[False, True, False]],
            "1h": [[False, True, gap < 3600]],
            "forever": [[False, True, True]],
        },
    )


def test_keep_alive_pays_when_a_few_pings_cost_less_than_the_rewrite() -> None:
    gap = 600.0  # two pings, at 5 and at 10 min
    sentence = keep_alive_sentence(_one_prefix(gap), (("c0", "5m"),), (0, 60, gap), lifetimes())
    saved = (WRITE_5M - READ) * 10_000 - 2 * READ * 10_000
    assert sentence.startswith("Keep-alive pays on 1 of 1 gaps that outlive a 5m entry")
    assert f"${saved:.4f}" in sentence


def test_keep_alive_does_not_pay_across_a_long_idle_gap() -> None:
    gap = 6000.0  # twenty pings cost more than one rewrite
    assert 20 * READ > WRITE_5M - READ
    sentence = keep_alive_sentence(_one_prefix(gap), (("c0", "5m"),), (0, 60, gap), lifetimes())
    assert sentence.startswith("Keep-alive does not pay: on all 1 gaps")


def test_keep_alive_with_a_lifetime_per_breakpoint_pings_for_the_entry_that_expired() -> None:
    """1h head alive after 20 min, 5m tail expired: pings every 5 min keep the tail,
    and the rewrite they save is the tail's, at the 5m rate."""
    head, tail, gap = 1_000.0, 9_000.0, 1200.0
    trace = _trace(
        [[head] * 2, [tail] * 2],
        {
            "1h": [[False, True], [False, True]],
            "5m": [[False, False], [False, False]],
            "forever": [[False, True], [False, True]],
        },
    )
    marks = (("c0", "1h"), ("c1", "5m"))
    sentence = keep_alive_sentence(trace, marks, (0, gap), lifetimes())
    saved = (WRITE_5M - READ) * (tail - head) - 4 * READ * tail
    assert saved > 0
    assert sentence.startswith("Keep-alive pays on 1 of 1 gaps that outlive a 1h/5m entry")
    assert f"${saved:.4f}" in sentence
    assert keep_alive_sentence(trace, (), (0, gap), lifetimes()).startswith("Keep-alive: no")

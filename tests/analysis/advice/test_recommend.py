"""recommend: the search finds the brute-force optimum, and the layout it writes bills as promised."""

from __future__ import annotations

import functools
import itertools
import json
from dataclasses import replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

from assembler.analysis.advice.breakpoint_search import Trace, brute_force, evaluate, search
from assembler.analysis.advice.mixed_lifetimes import brute_force_mixed, search_mixed
from assembler.analysis.advice.recommend_trace import build_trace
from assembler.analysis.advice.recommendation import _first_half, content_of, recommend
from assembler.analysis.engine.analyzer import analyze
from assembler.analysis.engine.layouts import BUILTIN_LAYOUTS, ComponentMove, builtin_layout
from assembler.analysis.engine.pipeline import SessionAssembler
from assembler.cli.main import main
from assembler.design.context import format_time
from assembler.design.layers import Layer, Placement
from assembler.errors import UsageError
from assembler.sessions.generator import generate_session
from assembler.sessions.loader import load_session, parse_session
from assembler.sessions.model import Session

SAMPLES = Path(__file__).resolve().parents[3] / "sample_sessions"
ASSEMBLED = ("research_agent", "coding_agent_midnight")

#: Per-token rates shaped like each provider's rules: Anthropic bills writes above input
#: (1.25×, 2× for 1h), OpenAI bills a write as input.
RATES = {
    "anthropic": (3e-6, 0.3e-6, {"5m": 3.75e-6, "1h": 6e-6}),
    "openai": (1.25e-6, 0.125e-6, {"5m": 1.25e-6, "1h": 1.25e-6}),
}


def _random_trace(rng: np.random.Generator, provider: str) -> Trace:
    n, steps = int(rng.integers(1, 13)), int(rng.integers(1, 30))
    sizes = rng.integers(0, 3000, size=(n, steps)).astype(float)
    cum = np.cumsum(sizes, axis=0) * (rng.random((n, steps)) > 0.1)  # some boundaries absent
    changed = rng.random(steps) < 0.3
    # a prefix stays alive up to the first block that changed on this request
    first_change = rng.integers(0, n + 1, size=steps)
    alive = {}
    for ttl in ("5m", "1h"):
        expired = rng.random(steps) < (0.4 if ttl == "5m" else 0.1)
        alive[ttl] = (np.arange(n)[:, None] < first_change[None, :]) & ~expired & (cum > 0)
        alive[ttl][:, 0] = False
        alive[ttl] &= ~changed[None, :] | (np.arange(n)[:, None] < 1)
    u, r, w = RATES[provider]
    total = cum.max(axis=0) + rng.integers(0, 500, size=steps)
    return Trace(
        names=tuple(f"c{i}" for i in range(n)),
        cum=cum,
        alive=alive,
        total=total,
        uncached_rate=np.full(steps, u),
        read_rate=np.full(steps, r),
        write_rate={k: np.full(steps, v) for k, v in w.items()},
        output_usd=0.0,
    )


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_branch_and_bound_finds_the_brute_force_optimum(provider: str) -> None:
    rng = np.random.default_rng(14)
    for _ in range(60):
        trace = _random_trace(rng, provider)
        for ttl in ("5m", "1h"):
            found, best = search(trace, ttl, 4), brute_force(trace, ttl, 4)
            assert found.usd == pytest.approx(best.usd, abs=1e-12)
            assert found.usd == pytest.approx(
                evaluate(trace, ttl, _indices(trace, found.breakpoints)).usd
            )


def _indices(trace: Trace, names: tuple[str, ...]) -> list[int]:
    return [trace.names.index(n) for n in names]


def _generated(steps: int, seed: int) -> Session:
    return parse_session(yaml.safe_dump(generate_session(steps, seed)), f"gen-{seed}.yaml")


def test_the_trace_bills_every_breakpoint_set_exactly_as_the_simulator_does() -> None:
    """Brute force through analyze itself, on a case with at most 12 block boundaries."""
    session = _generated(8, 5)
    seed = builtin_layout("seed")
    trace, _ = build_trace([session], seed, "anthropic", session.profile.model)
    # keep the case small: switch off components until at most 8 boundaries remain
    keep = set(trace.names[:3]) | set(trace.names[-5:])
    off = {n: ComponentMove(enabled=False) for n in trace.names if n not in keep}
    layout = replace(seed, components=off)
    trace, _ = build_trace([session], layout, "anthropic", session.profile.model)
    assert len(trace.names) <= 12
    billed: dict[tuple[tuple[str, ...], str], float] = {}
    for ttl in ("5m", "1h"):
        for k in range(5):
            for chosen in itertools.combinations(trace.names, k):
                head = replace(layout, breakpoints=tuple(f"after:{n}" for n in chosen), ttl=ttl)
                usd = analyze(session, head).totals["usd"]
                billed[(chosen, ttl)] = usd
                assert evaluate(trace, ttl, _indices(trace, chosen)).usd == pytest.approx(usd)
    cheapest = min(billed.values())
    found = min((search(trace, ttl, 4) for ttl in ("5m", "1h")), key=lambda c: c.usd)
    assert billed[(found.breakpoints, found.ttl)] == pytest.approx(cheapest)


def _across_midnight(data: dict[str, Any]) -> dict[str, Any]:
    """The same session moved so that midnight falls between its calls."""
    events = data["events"]
    times = [datetime.fromisoformat(e["at"].replace("Z", "+00:00")) for e in events]
    middle = times[len(times) // 2]
    midnight = datetime.combine(
        middle.date() + timedelta(days=1), datetime.min.time(), middle.tzinfo
    )
    shift = midnight - middle - timedelta(seconds=1)
    for e, t in zip(events, times, strict=True):
        e["at"] = format_time(t + shift)
    return data


def test_openai_order_within_a_layer_matches_brute_force() -> None:
    """Token-prefix rules: no breakpoints, so the order of a layer is what the search can change."""
    session = parse_session(
        yaml.safe_dump(_across_midnight(generate_session(10, 9))), "midnight.yaml"
    )
    group = ("git_repo_flag", "bindings", "deferred_catalog", "current_date")
    seed = builtin_layout("seed")
    current = replace(seed, components={"current_date": ComponentMove(order=0)}, name="date-first")
    provider, model = "openai", "gpt-4o"
    costs = []
    # the rest of the project part stays ahead; these four take the tail in every order
    for perm in itertools.permutations(group):
        moves = {n: ComponentMove(order=90 + i) for i, n in enumerate(perm)}
        costs.append(
            analyze(session, replace(seed, components=moves), provider=provider, model=model)
        )
    best = min(a.totals["usd"] for a in costs)
    r = recommend([session], current, provider=provider, model=model)
    assert r.after_usd <= best + 1e-12
    assert r.after_usd < r.before_usd


#: The seed layout with the per-call timestamp moved into L0, ahead of everything stable:
#: from there no move the search makes brings it back to where the design puts it.
PERTURBED = replace(
    builtin_layout("seed"),
    name="ts",
    components={"timestamp": ComponentMove(layer=Layer.L0, order=11, placement=Placement.SYSTEM)},
)
STARTS = {"ts": PERTURBED} | {name: builtin_layout(name) for name in BUILTIN_LAYOUTS}


@functools.cache
def _builtin_bills(sample: str) -> dict[str, float]:
    session = load_session(str(SAMPLES / f"{sample}.yaml"))
    return {n: analyze(session, builtin_layout(n)).totals["usd"] for n in BUILTIN_LAYOUTS}


@pytest.mark.parametrize("start", STARTS)
@pytest.mark.parametrize("sample", ASSEMBLED)
def test_on_the_samples_the_recommendation_costs_no_more_than_any_built_in_layout(
    sample: str, start: str
) -> None:
    """Whatever the current layout, the design's own arrangements of the same content are
    starts too (a layout that changes the text, split-tree or expose-full, is no rearrangement)."""
    session = load_session(str(SAMPLES / f"{sample}.yaml"))
    r = recommend([session], STARTS[start])
    same = content_of(STARTS[start])
    for name, usd in _builtin_bills(sample).items():
        if content_of(builtin_layout(name)) == same:
            assert r.after_usd <= usd + 1e-12, name
    assert r.after_usd <= r.before_usd + 1e-12
    assert r.after_usd == pytest.approx(analyze(session, r.recommended).totals["usd"])


@pytest.mark.parametrize("sample", ASSEMBLED)
def test_the_first_half_of_a_session_bills_its_first_steps_exactly(sample: str) -> None:
    """What lets recommend skip a built-in layout on half a bill: a step is assembled
    from the events before it alone."""
    session = load_session(str(SAMPLES / f"{sample}.yaml"))
    half = _first_half(session)
    assert half is not None
    for name in BUILTIN_LAYOUTS:
        full = analyze(session, builtin_layout(name)).steps
        part = analyze(half, builtin_layout(name)).steps
        assert 0 < len(part) < len(full)
        assert [s.usd for s in part] == [s.usd for s in full[: len(part)]], name


def test_a_session_of_one_call_is_recommended_for_with_its_whole_bill() -> None:
    """Its first half holds no call (nothing to bill early): the one step is billed whole."""
    session = parse_session(yaml.safe_dump(generate_session(1, 0)), "one.yaml")
    assert _first_half(session) is None
    r = recommend([session], builtin_layout("seed"))
    assert r.after_usd <= r.before_usd
    assert r.after_usd == pytest.approx(analyze(session, r.recommended).totals["usd"])


def test_a_perturbed_layout_is_led_back_to_the_design_and_says_so() -> None:
    session = load_session(str(SAMPLES / "research_agent.yaml"))
    r = recommend([session], PERTURBED)
    assert r.after_usd == pytest.approx(recommend([session], builtin_layout("seed")).after_usd)
    assert "timestamp" not in r.recommended.components
    assert r.changes[0].startswith(
        "From the built-in layout seed, not ts: timestamp L0 order 11 → L2 order"
    )


@pytest.mark.parametrize("start", ["ts", "seed", "split-tree"])
def test_under_a_token_prefix_cache_no_built_in_layout_costs_less(start: str) -> None:
    """No breakpoints to search: a built-in's lifetime is part of what it is billed on."""
    session = load_session(str(SAMPLES / "research_agent.yaml"))
    r = recommend([session], STARTS[start], provider="openai", model="gpt-4o")
    for name in BUILTIN_LAYOUTS:
        if content_of(builtin_layout(name)) != content_of(STARTS[start]):
            continue  # another text, not a rearrangement of this one
        usd = analyze(session, builtin_layout(name), provider="openai", model="gpt-4o")
        assert r.after_usd <= usd.totals["usd"] + 1e-12, name
    assert r.after_usd == pytest.approx(
        analyze(session, r.recommended, provider="openai", model="gpt-4o").totals["usd"]
    )


@pytest.mark.parametrize("start", ["seed-1h", "no-breakpoints", "computer-use", "tree-budget"])
def test_a_layout_with_the_design_s_arrangement_is_searched_from_itself(start: str) -> None:
    """Ties keep the current layout: no start from seed when it bills no less."""
    session = load_session(str(SAMPLES / "research_agent.yaml"))
    r = recommend([session], builtin_layout(start))
    assert not any(c.startswith("From the built-in layout") for c in r.changes)
    assert r.recommended.add == builtin_layout(start).add


def test_compare_reproduces_the_saving(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sample = str(SAMPLES / "coding_agent_midnight.yaml")
    out = tmp_path / "recommended.yaml"
    assert main(["recommend", sample, "-o", str(out), "--json", "--sessions-per-month", "500"]) == 0
    rec = json.loads(capsys.readouterr().out)
    assert rec["after"]["usd"] < rec["before"]["usd"]
    assert rec["saving_per_month"] == pytest.approx(rec["saving_per_session"] * 500)
    assert out.read_text("utf-8") == rec["layout"]
    main(["compare", sample, "--base", "seed", "--head", str(out), "--json"])
    cmp = json.loads(capsys.readouterr().out)
    assert cmp["base"]["usd"] == pytest.approx(rec["before"]["usd"])
    assert cmp["head"]["usd"] == pytest.approx(rec["after"]["usd"])
    assert cmp["head"]["hit_ratio"] == pytest.approx(rec["after"]["hit_ratio"], abs=1e-6)


def test_a_folder_is_billed_as_many_sessions_of_one_agent(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for seed in (1, 2):
        (tmp_path / f"s{seed}.yaml").write_text(yaml.safe_dump(generate_session(6, seed)), "utf-8")
    assert main(["recommend", str(tmp_path), "--json"]) == 0
    rec = json.loads(capsys.readouterr().out)
    sessions = [load_session(str(tmp_path / f"s{s}.yaml")) for s in (1, 2)]
    before = sum(analyze(s).totals["usd"] for s in sessions)
    assert rec["sessions"] == 2
    assert rec["before"]["usd"] == pytest.approx(before)
    assert rec["saving_per_session"] == pytest.approx(
        (rec["before"]["usd"] - rec["after"]["usd"]) / 2
    )


def test_a_session_of_recorded_requests_gets_a_marker_plan_not_a_layout(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["recommend", str(SAMPLES / "imported_claude_code.yaml")]) == 0
    out = capsys.readouterr().out
    assert "before  recorded markers" in out and "Keep the recorded markers" in out
    with pytest.raises(UsageError, match="every call is a recorded request"):
        recommend([load_session(SAMPLES / "imported_claude_code.yaml")], builtin_layout("seed"))


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_mixed_lifetimes_search_finds_the_brute_force_optimum(provider: str) -> None:
    rng = np.random.default_rng(41)
    for _ in range(25):
        trace = _random_trace(rng, provider)
        if len(trace.names) > 8:
            continue  # the brute force grows with 2^k lifetimes per set
        found, best = search_mixed(trace, 4), brute_force_mixed(trace, 4)
        assert found.usd == pytest.approx(best.usd, abs=1e-12)
        labels = [t for _, t in found.marks]
        assert labels == sorted(labels, key=("1h", "5m").index)  # 1h entries first
        # a uniform lifetime is one of the mixed choices: never cheaper
        for ttl in ("5m", "1h"):
            assert found.usd <= search(trace, ttl, 4).usd + 1e-12


def test_a_volatile_component_moves_to_the_project_tail_before_the_date() -> None:
    """Reading 1: the date stays last before the call tree; ③ closes on the moved component."""
    session = load_session(str(SAMPLES / "coding_agent_midnight.yaml"))
    r = recommend([session], builtin_layout("seed"))
    assert r.recommended.components["memory_global"].layer is Layer.L1
    registry = SessionAssembler(session, r.recommended).registry
    l1 = sorted(
        (c for c in registry if c.layer is Layer.L1 and c.where is Placement.SYSTEM),
        key=lambda c: c.order,
    )
    assert [c.name for c in l1][-2:] == ["memory_global", "current_date"]
    assert "after:memory_global" in r.recommended.breakpoints

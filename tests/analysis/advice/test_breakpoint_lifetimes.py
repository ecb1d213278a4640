"""A lifetime per breakpoint: the layout file, the wire, the simulator's writes and their price."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest
import yaml

from assembler.analysis.advice.mixed_lifetimes import evaluate_mixed
from assembler.analysis.advice.recommend_text import layout_text
from assembler.analysis.advice.recommend_trace import build_trace
from assembler.analysis.engine.analyzer import analyze
from assembler.analysis.engine.layouts import LayoutError, builtin_layout, load_layout, parse_layout
from assembler.analysis.engine.pipeline import SessionAssembler
from assembler.cache.anthropic import AnthropicSimulator
from assembler.cache.prices.pricing import price, step_cost
from assembler.cache.segmenter import Segmenter
from assembler.cache.store import CacheStore
from assembler.cache.tokenizers import counter
from assembler.cli.main import main
from assembler.design.assembly import Assembly
from assembler.design.layers import Layer, Placement
from assembler.design.wire import WireBlock, WireError, build_wire, to_anthropic
from assembler.sessions.loader import load_session

SAMPLES = Path(__file__).resolve().parents[3] / "sample_sessions"
RESEARCH = str(SAMPLES / "research_agent.yaml")
T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
MODEL = "claude-sonnet-4-5"

# --- the layout file -------------------------------------------------------------------------


def test_a_breakpoint_may_carry_its_own_lifetime_and_the_old_form_stays_valid() -> None:
    layout = parse_layout(
        {"breakpoints": [{"at": "tools", "ttl": "1h"}, "system:L0", "history"], "ttl": "5m"},
        "x.yaml",
    )
    assert layout.breakpoints == ("tools", "system:L0", "history")
    assert layout.breakpoint_ttl == {"tools": "1h"}
    old = parse_layout({"breakpoints": ["tools", "system:L0"], "ttl": "1h"}, "y.yaml")
    assert old.breakpoints == ("tools", "system:L0") and old.breakpoint_ttl == {}
    # a file written from a layout reads back to the same layout
    again = parse_layout(yaml.safe_load(layout_text(layout)), "x.yaml")
    assert (again.breakpoints, again.breakpoint_ttl, again.ttl) == (
        layout.breakpoints,
        layout.breakpoint_ttl,
        layout.ttl,
    )


@pytest.mark.parametrize(
    ("breakpoints", "ttl", "field"),
    [
        (["tools", {"at": "system:L0", "ttl": "1h"}], None, "breakpoints[1].ttl"),
        ([{"at": "tools", "ttl": "5m"}, "system:L0"], "1h", "breakpoints[0].ttl"),
        (
            [{"at": "tools", "ttl": "5m"}, {"at": "history", "ttl": "1h"}],
            None,
            "breakpoints[0].ttl",
        ),
    ],
)
def test_a_5m_breakpoint_before_a_1h_one_is_refused_in_one_line(
    tmp_path: Path, breakpoints: list[object], ttl: str | None, field: str
) -> None:
    path = tmp_path / "mixed.yaml"
    doc: dict[str, object] = {"name": "mixed", "breakpoints": breakpoints}
    if ttl:
        doc["ttl"] = ttl
    path.write_text(yaml.safe_dump(doc), "utf-8")
    with pytest.raises(LayoutError) as exc:
        load_layout(str(path))
    message = str(exc.value)
    assert message.startswith(str(path)) and f" {field}: a 1h breakpoint" in message
    assert "\n" not in message


@pytest.mark.parametrize(
    ("item", "field"),
    [
        ({"at": "tools", "ttl": "2h"}, "breakpoints[0].ttl"),
        ({"at": "nowhere", "ttl": "1h"}, "breakpoints[0].at"),
        ({"ttl": "1h"}, "breakpoints[0]"),
        ({"at": "tools", "lifetime": "1h"}, "breakpoints[0].lifetime"),
    ],
)
def test_a_bad_breakpoint_mapping_names_its_field(item: object, field: str) -> None:
    with pytest.raises(LayoutError) as exc:
        parse_layout({"breakpoints": [item]}, "z.yaml")
    assert exc.value.field == field


# --- the wire --------------------------------------------------------------------------------


def _first_assembly() -> Assembly:
    assembler = SessionAssembler(load_session(RESEARCH), builtin_layout("seed"))
    return assembler.assemble(next(iter(assembler.steps()))).assembly


def test_each_marked_block_carries_its_breakpoints_lifetime_into_the_request() -> None:
    assembly = _first_assembly()
    wire = build_wire(assembly, ("tools", "system:L0", "history"), {"tools": "1h"})
    marked = [wire.blocks[i] for i in wire.breakpoints]
    assert [b.ttl for b in marked] == ["1h", None, None]
    request = to_anthropic(wire, MODEL)
    assert request["tools"][-1]["cache_control"] == {"type": "ephemeral", "ttl": "1h"}
    system_marks = [s["cache_control"] for s in request["system"] if "cache_control" in s]
    assert system_marks == [{"type": "ephemeral"}]


def test_the_wire_refuses_a_5m_breakpoint_ahead_of_a_1h_one() -> None:
    with pytest.raises(WireError, match="1h breakpoint after a 5m one"):
        build_wire(_first_assembly(), ("tools", "history"), {"tools": "5m", "history": "1h"})


# --- the simulator and the bill --------------------------------------------------------------


def _block(name: str, lines: int, mark: int, ttl: str | None) -> WireBlock:
    body = "\n".join(f"{name} line {i}: the cache keeps prefixes of requests" for i in range(lines))
    return WireBlock(name, Layer.L1, Placement.SYSTEM, body, True, mark, ttl=ttl)


def test_writes_live_as_long_as_their_breakpoint_and_are_priced_at_its_rate() -> None:
    segmenter = Segmenter(counter("o200k_base"))
    blocks = [_block("head", 150, 1, "1h"), _block("tail", 150, 2, "5m")]
    head, tail = (segmenter.tokens(b.name, b.text) for b in blocks)
    sim, store = AnthropicSimulator(segmenter), CacheStore()
    first = sim.request(blocks, MODEL, T0, store)
    assert (first.write, first.write_1h) == (head + tail, head)
    # 20 minutes later the 5m entry is gone, the 1h one is not
    later = sim.request(blocks, MODEL, T0 + timedelta(minutes=20), store)
    assert (later.read, later.write, later.write_1h) == (head, tail, 0)
    cost = step_cost(
        "anthropic", MODEL, read=0, write=head + tail, uncached=0, output=0, write_1h=first.write_1h
    )
    one_hour = price("anthropic", MODEL, total_input=head, cache_write=head, write_1h=True)
    five_min = price("anthropic", MODEL, total_input=tail, cache_write=tail)
    assert cost.usd == pytest.approx(one_hour + five_min)
    assert one_hour / head == pytest.approx(2 * price("anthropic", MODEL, total_input=1))
    assert five_min / tail == pytest.approx(1.25 * price("anthropic", MODEL, total_input=1))


def test_a_recorded_requests_own_lifetime_still_sets_its_writes() -> None:
    segmenter = Segmenter(counter("o200k_base"))
    blocks = [_block("head", 150, 1, None)]
    sim, store = AnthropicSimulator(segmenter), CacheStore()
    r = sim.request(blocks, MODEL, T0, store, ttl="1h")
    assert r.write_1h == r.write > 0
    assert sim.request(blocks, MODEL, T0 + timedelta(minutes=30), store).read == r.write


def test_the_trace_bills_per_breakpoint_lifetimes_exactly_as_the_simulator_does() -> None:
    session = load_session(RESEARCH)
    seed = builtin_layout("seed")
    trace, _ = build_trace([session], seed, "anthropic", MODEL)
    rng = np.random.default_rng(3)
    for _ in range(12):
        k = int(rng.integers(1, 5))
        chosen = sorted(rng.choice(len(trace.names), size=k, replace=False).tolist())
        hours = int(rng.integers(0, k + 1))  # the first ones 1h, the rest 5m
        marks = [(c, "1h" if i < hours else "5m") for i, c in enumerate(chosen)]
        head = replace(
            seed,
            breakpoints=tuple(f"after:{trace.names[c]}" for c, _ in marks),
            breakpoint_ttl={f"after:{trace.names[c]}": t for c, t in marks},
            ttl=None,
        )
        billed = analyze(session, head).totals["usd"]
        assert evaluate_mixed(trace, marks).usd == pytest.approx(billed), marks


def test_compare_reproduces_the_mixed_lifetime_saving(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "recommended.yaml"
    assert main(["recommend", RESEARCH, "-o", str(out), "--json"]) == 0
    rec = json.loads(capsys.readouterr().out)
    layout = load_layout(str(out))
    lifetimes = [layout.breakpoint_ttl.get(a) for a in layout.breakpoints]
    assert "1h" in lifetimes and "5m" in lifetimes  # the mixed lifetimes bill less here
    assert any(c.startswith("A lifetime per breakpoint") for c in rec["changes"])
    uniform = min(
        analyze(load_session(RESEARCH), replace(layout, breakpoint_ttl={}, ttl=t)).totals["usd"]
        for t in ("5m", "1h")
    )
    assert rec["after"]["usd"] < uniform
    main(["compare", RESEARCH, "--base", "seed", "--head", str(out), "--json"])
    cmp = json.loads(capsys.readouterr().out)
    assert cmp["base"]["usd"] == pytest.approx(rec["before"]["usd"])
    assert cmp["head"]["usd"] == pytest.approx(rec["after"]["usd"])

"""``analyze --json`` written step by step from kept pieces is the very document
``json.dumps(analysis_json(a), indent=2, ensure_ascii=False)`` writes.

Real analyses (every sample session, under what-if layouts, and a generated one)
and made-up steps whose values take every odd shape the encoder spells its own
way (a bool where an int goes, NaN, subclasses, keys holding ``%`` or quotes),
with block records shared between steps as the engine shares them.
"""

from __future__ import annotations

import enum
import json
import math
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from assembler.analysis.bill import compare_measured, measured_check_json
from assembler.analysis.engine.analyzer import analyze
from assembler.analysis.engine.layouts import load_layout
from assembler.analysis.engine.results import (
    BlockAnalysis,
    DiagnosticCheck,
    Miss,
    SessionAnalysis,
    StepAnalysis,
)
from assembler.analysis.reports.report_json import analysis_json, write_analysis_json
from assembler.analysis.reports.report_json_steps import CHECK_FIELDS
from assembler.sessions.generator import generate_session, write_session
from assembler.sessions.loader import load_session
from assembler.sessions.model import Usage

SAMPLES_DIR = Path(__file__).parents[2] / "sample_sessions"
SAMPLES = sorted(SAMPLES_DIR.glob("*.yaml"))


def _streamed(a: SessionAnalysis) -> str:
    out: list[str] = []
    write_analysis_json(a, out.append)
    return "".join(out)


def _dumped(a: SessionAnalysis) -> str:
    return json.dumps(analysis_json(a), indent=2, ensure_ascii=False)


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.stem)
@pytest.mark.parametrize("layout", ["seed", "situation-first"])
def test_sample_sessions_stream_as_dumped(path: Path, layout: str) -> None:
    a = analyze(load_session(path), load_layout(layout))
    assert _streamed(a) == _dumped(a)


def test_a_generated_session_streams_as_dumped(tmp_path: Path) -> None:
    path = tmp_path / "g.jsonl"
    write_session(generate_session(150, 3), path)
    a = analyze(load_session(path))
    assert len(a.steps) == 150 and any(s.miss for s in a.steps)
    assert _streamed(a) == _dumped(a)


def test_a_kept_inferred_text_serves_only_its_own_types() -> None:
    """The text of an inferred size is kept per (block, tokens); ``True`` is 1 as a key,
    but the encoder writes it ``true``."""
    a = analyze(load_session(SAMPLES[0]))
    sizes: list[Any] = [1, True, 1, 1.0]
    steps = tuple(
        replace(s, inferred=(("block", n),)) for s, n in zip(a.steps[:4], sizes, strict=True)
    )
    b = replace(a, steps=steps)
    assert '"tokens": true' in _streamed(b)
    assert _streamed(b) == _dumped(b)


def test_the_check_template_has_the_members_measured_check_json_writes() -> None:
    """A check of other members is still written right (the generic walk), only slower: the
    template's list of members is the comparison's own, so the two cannot drift apart."""
    a = analyze(load_session(SAMPLES_DIR / "imported_claude_code.yaml"))
    checks = compare_measured(a)
    assert checks  # the sample carries billed usage
    written = measured_check_json(checks[0])
    assert tuple(written) == CHECK_FIELDS
    assert tuple(written["read_end"]) == ("simulated", "measured")  # type: ignore[arg-type]


def test_a_step_holding_other_than_ascii_is_written_alone(tmp_path: Path) -> None:
    # a wide character makes the whole text it is joined into wide (slower to check
    # and encode): the steps around it are still joined, it is not
    path = tmp_path / "g.jsonl"
    write_session(generate_session(150, 3), path)
    a = analyze(load_session(path))
    wide = {3, 100}
    a = replace(
        a,
        steps=tuple(replace(s, label="naïve") if i in wide else s for i, s in enumerate(a.steps)),
    )
    out: list[str] = []
    write_analysis_json(a, out.append)
    assert "".join(out) == _dumped(a)
    steps_in = [piece.count('{\n      "step": ') for piece in out]
    assert [n for piece, n in zip(out, steps_in, strict=True) if not piece.isascii()] == [1, 1]
    assert max(steps_in) == 150 - 128  # the last batch, all ASCII, still joined


class _Str(str):
    pass


class _Count(enum.IntEnum):
    TWO = 2


ODD_INTS = st.sampled_from([0, 7, -3, 2**60, True, False, _Count.TWO])
ODD_FLOATS = st.sampled_from([0.0, 0.1, 1e-9, 1e300, -2.5, math.nan, math.inf, -math.inf])
ODD_TEXT = st.one_of(
    st.text(max_size=6),
    st.sampled_from(["%s", "%", '"q"', "a\nb", "é", "\u2028", _Str("sub")]),
)
NAMES = st.sampled_from(["total", "tools", "L0", "%d", '"k"', "é"])

BLOCKS = st.builds(
    BlockAnalysis,
    name=ODD_TEXT,
    layer=st.sampled_from(["L0", "L1", "L2"]),
    section=st.sampled_from(["tools", "system", "messages"]),
    tokens=ODD_INTS,
    cache=st.sampled_from(["read", "write", "uncached", _Str("read")]),
    change=st.sampled_from(["new", "changed", "unchanged"]),
    breakpoint=st.one_of(st.none(), ODD_INTS),
    stored=st.just(""),
    cacheable=st.booleans(),
)


@st.composite
def steps(draw: st.DrawFn, pool: list[BlockAnalysis], number: int) -> StepAnalysis:
    at = datetime(2026, 3, 2, tzinfo=UTC) + timedelta(seconds=number)
    provider = draw(st.sampled_from(["anthropic", "openai"]))
    return StepAnalysis(
        step=number,
        label=draw(st.one_of(st.none(), ODD_TEXT)),
        function=draw(ODD_TEXT),
        call_path=tuple(draw(st.lists(ODD_TEXT, max_size=3))),
        depth=draw(ODD_INTS),
        timestamp=at,
        tokens=draw(st.dictionaries(NAMES, ODD_INTS, max_size=4)),
        read=draw(ODD_INTS),
        write=draw(ODD_INTS),
        uncached=draw(ODD_INTS),
        hit_ratio=draw(ODD_FLOATS),
        cached_prefix_tokens=draw(ODD_INTS),
        miss=draw(
            st.one_of(
                st.none(),
                st.builds(
                    Miss,
                    component=ODD_TEXT,
                    layer=ODD_TEXT,
                    reason=ODD_TEXT,
                    tokens_lost=ODD_INTS,
                    sentence=ODD_TEXT,
                    cause=ODD_TEXT,
                ),
            )
        ),
        usd=draw(ODD_FLOATS),
        usd_without_cache=draw(ODD_FLOATS),
        # mostly the previous step's records again, as the engine hands them back
        blocks=tuple(draw(st.lists(st.sampled_from(pool), max_size=6))) if pool else (),
        measured=draw(st.one_of(st.none(), st.builds(Usage, input=st.integers(0, 9)))),
        provider=provider,
        model=draw(ODD_TEXT),
        diagnostic=draw(
            st.one_of(
                st.none(),
                st.builds(
                    DiagnosticCheck,
                    provider=st.just("anthropic"),
                    type=st.none(),
                    reason=st.none(),
                    missed_tokens=st.none(),
                    ours=st.none(),
                    agrees=st.none(),
                    sentence=ODD_TEXT,
                ),
            )
        ),
        platform=draw(st.sampled_from(["", provider, "anthropic-bedrock"])),
        write_ttl=draw(st.sampled_from(["", "1h"])),
        price_context=draw(
            st.sampled_from(
                [(), (("service_tier", "priority"),), (("processing", "batch"), ("speed", "fast"))]
            )
        ),
        inferred=tuple(draw(st.lists(st.tuples(ODD_TEXT, ODD_INTS), max_size=2))),
        warnings=tuple(draw(st.lists(ODD_TEXT, max_size=2))),
    )


@st.composite
def analyses(draw: st.DrawFn) -> SessionAnalysis:
    pool = draw(st.lists(BLOCKS, max_size=8))
    count = draw(st.integers(0, 6))
    return SessionAnalysis(
        session="s",
        layout="seed",
        provider="anthropic",
        model="claude-sonnet-4-5",
        ttl="5m",
        approximate_tokens=False,
        steps=tuple(draw(steps(pool, n)) for n in range(1, count + 1)),
        totals={"tokens": 1, "hit_ratio": 0.5, "usd": 0.25, "usd_without_cache": 0.5},
    )


@pytest.mark.slow
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(a=analyses())
def test_made_up_steps_stream_as_dumped(a: SessionAnalysis) -> None:
    assert _streamed(a) == _dumped(a)


def test_the_output_is_still_json() -> None:
    a = analyze(load_session(SAMPLES[0]))
    whole: Any = json.loads(_streamed(a))
    assert [s["step"] for s in whole["steps"]] == [s.step for s in a.steps]

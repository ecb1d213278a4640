"""What the per-step engine relies on to stay fast: positional records, the collector
left with the analysis in its oldest generation, the rules read by libyaml."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from dataclasses import fields
from importlib import resources

import pytest
import yaml

from assembler.analysis.engine.analyzer import analyze, totals_of
from assembler.analysis.engine.results import StepAnalysis
from assembler.cache.rules import rules
from assembler.cache.simulation import CacheResult
from assembler.collector import freeze_all, release_frozen
from assembler.sessions.model import Session


def test_records_built_by_position_keep_their_field_order() -> None:
    # the engine and the Anthropic simulator pass these fields by position
    assert [f.name for f in fields(StepAnalysis)] == [
        "step",
        "label",
        "function",
        "call_path",
        "depth",
        "timestamp",
        "tokens",
        "read",
        "write",
        "uncached",
        "hit_ratio",
        "cached_prefix_tokens",
        "miss",
        "usd",
        "usd_without_cache",
        "blocks",
        "measured",
        "provider",
        "model",
        "diagnostic",
        "platform",
        "write_ttl",
        "inferred",
        "warnings",
        "price_context",
        "token_scale",
    ]
    assert [f.name for f in fields(CacheResult)] == [
        "total",
        "read",
        "write",
        "block_tokens",
        "block_cache",
        "expired",
        "below_minimum",
        "cached_blocks",
        "notes",
        "cause",
        "setting_changes",
        "expected",
        "write_1h",
    ]


def test_positional_fields_hold_what_they_name(research_session: Session) -> None:
    a = analyze(research_session)
    for s in a.steps:
        assert s.timestamp == s.timestamp.replace()  # a datetime, not a count
        assert s.cached_prefix_tokens == s.read
        total = s.tokens["total"]
        assert s.hit_ratio == (s.read / total if total else 0.0)
        assert s.provider == a.provider and s.model == a.model
        assert isinstance(s.warnings, tuple) and isinstance(s.inferred, tuple)


@pytest.fixture
def collecting() -> Iterator[None]:
    was = gc.isenabled()
    gc.enable()
    release_frozen()  # what an earlier test froze: only generations change
    yield
    if not was:
        gc.disable()


@pytest.mark.usefixtures("collecting")
def test_the_analysis_leaves_the_youngest_generation(research_session: Session) -> None:
    collections: list[str] = []

    def seen(phase: str, info: dict[str, int]) -> None:
        collections.append(phase)

    gc.callbacks.append(seen)
    try:
        a = analyze(research_session)
        assert collections == []  # no scan of the new records on the way out
    finally:
        gc.callbacks.remove(seen)
    assert gc.get_freeze_count() == 0  # moved on, not left frozen
    step = a.steps[-1]
    assert not any(o is step for o in gc.get_objects(generation=0))
    assert any(o is step for o in gc.get_objects())  # still seen by a full collection


@pytest.mark.usefixtures("collecting")
def test_objects_a_caller_froze_stay_frozen(research_session: Session) -> None:
    kept: list[int] = []  # a tracked container, frozen below (as the app freezes for reuse)
    freeze_all()
    try:
        assert not any(o is kept for o in gc.get_objects())
        analyze(research_session)
        assert gc.get_freeze_count() > 0
        assert not any(o is kept for o in gc.get_objects())  # still out of every collection
    finally:
        release_frozen()
    assert any(o is kept for o in gc.get_objects())


def test_rules_read_by_libyaml_are_the_safe_loaders_own() -> None:
    text = resources.files("assembler.data").joinpath("cache_rules.yaml").read_text("utf-8")
    assert rules() == yaml.safe_load(text)


def test_totals_are_the_sums_over_the_steps(research_session: Session) -> None:
    steps = analyze(research_session).steps
    totals = totals_of(steps)
    assert totals["tokens"] == sum(s.tokens["total"] for s in steps)
    assert totals["usd"] == sum(s.usd for s in steps)
    assert totals["usd_without_cache"] == sum(s.usd_without_cache for s in steps)
    assert totals["write"] == sum(s.write for s in steps)

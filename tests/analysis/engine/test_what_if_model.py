"""A what-if provider/model is assembled for, not only priced at (design §4, L0 4: the
model guidance depends on the provider)."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from assembler.analysis.engine.analyzer import analyze
from assembler.analysis.engine.layouts import builtin_layout
from assembler.analysis.engine.pipeline import SessionAssembler
from assembler.analysis.engine.wire_request import wire_json
from assembler.sessions.loader import load_session, parse_session

SAMPLES = Path(__file__).resolve().parents[3] / "sample_sessions"
RESEARCH = SAMPLES / "research_agent.yaml"


def _recorded_on(provider: str, model: str) -> object:
    """The research sample as if it had been recorded on ``provider``/``model``."""
    raw = yaml.safe_load(RESEARCH.read_text(encoding="utf-8"))
    raw["session"]["provider"], raw["session"]["model"] = provider, model
    raw["session"]["bindings"]["model"] = f"{provider}:{model}"
    return parse_session(yaml.safe_dump(raw, allow_unicode=True, sort_keys=False), "recorded.yaml")


def _guidance(session: object, **what_if: str) -> list[str]:
    assembler = SessionAssembler(session, builtin_layout("seed"), **what_if)  # type: ignore[arg-type]
    first = next(iter(assembler))
    return [b.text for b in first.wire.blocks if b.name == "model_guidance"]


def test_analysing_on_another_model_equals_a_session_recorded_on_it() -> None:
    what_if = analyze(load_session(str(RESEARCH)), provider="openai", model="gpt-5")
    recorded = analyze(_recorded_on("openai", "gpt-5"))  # type: ignore[arg-type]
    assert [s.tokens for s in what_if.steps] == [s.tokens for s in recorded.steps]
    assert what_if.totals == recorded.totals
    # and it differs from the Anthropic assembly: OpenAI's guidance block is in it
    as_recorded = analyze(load_session(str(RESEARCH)))
    assert what_if.steps[0].tokens["total"] > as_recorded.steps[0].tokens["total"]


def test_the_what_if_carries_the_providers_guidance_and_bindings() -> None:
    session = load_session(str(RESEARCH))
    assert _guidance(session) == []  # Anthropic's guidance is empty (design §6)
    (text,) = _guidance(session, provider="openai", model="gpt-5")
    assert text.startswith("[Execution guidance (openai)]")
    request = json.loads(wire_json(session, builtin_layout("seed"), 1, "openai", model="gpt-5"))
    assert request["model"] == "gpt-5"
    system = request["messages"][0]["content"]
    assert "[Execution guidance (openai)]" in json.dumps(system)
    assert "model=openai:gpt-5" in json.dumps(system)


def test_another_name_of_the_same_provider_changes_nothing() -> None:
    session = load_session(str(RESEARCH))
    layout = builtin_layout("seed")
    plain = [[b.text for b in s.wire.blocks] for s in SessionAssembler(session, layout)]
    # the platform serving Claude is another name for the recorded provider: no what-if
    for name in ("anthropic-bedrock", "anthropic-vertex"):
        other = SessionAssembler(session, layout, provider=name)
        assert [[b.text for b in s.wire.blocks] for s in other] == plain, name


def test_a_session_recorded_as_gemini_gets_googles_guidance() -> None:
    (text,) = _guidance(_recorded_on("gemini", "gemini-2.5-pro"))
    assert text.startswith("[Execution guidance (google)]")

"""OpenTelemetry in (``import otel``) and out (``analyze --otlp``), and the round trip."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from assembler.analysis.engine.analyzer import analyze
from assembler.analysis.engine.importing import import_file
from assembler.analysis.engine.layouts import load_layout
from assembler.analysis.reports.otlp_spans import NAMESPACE
from assembler.cli.main import main
from assembler.sessions.importers import ImporterError
from assembler.sessions.loader import load_session, parse_session
from assembler.sessions.model import Usage

ROOT = Path(__file__).parents[3]
FIXTURES = ROOT / "tests" / "sessions" / "importers" / "fixtures"
GENAI = FIXTURES / "otel" / "genai.json"
OPENINFERENCE = FIXTURES / "otel" / "openinference.json"
SAMPLE = ROOT / "sample_sessions" / "imported_claude_code.yaml"


def measured_of(path: Path) -> list[Usage | None]:
    a = analyze(load_session(path), load_layout("seed"))
    return [s.measured for s in a.steps]


def imported(path: Path) -> Any:
    return parse_session(json.dumps(import_file("otel", path)), str(path), jsonl=False)


def span_attrs(path: Path) -> list[dict[str, Any]]:
    """The LLM spans' attributes, read back with plain json (a second reading of the file)."""
    text = path.read_text("utf-8")
    try:
        docs = [json.loads(text)]
    except json.JSONDecodeError:
        docs = [json.loads(line) for line in text.splitlines() if line.strip()]
    out = []
    for doc in docs:
        for rs in doc["resourceSpans"]:
            for ss in rs["scopeSpans"]:
                for span in ss["spans"]:
                    values = {a["key"]: next(iter(a["value"].values())) for a in span["attributes"]}
                    if "gen_ai.request.model" in values or "llm.model_name" in values:
                        out.append(values)
    return out


def test_genai_fixture_imports_with_measured_usage_and_messages() -> None:
    session = imported(GENAI)
    a = analyze(session, load_layout("seed"))
    spans = span_attrs(GENAI)
    assert session.id == "support-1042" and session.profile.provider == "anthropic"
    assert len(a.steps) == len(spans) == 3  # the tool spans are not requests
    for s, attrs in zip(a.steps, spans, strict=True):
        read = int(attrs["gen_ai.usage.cache_read.input_tokens"])
        write = int(attrs["gen_ai.usage.cache_creation.input_tokens"])
        total = int(attrs["gen_ai.usage.input_tokens"])
        assert s.measured == Usage(
            total - read - write, read, write, int(attrs["gen_ai.usage.output_tokens"])
        )
        names = [b.name for b in s.blocks]
        assert names[0] == "unrecorded prefix" and "system[0]" in names  # tools were not recorded
    assert [b.name for b in a.steps[2].blocks][-1] == "messages[4] user"


def test_openinference_fixture_as_json_lines() -> None:
    session = imported(OPENINFERENCE)
    a = analyze(session, load_layout("seed"))
    spans = span_attrs(OPENINFERENCE)
    assert session.id == "support-1042-oi" and session.profile.model == "gpt-4.1"
    assert len(a.steps) == 3
    for s, attrs in zip(a.steps, spans, strict=True):
        read = int(attrs["llm.token_count.prompt_details.cache_read"])
        total = int(attrs["llm.token_count.prompt"])
        assert s.measured == Usage(total - read, read, 0, int(attrs["llm.token_count.completion"]))
        assert "unrecorded prefix" not in [b.name for b in s.blocks]  # everything was recorded
    assert a.steps[1].read == a.steps[1].measured.cache_read  # type: ignore[union-attr]


def test_the_fixtures_are_what_the_builder_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = importlib.util.spec_from_file_location("build_otel", FIXTURES / "build_otel.py")
    assert spec is not None and spec.loader is not None
    build = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "build_otel", build)
    spec.loader.exec_module(build)
    monkeypatch.setattr(build, "HERE", tmp_path)
    build.genai()
    build.openinference()
    for name in ("genai.json", "openinference.json"):
        assert (tmp_path / "otel" / name).read_bytes() == (FIXTURES / "otel" / name).read_bytes()


def test_round_trip_analyze_otlp_import_gives_the_same_measured_values(tmp_path: Path) -> None:
    spans = tmp_path / "spans.jsonl"
    back = tmp_path / "back.yaml"
    assert main(["analyze", str(SAMPLE), "--otlp", str(spans)]) == 0
    assert main(["import", "otel", str(spans), "-o", str(back)]) == 0
    before, after = measured_of(SAMPLE), measured_of(back)
    assert len(before) == 12 and any(u is not None for u in before)
    assert after == before
    assert load_session(back).id == load_session(SAMPLE).id


def test_step_spans_carry_the_simulated_outcome_and_the_breaking_component(
    tmp_path: Path,
) -> None:
    spans = tmp_path / "spans.jsonl"
    assert (
        main(
            ["analyze", str(ROOT / "sample_sessions" / "research_agent.yaml"), "--otlp", str(spans)]
        )
        == 0
    )
    a = analyze(load_session(ROOT / "sample_sessions" / "research_agent.yaml"), load_layout("seed"))
    [doc] = [json.loads(line) for line in spans.read_text("utf-8").splitlines()]
    got = doc["resourceSpans"][0]["scopeSpans"][0]["spans"]
    root, steps = got[0], got[1:]
    assert len(steps) == len(a.steps) and all(s["parentSpanId"] == root["spanId"] for s in steps)
    for span, s in zip(steps, a.steps, strict=True):
        attrs = {x["key"]: next(iter(x["value"].values())) for x in span["attributes"]}
        assert attrs[f"{NAMESPACE}.cache.read"] == str(s.read)
        outcome = attrs[f"{NAMESPACE}.cache.outcome"]
        assert outcome == (
            "miss" if s.read == 0 else "hit" if s.read == s.tokens["total"] else "partial"
        )
        assert attrs.get(f"{NAMESPACE}.miss.component") == (s.miss.component if s.miss else None)
        assert all(k.startswith((f"{NAMESPACE}.", "gen_ai.", "session.")) for k in attrs)
    assert any(s.miss for s in a.steps)


def test_batch_otlp_is_one_line_per_session_in_input_order(tmp_path: Path) -> None:
    spans = tmp_path / "all.jsonl"
    assert main(["analyze", str(ROOT / "sample_sessions"), "--otlp", str(spans)]) == 0
    ids = [
        json.loads(line)["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["name"]
        for line in spans.read_text("utf-8").splitlines()
    ]
    expected = [
        f"session {load_session(p).id}" for p in sorted((ROOT / "sample_sessions").glob("*.yaml"))
    ]
    assert ids == expected
    assert [p.name for p in tmp_path.iterdir()] == ["all.jsonl"]  # the staging folder is gone


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            '{"resourceSpans": 3}',
            "x.json:1: resourceSpans: expected a list (an OTLP JSON export), found a number",
        ),
        (
            '{"resourceSpans": []}',
            "x.json: no API request found; expected spans with gen_ai.request.model or openinference.span.kind LLM",
        ),
        ("[1]", "x.json:1: expected an OTLP JSON object, found a list"),
    ],
)
def test_bad_files_are_one_line(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "x.json"
    path.write_text(text, "utf-8")
    with pytest.raises(ImporterError) as err:
        import_file("otel", path)
    assert str(err.value) == message.replace("x.json", str(path))


def test_a_span_without_a_known_provider_names_the_field(tmp_path: Path) -> None:
    doc = json.loads(GENAI.read_text("utf-8"))
    for span in doc["resourceSpans"][0]["scopeSpans"][0]["spans"]:
        for a in span["attributes"]:
            if a["key"] == "gen_ai.provider.name":
                a["value"] = {"stringValue": "acme"}
            if a["key"] == "gen_ai.request.model":
                a["value"] = {"stringValue": "acme-1"}
    path = tmp_path / "acme.json"
    path.write_text(json.dumps(doc), "utf-8")
    with pytest.raises(
        ImporterError,
        match=r"acme\.json:1: span 'chat claude-sonnet-4-5': gen_ai\.provider\.name: expected anthropic",
    ):
        import_file("otel", path)


_ANY = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)
_KEYS = st.sampled_from(
    [
        "gen_ai.request.model",
        "gen_ai.provider.name",
        "gen_ai.usage.input_tokens",
        "gen_ai.usage.cache_read.input_tokens",
        "gen_ai.input.messages",
        "gen_ai.system_instructions",
        "gen_ai.output.messages",
        "openinference.span.kind",
        "llm.model_name",
        "llm.input_messages.0.message.content",
        "llm.token_count.prompt",
        "session.id",
    ]
)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    attrs=st.lists(st.tuples(_KEYS, _ANY), max_size=6),
    start=st.one_of(st.integers(), st.text(max_size=5), st.none()),
)
def test_any_span_imports_or_fails_in_one_line(
    tmp_path: Path, attrs: list[tuple[str, Any]], start: Any
) -> None:
    def value(v: Any) -> Any:
        return (
            {"stringValue": v}
            if isinstance(v, str)
            else {"intValue": v}
            if isinstance(v, int)
            else v
        )

    span = {
        "name": "s",
        "startTimeUnixNano": start,
        "attributes": [{"key": k, "value": value(v)} for k, v in attrs],
    }
    path = tmp_path / "any.json"
    path.write_text(json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}), "utf-8")
    try:
        data = import_file("otel", path)
    except ImporterError as exc:
        assert "\n" not in str(exc) and str(exc).startswith(str(path))
        return
    parse_session(json.dumps(data), "any.json", jsonl=False)  # what it returns is a session

"""One step's request as the provider receives it: the JSON ``render --wire`` prints."""

from __future__ import annotations

import json

from assembler.analysis.engine.layouts import Layout
from assembler.analysis.engine.pipeline import AssembledStep, SessionAssembler
from assembler.design.wire import to_anthropic, to_openai
from assembler.sessions.model import Session


def wire_format(provider: str) -> str:
    """``anthropic`` for Anthropic's Messages API, ``openai`` (Chat Completions) otherwise."""
    return "anthropic" if provider == "anthropic" else "openai"


def request_json(assembled: AssembledStep, fmt: str, model: str | None, session_id: str, ttl: str | None = None) -> str:  # fmt: skip
    """An assembled step's request in wire format ``fmt`` (``anthropic`` or ``openai``),
    indented JSON: its model ``model`` (the step's own when None); an Anthropic request's
    writes live as a recorded request's markers (or its bill) say, else ``ttl`` or 5m."""
    name = model or assembled.step.context.profile.model
    if fmt == "anthropic":
        life = assembled.step.call.ttl or ttl or "5m"
        request = to_anthropic(assembled.wire, name, ttl=life)
    else:
        request = to_openai(assembled.wire, name, session_id)
    return json.dumps(request, indent=2, ensure_ascii=False)


def wire_json(session: Session, layout: Layout, step: int, provider: str, ttl: str | None = None, model: str | None = None) -> str:  # fmt: skip
    """The request of step ``step`` (1-based) in ``provider``'s wire format, indented JSON,
    assembled for ``provider`` and ``model`` (the session's own when not given) as analysed."""
    assembler = SessionAssembler(session, layout, provider=provider, model=model)
    for s in assembler.steps():
        if s.number == step:
            assembled = assembler.assemble(s)
            return request_json(
                assembled, wire_format(provider), model, session.id, ttl or layout.ttl
            )
    raise ValueError(f"step {step}: the session has no such step")

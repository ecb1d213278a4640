"""One step's request as the provider receives it: the JSON ``render --wire`` prints."""

from __future__ import annotations

import json

from assembler.analysis.layouts import Layout
from assembler.analysis.pipeline import SessionAssembler
from assembler.design.wire import to_anthropic, to_openai
from assembler.sessions.model import Session


def wire_format(provider: str) -> str:
    """``anthropic`` for Anthropic's Messages API, ``openai`` (Chat Completions) otherwise."""
    return "anthropic" if provider == "anthropic" else "openai"


def wire_json(session: Session, layout: Layout, step: int, provider: str, ttl: str | None = None, model: str | None = None) -> str:  # fmt: skip
    """The request of step ``step`` (1-based) in ``provider``'s wire format, indented JSON,
    assembled for ``provider`` and ``model`` (the session's own when not given) as analysed."""
    assembler = SessionAssembler(session, layout, provider=provider, model=model)
    for s in assembler.steps():
        if s.number != step:
            continue
        assembled = assembler.assemble(s)
        name = model or s.context.profile.model
        if wire_format(provider) == "anthropic":
            # a recorded request's writes live as its markers (or its bill) say, as analysed
            life = s.call.ttl or ttl or layout.ttl or "5m"
            request = to_anthropic(assembled.wire, name, ttl=life)
        else:
            request = to_openai(assembled.wire, name, session.id)
        return json.dumps(request, indent=2, ensure_ascii=False)
    raise ValueError(f"step {step}: the session has no such step")

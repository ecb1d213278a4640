"""The provider's own cache diagnostic beside our miss: do they agree?"""

from __future__ import annotations

from collections.abc import Sequence

from assembler.analysis.engine.causes import NO_DIVERGENCE, NO_VERDICT, expected_types
from assembler.analysis.engine.results import DiagnosticCheck, Miss, StepAnalysis
from assembler.design.wire import WireBlock
from assembler.sessions.model import ProviderDiagnostic


def _provider_type(d: ProviderDiagnostic) -> str:
    """The value compared with ours: Anthropic's type, OpenAI's reason within a miss."""
    if d.type is None or d.type == "cache_hit":
        return NO_DIVERGENCE
    if d.provider == "openai" and d.type == "cache_miss":
        return d.reason or "input_changed"
    return d.type


def _section(miss: Miss | None, blocks: Sequence[WireBlock]) -> str:
    if miss is None:
        return ""
    return next((b.section for b in blocks if b.name == miss.component), "messages")


def check_diagnostic(
    d: ProviderDiagnostic | None, miss: Miss | None, blocks: Sequence[WireBlock]
) -> DiagnosticCheck | None:
    """``d`` compared with ``miss`` (None: we found none); None without a diagnostic."""
    if d is None:
        return None
    theirs = _provider_type(d)
    ours = miss.cause if miss is not None else None
    said = theirs if d.missed_tokens is None else f"{theirs} ({d.missed_tokens:,} tokens missed)"
    ours_text = ours or "no miss"
    if theirs in NO_VERDICT or (theirs == "unavailable" and ours != "setting_changed"):
        agrees: bool | None = None
        sentence = f"{d.provider} diagnostic: {said}, no verdict; ours: {ours_text}."
    else:
        expected = expected_types(ours, _section(miss, blocks))
        allowed = expected.anthropic if d.provider == "anthropic" else expected.openai
        agrees = theirs in allowed
        verdict = "they agree" if agrees else "they disagree"
        sentence = f"{d.provider} diagnostic: {said}; ours: {ours_text}: {verdict}."
    return DiagnosticCheck(d.provider, d.type, d.reason, d.missed_tokens, ours, agrees, sentence)


def diagnostic_lines(steps: Sequence[StepAnalysis]) -> list[str]:
    """The provider's verdict beside ours, one line per step that recorded one."""
    checks = [(s.step, s.diagnostic) for s in steps if s.diagnostic is not None]
    if not checks:
        return []
    return ["", "provider diagnostics:", *(f"  step {n}: {d.sentence}" for n, d in checks if d)]

"""The factor that scales the stand-in tokenizer's counts to the provider's bill, as an
analysis applied it: the one place the CLI, the JSON and the app read it from.

An importer fits the factor from the recorded usage (``Session.token_scale``, one per
model); the engine applies it only when the session is analysed at its recorded provider
and model (``assembler.analysis.engine.analyzer``: a what-if provider or model counts its
own tokens). Should the factor move (one per session and model, a residual per request),
this module is what changes for every reader.
"""

from __future__ import annotations

from assembler.analysis.engine import SessionAnalysis
from assembler.sessions.model import Session

UNSCALED = 1.0


def size_scales(
    session: Session, analysis: SessionAnalysis, provider: str | None, model: str | None
) -> dict[str, float]:
    """Per model of ``analysis``'s steps, the factor its sizes were scaled by (sorted by
    model; a factor of 1 is left out); empty under a what-if provider or model."""
    if provider is not None or model is not None:  # the engine's own condition
        return {}
    used = {s.model for s in analysis.steps}
    return {m: f for m, f in sorted(session.token_scale.items()) if m in used and f != UNSCALED}


def scale_note(scales: dict[str, float]) -> str:
    """``sizes scaled to the bill: ×1.25`` (each model named where more than one); "" for none."""
    if not scales:
        return ""
    if len(scales) == 1:
        (factor,) = scales.values()
        return f"sizes scaled to the bill: ×{factor:g}"
    return "sizes scaled to the bill: " + ", ".join(f"{m} ×{f:g}" for m, f in scales.items())

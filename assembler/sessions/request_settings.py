"""A recorded request's cache settings and the provider's diagnostic, as typed values."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

from assembler.sessions.model import ProviderDiagnostic, RequestSettings


def settings_from(
    raw: Mapping[str, Any] | None, parse_time: Callable[[str], datetime]
) -> RequestSettings | None:
    """The ``settings`` object of an llm event (already schema-checked); ``parse_time``
    reads its time and raises the loader's one-line error."""
    if raw is None:
        return None
    values = dict(raw)
    started = values.pop("response_started", None)
    return RequestSettings(
        **values,
        response_started=parse_time(started) if started else None,
    )


def diagnostic_from(raw: Mapping[str, Any] | None) -> ProviderDiagnostic | None:
    if raw is None:
        return None
    return ProviderDiagnostic(
        provider=raw["provider"],
        type=raw["type"],
        reason=raw.get("reason"),
        missed_tokens=raw.get("missed_tokens"),
    )

"""Errors every command reports as one line and exit status 2."""

from __future__ import annotations


class UsageError(Exception):
    """Bad arguments or input; the message is shown as is."""


def provider_error(source: str, message: str, *, provider_given: bool, model_given: bool) -> str:
    """A provider or model error (no simulator, no price) naming the session and the field
    the name came from: the session's own ``session.provider`` / ``session.model`` or the
    option that overrode it."""
    head = message.split("(")[0]
    if "provider" in head and "model" not in head:
        field = "--provider" if provider_given else "session.provider"
    else:
        field = "--model" if model_given else "session.model"
    return f"{source}: {field}: {message}"

"""Importers: foreign transcripts and request logs → ``context-session/1`` data.

``import_file(format, path, count)`` returns schema-valid session data;
``import_session`` also returns the warnings (malformed lines skipped).
``count`` counts a text's tokens (to size what a transcript does not record);
:mod:`assembler.analysis.engine.importing` supplies the default tokenizer.
Formats are documented in docs/importers.md.

Imports: :mod:`assembler.sessions.model` and :mod:`assembler.limits`; never the
cache engine (the token counter is an argument).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from assembler.collector import collector_paused
from assembler.sessions.importers.fitting import fit_texts
from assembler.sessions.importers.history import Imported, TokenCount
from assembler.sessions.importers.records import ImporterError

FORMATS = ("claude-code", "codex", "requests", "otel")


def import_session(
    format: str, path: Path, count: TokenCount, *, subagents: Path | None = None
) -> Imported:
    """Import ``path`` read as ``format``; raises :class:`ImporterError` (one line). What
    comes back is within the loader's limits (texts cut with a warning: :mod:`fitting`)."""
    with collector_paused():  # a transcript read whole: many objects, no cycles
        imported = _import(format, path, count, subagents)
        cut = fit_texts(imported.data, count)
    return replace(imported, warnings=imported.warnings + cut) if cut else imported


def _import(format: str, path: Path, count: TokenCount, subagents: Path | None) -> Imported:
    if format == "claude-code":
        from assembler.sessions.importers.claude_code import import_claude_code

        return import_claude_code(path, count, subagents=subagents)
    if subagents is not None:
        raise ImporterError(str(path), f"--subagents applies to claude-code, not to {format}")
    if format == "codex":
        from assembler.sessions.importers.codex import import_codex

        return import_codex(path, count)
    if format == "requests":
        from assembler.sessions.importers.request_logs.requests_log import import_requests

        return import_requests(path)
    if format == "otel":
        from assembler.sessions.importers.otel import import_otel

        return import_otel(path, count)
    raise ImporterError(
        str(path), f"unknown format {format!r}; expected one of {', '.join(FORMATS)}"
    )


def import_file(
    format: str, path: Path, count: TokenCount, *, subagents: Path | None = None
) -> dict[str, Any]:
    return import_session(format, path, count, subagents=subagents).data


__all__ = ["FORMATS", "Imported", "ImporterError", "import_file", "import_session"]

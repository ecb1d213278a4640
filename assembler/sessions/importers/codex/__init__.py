"""Codex CLI rollouts (``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl``) → sessions.

Each line is ``{"timestamp", "type", "payload"}``. Read: ``session_meta`` (id, cwd,
model_provider, git, base_instructions), ``turn_context`` (model, truncation_policy),
``response_item`` (messages, calls and their outputs, reasoning, hosted web searches),
``event_msg`` (``user_message`` starts a turn, ``token_count`` bills a response) and
``compacted``. The modules read as the import: ``reader`` (records → turns, requests and
their usage), ``items`` (an item as the model reads it), ``truncation`` (what Codex cut of a
tool output), ``prefix`` (the unrecorded head and the part other sessions keep cached),
``rollout`` (the session document). See docs/importers.md.

Imports: the sibling importer modules (records, history, hidden); never the cache engine
(the token counter is an argument).
"""

from __future__ import annotations

from assembler.sessions.importers.codex.rollout import import_codex

__all__ = ["import_codex"]

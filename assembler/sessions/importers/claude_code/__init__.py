"""Claude Code transcripts (JSON Lines under ``~/.claude/projects/``) → session data.

``importer`` reads a session with its subagent and compaction files; ``reader`` walks one
transcript's records into turns, requests and tool calls (``transcript`` holds what it
collects); ``sizes`` fits the counted sizes to the bill and sizes what the transcript does
not show; ``prefix`` lays out the unrecorded system prompt and context; ``emit`` writes the
call tree and the requests. See docs/importers.md.

Imports: ``assembler.sessions.importers`` (history, records, hidden, request_cache) and
:mod:`assembler.limits`; never the cache engine (the token counter is an argument).
"""

from assembler.sessions.importers.claude_code.importer import import_claude_code, side_files

__all__ = ["import_claude_code", "side_files"]

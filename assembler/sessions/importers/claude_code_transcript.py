"""Who served a response, for the request-log importer (the Claude Code modules live in
:mod:`assembler.sessions.importers.claude_code`)."""

from assembler.sessions.importers.claude_code.transcript import platform_of

__all__ = ["platform_of"]

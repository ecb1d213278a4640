"""The ``requests`` format: a log of raw provider requests and responses, one per
line, read into a session with each request's own blocks, settings and usage.

Imports: the sibling importer modules (records, history, hidden, request_cache and
the Claude Code reader's platform guess) and :mod:`assembler.sessions`.
"""

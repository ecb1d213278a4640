"""The importers with the default tokenizer: what the CLI, the app and ``assembler.import_file`` call.

Sessions do not depend on the cache engine, so the importers take a token
counter; this module hands them o200k, the same approximation the analysis
uses for a model without a tokenizer of its own.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from assembler.cache.tokenizers import counter
from assembler.sessions import importers
from assembler.sessions.importers import Imported

IMPORT_ENCODING = "o200k_base"


def import_session(format: str, path: Path, *, subagents: Path | None = None) -> Imported:
    """Import ``path`` read as ``format``; raises ``ImporterError`` (one line)."""
    return importers.import_session(format, path, _count, subagents=subagents)


def _count(text: str) -> int:
    # The ranks load (about 0.3 s) on the first text that needs counting: a trace that
    # records only usage has none.
    return counter(IMPORT_ENCODING).count(text)


def import_file(format: str, path: Path, *, subagents: Path | None = None) -> dict[str, Any]:
    return import_session(format, path, subagents=subagents).data

"""``python -m assembler import FORMAT FILE -o SESSION``: foreign transcripts in.

Formats: ``claude-code`` (Claude Code transcript), ``codex`` (Codex CLI
rollout), ``requests`` (raw request/response log), ``otel`` (OTLP JSON traces). The output is written as
YAML for ``.yaml`` / ``.yml``, JSON Lines otherwise, and is checked by loading it
back before the command reports success. Bad input raises
:class:`assembler.errors.UsageError` (one line, exit 2).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from assembler.errors import UsageError
from assembler.sessions.importers import FORMATS, ImporterError
from assembler.sessions.loader import load_session
from assembler.sessions.model import MAX_BYTES, SessionError


def cmd_import(args: argparse.Namespace) -> int:
    from assembler.analysis.engine import import_session  # the tokenizers
    from assembler.sessions.generator import write_session

    source = Path(args.file)
    output = Path(args.output)
    if not source.is_file():
        raise UsageError(f"{source}: no such file")
    subagents = Path(args.subagents) if args.subagents else None
    try:
        imported = import_session(args.format, source, subagents=subagents)
    except ImporterError as exc:
        raise UsageError(str(exc)) from None
    size = _encoded_size(imported.data)
    if size > MAX_BYTES:
        # Checked before writing: a file the loader would refuse is never written.
        raise UsageError(
            f"{source}: the imported session would be about {size:,} bytes, over the "
            f"{MAX_BYTES:,}-byte limit of session files; import a shorter transcript"
        )
    try:
        write_session(imported.data, output)
    except OSError as exc:
        raise UsageError(f"{output}: cannot write: {exc.strerror or exc}") from None
    try:
        session = load_session(output)  # what we wrote must be a session we can read
    except SessionError as exc:
        output.unlink(missing_ok=True)  # never leave a file the tool cannot read back
        raise UsageError(f"internal error: the imported session does not load: {exc}") from None
    for warning in imported.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    steps = sum(1 for e in imported.data["events"] if e["type"] == "llm")
    print(f"wrote {output}: {steps} LLM calls from {source} ({args.format}, session {session.id})")
    return 0


def _encoded_size(data: dict[str, Any]) -> int:
    """Bytes of the data as JSON Lines; YAML of the same data is within a few percent."""
    head = {k: v for k, v in data.items() if k != "events"}
    lines = [head, *data["events"]]
    return sum(
        len(json.dumps(x, ensure_ascii=False).encode("utf-8", "surrogatepass")) + 1 for x in lines
    )


def register(sub: Any) -> None:
    """Add ``import`` to the CLI's subparsers."""
    p = sub.add_parser(
        "import", help="import a Claude Code / Codex transcript, a request log or OTLP traces"
    )
    p.add_argument("format", choices=list(FORMATS))
    p.add_argument("file")
    p.add_argument("-o", "--output", required=True, help="session file to write (.yaml or .jsonl)")
    p.add_argument("--subagents", help="folder of Claude Code subagent transcripts (agent-*.jsonl)")
    p.set_defaults(run=cmd_import)

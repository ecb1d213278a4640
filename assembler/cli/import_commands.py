"""``python -m assembler import FORMAT FILE -o SESSION``: foreign transcripts in.

Formats: ``claude-code`` (Claude Code transcript), ``codex`` (Codex CLI
rollout), ``requests`` (raw request/response log), ``otel`` (OTLP JSON traces). The output is written as
JSON Lines (by default ``<FILE's stem>.session.jsonl`` in the current folder), YAML for
``.yaml`` / ``.yml``, and is checked by loading it back before the command reports success. Bad input raises
:class:`assembler.errors.UsageError` (one line, exit 2).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from assembler.errors import UsageError
from assembler.output_files import output_target, replacing
from assembler.sessions.importers import FORMATS, ImporterError
from assembler.sessions.loader import load_session
from assembler.sessions.model import MAX_BYTES, SessionError


def cmd_import(args: argparse.Namespace) -> int:
    from assembler.analysis.engine import import_session  # the tokenizers
    from assembler.sessions.generator import jsonl_lines, write_session

    source = Path(args.file)
    args.output = args.output or f"{source.stem}.session.jsonl"
    if not source.is_file():
        raise UsageError(f"{source}: no such file")
    subagents = Path(args.subagents) if args.subagents else None
    inputs = _inputs(args.format, source, subagents)
    output_target(args.output, "-o", inputs)  # a bad target refused before the work
    try:
        imported = import_session(args.format, source, subagents=subagents)
    except ImporterError as exc:
        raise UsageError(str(exc)) from None
    lines = jsonl_lines(imported.data)  # encoded once: measured, then written
    size = sum(len(line.encode("utf-8", "surrogatepass")) for line in lines)
    if size > MAX_BYTES:
        # Checked before writing: a file the loader would refuse is never written.
        raise UsageError(
            f"{source}: the imported session would be about {size:,} bytes, over the "
            f"{MAX_BYTES:,}-byte limit of session files; import a shorter transcript"
        )
    warnings = imported.warnings
    steps = sum(1 for e in imported.data["events"] if e["type"] == "llm")
    with replacing(args.output, "-o", inputs) as written:
        if Path(args.output).suffix in (".yaml", ".yml"):
            write_session(imported.data, written)
        else:
            with open(written, "w", encoding="utf-8") as out:
                out.writelines(lines)
        # The document and its lines are dropped before the file is read back: the two
        # copies never live together.
        del lines, imported
        try:
            session = load_session(written)  # what we wrote must be a session we can read
        except SessionError as exc:
            message = str(exc).replace(str(written), args.output)
            raise UsageError(
                f"internal error: the imported session does not load: {message}"
            ) from None
    for warning in warnings:
        print(f"warning: {warning}", file=sys.stderr)
    print(
        f"wrote {args.output}: {steps} LLM calls from {source} ({args.format}, session {session.id})"
    )
    return 0


def _inputs(fmt: str, source: Path, subagents: Path | None) -> list[Path]:
    """What the import reads: the file, and for a Claude Code transcript its subagent and
    compaction files (an output over one of them would destroy it)."""
    if fmt != "claude-code":
        return [source]
    from assembler.sessions.importers.claude_code import compaction_files, subagent_files

    try:
        return [source, *subagent_files(source, subagents), *compaction_files(source, subagents)]
    except ImporterError:  # a bad --subagents: the import itself says so
        return [source]


def register(sub: Any) -> None:
    """Add ``import`` to the CLI's subparsers."""
    p = sub.add_parser(
        "import", help="import a Claude Code / Codex transcript, a request log or OTLP traces"
    )
    p.add_argument("format", choices=list(FORMATS))
    p.add_argument("file")
    p.add_argument(
        "-o",
        "--output",
        help="session file to write: JSON Lines, or YAML for .yaml / .yml "
        "(default: FILE's name + .session.jsonl, here)",
    )
    p.add_argument("--subagents", help="folder of Claude Code subagent transcripts (agent-*.jsonl)")
    p.set_defaults(run=cmd_import)

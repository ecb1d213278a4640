"""``python -m assembler import FORMAT FILE -o SESSION``: foreign transcripts in.

Formats: ``claude-code`` (Claude Code transcript), ``codex`` (Codex CLI
rollout), ``requests`` (raw request/response log), ``otel`` (OTLP JSON traces). The output is written as
JSON Lines (by default ``<FILE's stem>.session.jsonl`` in the current folder), YAML for
``.yaml`` / ``.yml``. What is written is checked as the loader reads it: JSON Lines before the
file is written, YAML by reading the file back, before the command reports success. Bad input raises
:class:`assembler.errors.UsageError` (one line, exit 2).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from assembler.errors import UsageError
from assembler.output_files import output_target, replacing
from assembler.sessions.importers import FORMATS, ImporterError
from assembler.sessions.loader import load_session, session_from_document
from assembler.sessions.model import MAX_BYTES, Session, SessionError


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
    as_yaml = Path(args.output).suffix in (".yaml", ".yml")
    if not as_yaml:
        # What the file will hold, checked as the loader checks the file, before it is
        # written: JSON gives back every value the loader accepts unchanged, so reading
        # the file back would only parse it again (a third of a usage-only trace's import).
        session = _loaded(partial(session_from_document, imported.data, args.output))
    with replacing(args.output, "-o", inputs) as written:
        if as_yaml:
            write_session(imported.data, written)
        else:
            with open(written, "w", encoding="utf-8") as out:
                out.writelines(lines)
        # The document and its lines are dropped before a YAML file is read back: the two
        # copies never live together.
        del lines, imported
        if as_yaml:  # YAML's emitter is not JSON's: what it wrote is read back
            session = _loaded(lambda: load_session(written), str(written), args.output)
    for warning in warnings:
        print(f"warning: {warning}", file=sys.stderr)
    print(
        f"wrote {args.output}: {steps} LLM calls from {source} ({args.format}, session {session.id})"
    )
    return 0


def _loaded(load: Callable[[], Session], written: str | None = None, shown: str = "") -> Session:
    """The imported session as the loader reads it; a refusal is our error, not the input's
    (``written``: a temporary file's name, said as ``shown``)."""
    try:
        return load()
    except SessionError as exc:
        message = str(exc) if written is None else str(exc).replace(written, shown)
        raise UsageError(f"internal error: the imported session does not load: {message}") from None


def _inputs(fmt: str, source: Path, subagents: Path | None) -> list[Path]:
    """What the import reads: the file, and for a Claude Code transcript its subagent and
    compaction files (an output over one of them would destroy it)."""
    if fmt != "claude-code":
        return [source]
    from assembler.sessions.importers.claude_code import side_files

    try:
        subagent_files, compaction_files = side_files(source, subagents)
        return [source, *subagent_files, *compaction_files]
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

"""Commands that look at a session without the cache engine: components, steps, render, walkthrough, doctor, generate."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from assembler.analysis.engine import SessionAssembler, load_layout, request_json
from assembler.cli.checks import check_provider_model, pick_step
from assembler.design.components import default_registry
from assembler.design.context import format_time
from assembler.design.layers import Layer
from assembler.errors import UsageError
from assembler.limits import one_line
from assembler.sessions.loader import load_session
from assembler.sessions.model import MAX_BYTES
from assembler.sessions.replay import replay

EXIT_BAD_INPUT = 2


def _print_table(rows: list[dict[str, Any]], columns: Sequence[str]) -> None:
    widths = {c: max(len(c), *(len(str(r[c])) for r in rows)) if rows else len(c) for c in columns}
    print("  ".join(c.ljust(widths[c]) for c in columns).rstrip())
    for r in rows:
        print("  ".join(str(r[c]).ljust(widths[c]) for c in columns).rstrip())


def cmd_components(args: argparse.Namespace) -> int:
    registry = default_registry()
    rows = [
        {
            "name": c.name,
            "layer": c.layer.value,
            "order": c.order,
            "cacheable": c.cacheable,
            "wire": c.where.value,
            "condition": c.condition_text,
        }
        for layer in Layer
        for c in registry.layer(layer)
    ]
    if args.json:
        print(json.dumps(rows, indent=2, ensure_ascii=False))
    else:
        _print_table(rows, ["name", "layer", "order", "cacheable", "wire", "condition"])
    return 0


def cmd_steps(args: argparse.Namespace) -> int:
    session = load_session(args.session)
    rows: list[dict[str, Any]] = [
        {
            "step": s.number,
            "label": s.label or "",
            "function": s.function,
            "call_path": list(s.call_path),
            "timestamp": format_time(s.at),
        }
        for s in replay(session)
    ]
    if args.json:
        print(json.dumps(rows, indent=2, ensure_ascii=False))
    else:
        _print_table(
            [{**r, "call_path": " → ".join(r["call_path"])} for r in rows],
            ["step", "label", "function", "timestamp", "call_path"],
        )
    return 0


def cmd_render(args: argparse.Namespace) -> int:
    check_provider_model(args.session, args.provider, args.model)
    session = load_session(args.session)
    # a what-if provider/model is assembled for, as analyze does (its guidance, the bindings)
    assembler = SessionAssembler(
        session, load_layout(args.layout), provider=args.provider, model=args.model
    )
    step = pick_step(session.source, list(assembler.steps()), args.step)
    assembled = assembler.assemble(step)
    if args.wire:
        print(request_json(assembled, args.wire, args.model, session.id, assembler.layout.ttl))
    else:
        print(assembled.wire.text())
    for record in assembled.assembly.errors:
        print(
            one_line(f"warning: component {record.name!r} failed: {record.error}", 600),
            file=sys.stderr,
        )
    return 0


def cmd_walkthrough(args: argparse.Namespace) -> int:
    session = load_session(args.session)
    assembler = SessionAssembler(session, load_layout(args.layout))
    labelled = [s for s in assembler.steps() if s.label]
    if not labelled:
        raise UsageError(f"{args.session}: no step carries a label; use render --step N")
    for step in labelled:
        wire = assembler.assemble(step).wire
        rule = "=" * 78
        path = " → ".join(step.call_path)
        head = f"step {step.number} {step.label}" + (f" · {path}" if path else "")
        print(f"{rule}\n{head}\n{rule}")
        print(wire.text())
        print()
    return 0


def cmd_doctor(args: argparse.Namespace) -> int:
    from assembler.cache.tokenizers import TokenizerError, verify

    try:
        for line in verify():
            print(line)
    except TokenizerError as exc:
        raise UsageError(str(exc)) from None
    return 0


#: Generated sessions average about 1.7 KB a step (measured: 20,000 steps 33.2 MB,
#: 100,000 steps 166 MB): past this the file would be over what the loader accepts
#: (256 MiB).
MAX_GENERATED_STEPS = 150_000


def cmd_generate(args: argparse.Namespace) -> int:
    from assembler.sessions.generator import generate_session, write_session

    if not 1 <= args.steps <= MAX_GENERATED_STEPS:
        raise UsageError(
            f"--steps: expected 1 to {MAX_GENERATED_STEPS:,} (a longer session is over the "
            f"{MAX_BYTES:,}-byte limit of session files), found {args.steps}"
        )
    data = generate_session(args.steps, args.seed)
    try:
        write_session(data, Path(args.output))
    except OSError as exc:
        raise UsageError(f"{args.output}: cannot write: {exc.strerror or exc}") from None
    print(f"wrote {args.output}: {args.steps} LLM calls (seed {args.seed})")
    return 0

"""The command line: inspect how a session's context is assembled and cached.

Bad input of any kind exits 2 with one line on stderr, never a traceback.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from assembler import cli_analysis, cli_import
from assembler.components import default_registry
from assembler.errors import UsageError
from assembler.layers import Layer
from assembler.layouts import LayoutError, load_layout
from assembler.pipeline import SessionAssembler
from assembler.replay import find_step, replay
from assembler.session import SessionError, format_time, load_session
from assembler.wire import WireError, to_anthropic, to_openai

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
    session = load_session(args.session)
    assembler = SessionAssembler(session, load_layout(args.layout))
    steps = list(assembler.steps())
    try:
        step = find_step(steps, args.step)
    except ValueError as exc:
        raise UsageError(f"--step: {exc}") from None
    assembled = assembler.assemble(step)
    profile = step.context.profile
    if args.wire == "anthropic":
        request = to_anthropic(assembled.wire, profile.model, ttl=assembler.layout.ttl or "5m")
        print(json.dumps(request, indent=2, ensure_ascii=False))
    elif args.wire == "openai":
        print(
            json.dumps(
                to_openai(assembled.wire, profile.model, session.id), indent=2, ensure_ascii=False
            )
        )
    else:
        print(assembled.wire.text())
    for record in assembled.assembly.errors:
        print(f"warning: component {record.name!r} failed: {record.error}", file=sys.stderr)
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
        print(f"{rule}\nstep {step.number} {step.label} · {' → '.join(step.call_path)}\n{rule}")
        print(wire.text())
        print()
    return 0


def cmd_doctor(args: argparse.Namespace) -> int:
    from assembler.tokens import TokenizerError, verify

    try:
        for line in verify():
            print(line)
    except TokenizerError as exc:
        raise UsageError(str(exc)) from None
    return 0


def cmd_generate(args: argparse.Namespace) -> int:
    from assembler.generator import generate_session, write_session

    if args.steps < 1:
        raise UsageError(f"--steps: expected a positive number, found {args.steps}")
    data = generate_session(args.steps, args.seed)
    write_session(data, Path(args.output))
    print(f"wrote {args.output}: {args.steps} LLM calls (seed {args.seed})")
    return 0


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> Any:  # one line, exit 2, as for every bad input
        raise UsageError(message)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="python -m assembler", description=__doc__.split("\n")[0] if __doc__ else None
    )
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    p = sub.add_parser("components", help="list the registered components")
    p.add_argument("--json", action="store_true")
    p.set_defaults(run=cmd_components)

    p = sub.add_parser("steps", help="list a session's steps (one per LLM call)")
    p.add_argument("session")
    p.add_argument("--json", action="store_true")
    p.set_defaults(run=cmd_steps)

    p = sub.add_parser("render", help="print what the model receives at one step")
    p.add_argument("session")
    p.add_argument("--step", required=True, help="1-based step number or a label such as ①")
    p.add_argument("--layout", default="seed", help="built-in layout name or a layout file")
    p.add_argument(
        "--wire", choices=["anthropic", "openai"], help="print the provider request JSON"
    )
    p.set_defaults(run=cmd_render)

    p = sub.add_parser("walkthrough", help="print the context at every labelled step")
    p.add_argument("session")
    p.add_argument("--layout", default="seed")
    p.set_defaults(run=cmd_walkthrough)

    p = sub.add_parser("doctor", help="check that the tokenizers load offline")
    p.set_defaults(run=cmd_doctor)

    p = sub.add_parser("generate", help="write a synthetic session for benchmarks")
    p.add_argument("--steps", type=int, required=True)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("-o", "--output", required=True)
    p.set_defaults(run=cmd_generate)
    cli_analysis.register(sub)
    cli_import.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        code: int = args.run(args)
        return code
    except (UsageError, SessionError, LayoutError, WireError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # the last guard: a bug still ends in one line, not a traceback
        print(
            f"error: internal error ({type(exc).__name__}: {exc}); please report it",
            file=sys.stderr,
        )
        return EXIT_BAD_INPUT

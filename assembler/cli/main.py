"""The ``python -m assembler`` entry point: the parser and the error boundary."""

from __future__ import annotations

import argparse
import functools
import sys
from collections.abc import Sequence
from typing import Any

from assembler.analysis.engine import LayoutError
from assembler.cli import analysis_commands as cli_analysis
from assembler.cli import (
    compare_commands,
    lint_commands,
    proxy_commands,
    recommend_commands,
    rules_commands,
    usage_commands,
)
from assembler.cli import import_commands as cli_import
from assembler.cli.analysis_commands import EXIT_BAD_INPUT
from assembler.cli.inspect_commands import (
    cmd_components,
    cmd_doctor,
    cmd_generate,
    cmd_render,
    cmd_steps,
    cmd_walkthrough,
)
from assembler.design.wire import WireError
from assembler.errors import UsageError
from assembler.limits import one_line
from assembler.safe_text import printable_output
from assembler.sessions.model import SessionError

MESSAGE_CHARS = 600  # an error is one line a person reads; user values in it are cut


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> Any:  # one line, exit 2, as for every bad input
        raise UsageError(message)


def build_parser() -> argparse.ArgumentParser:
    return _parsers()[0]


# The parser is the same for every input, so it is built once per process, with the imports:
# its 80 arguments' help strings each ask gettext for a catalogue (3 ms, measured). Parsing
# does not change it; every call gets a fresh namespace.
@functools.cache
def _parsers() -> tuple[argparse.ArgumentParser, dict[str, argparse.ArgumentParser]]:
    """The top-level parser, and each command's own parser by its name."""
    parser = _Parser(
        prog="python -m assembler", description=__doc__.split("\n")[0] if __doc__ else None
    )
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    p = sub.add_parser("components", help="list the registered components")
    p.add_argument("--json", action="store_true")
    p.set_defaults(run=cmd_components)

    p = sub.add_parser("steps", help="list a session's steps (one per LLM call)")
    p.add_argument("session", help=cli_analysis.ONE_HELP)
    p.add_argument("--json", action="store_true")
    p.set_defaults(run=cmd_steps)

    p = sub.add_parser("render", help="print what the model receives at one step")
    p.add_argument("session", help=cli_analysis.ONE_HELP)
    p.add_argument(
        "--step",
        required=True,
        help="1-based step number, or a step's label as `steps` lists it (e.g. walk-1)",
    )
    p.add_argument("--layout", default="seed", help="built-in layout name or a layout file")
    p.add_argument(
        "--wire",
        choices=["anthropic", "openai"],
        help="print the request JSON in that API's format (the content as assembled for the "
        "session's provider and model, or for --provider/--model)",
    )
    p.add_argument("--provider", help="assemble for another provider (a what-if, as in analyze)")
    p.add_argument("--model", help="assemble for another model (a what-if, as in analyze)")
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
    compare_commands.register(sub)
    cli_import.register(sub)
    lint_commands.register(sub)
    recommend_commands.register(sub)
    rules_commands.register(sub)
    usage_commands.register(sub)
    proxy_commands.register(sub)
    return parser, dict(sub.choices)


def main(argv: Sequence[str] | None = None) -> int:
    with printable_output():  # recorded text never drives the terminal
        return _run(argv)


def parse(argv: Sequence[str] | None) -> argparse.Namespace:
    """The arguments, as the top-level parser reads them. When the first one names a
    command, its own parser reads the rest: what the top-level parser would hand it,
    without the pass that finds the command (on a one-request transcript, argparse ran 6 %
    of the command's bytecode; this pass, two fifths of that: measured)."""
    parser, commands = _parsers()
    args = sys.argv[1:] if argv is None else list(argv)
    if args and args[0] in commands:
        return commands[args[0]].parse_args(args[1:], argparse.Namespace(command=args[0]))
    return parser.parse_args(args)


def _run(argv: Sequence[str] | None) -> int:
    try:
        args = parse(argv)
        code: int = args.run(args)
        return code
    except (UsageError, SessionError, LayoutError, WireError) as exc:
        print(f"error: {one_line(str(exc), MESSAGE_CHARS)}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # the last guard: a bug still ends in one line, not a traceback
        detail = one_line(f"{type(exc).__name__}: {exc}", MESSAGE_CHARS)
        print(f"error: internal error ({detail}); please report it", file=sys.stderr)
        return EXIT_BAD_INPUT

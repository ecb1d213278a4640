"""The command's own parser reads what the top-level parser would hand it: the same
namespace, or the same one-line error, for every command."""

from __future__ import annotations

import argparse
import contextlib
import io
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from assembler.cli.main import build_parser, parse
from assembler.errors import UsageError


def _commands() -> list[str]:
    for action in build_parser()._actions:  # the test may look inside; the code does not
        if isinstance(action, argparse._SubParsersAction):
            return sorted(action.choices)
    raise AssertionError("no subcommands")


COMMANDS = _commands()
WORDS = ["s.jsonl", "--json", "--csv", "--layout", "seed", "--step", "3", "--ttl", "1h"]
WORDS += ["--since", "2026-01-01", "-o", "out.yaml", "--bogus", "--", "-x", "claude-code", "-h"]


def outcome(read: Callable[[list[str]], argparse.Namespace], argv: list[str]) -> object:
    """The namespace, or the error, or the exit and what was printed (``-h``)."""
    printed = io.StringIO()
    try:
        with contextlib.redirect_stdout(printed), contextlib.redirect_stderr(printed):
            args = read(argv)
    except UsageError as exc:
        return "error", str(exc)
    except SystemExit as exc:
        return "exit", exc.code, printed.getvalue()
    return "args", vars(args)


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(COMMANDS), st.lists(st.sampled_from(WORDS), max_size=6))
def test_a_command_reads_its_arguments_as_the_top_level_parser_would(
    command: str, rest: list[str]
) -> None:
    argv = [command, *rest]
    assert outcome(parse, argv) == outcome(build_parser().parse_args, argv)


@pytest.mark.parametrize(
    "argv",
    [[], ["nope"], ["--bogus", "analyze", "x"], ["analyze"], ["analyze", "a", "b"], ["-h"]],
)
def test_what_names_no_command_first_goes_to_the_top_level_parser(argv: list[str]) -> None:
    assert outcome(parse, argv) == outcome(build_parser().parse_args, argv)


def test_the_command_is_named_in_the_namespace() -> None:
    assert outcome(parse, ["analyze", "s.jsonl"])[1]["command"] == "analyze"  # type: ignore[index]
    assert outcome(parse, ["usage"])[1]["command"] == "usage"  # type: ignore[index]

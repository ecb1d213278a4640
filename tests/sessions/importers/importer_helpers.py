"""Shared by the importer tests: fixtures, loading imported data back, the CLI."""

from __future__ import annotations

import json
import subprocess
from dataclasses import replace
from pathlib import Path
from typing import Any

import yaml

from assembler.sessions.loader import parse_session
from assembler.sessions.model import Session
from assembler.sessions.replay import Step, replay
from tests.hostile.runner import cli_process

FIXTURES = Path(__file__).parent / "fixtures"
CLAUDE = FIXTURES / "claude_code" / "session.jsonl"
SUBAGENT = FIXTURES / "claude_code" / "subagents" / "agent-a1b2c3.jsonl"
CODEX = FIXTURES / "codex" / "rollout-2026-03-12T14-00-00-019a9776.jsonl"
REQUESTS = FIXTURES / "requests" / "proxy.jsonl"


def load(data: dict[str, Any]) -> Session:
    """The imported data through our own loader, in both spellings; they must agree."""
    as_yaml = parse_session(yaml.safe_dump(data, sort_keys=False, allow_unicode=True), "i.yaml")
    header = {"format": data["format"], "session": data["session"]}
    lines = [json.dumps(header), *(json.dumps(e) for e in data["events"])]
    as_jsonl = parse_session("\n".join(lines) + "\n", "i.jsonl")
    assert [replace(e, line=None) for e in as_yaml.events] == [
        replace(e, line=None) for e in as_jsonl.events
    ]
    return as_jsonl


def steps(data: dict[str, Any]) -> list[Step]:
    return replay(load(data))


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in path.read_text("utf-8").splitlines() if x.strip()]


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return cli_process(*args)


def texts(step: Step) -> list[str]:
    """The recorded request's block texts at ``step``."""
    assert step.call.request is not None
    return [b.text for b in step.call.request]

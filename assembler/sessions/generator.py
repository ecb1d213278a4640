"""A deterministic generator of long synthetic sessions, for benchmarks and tests.

Same ``(steps, seed)``, same file. The shape follows a real agent: a main loop
of planning decisions, each dispatching a task whose agentic sub-functions nest
up to five deep, with plain tool calls, multi-line io of realistic sizes, tool
definitions about as large as a production coding agent's, and now and then an
idle gap long enough to expire a 5-minute cache.
"""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import yaml

from assembler.design.context import format_time
from assembler.sessions.model import FORMAT

_WORDS = (
    "cache prefix token layer call tree function output input release schema tool memory "
    "session project agent draft review test build deploy query result summary plan step "
    "config module parser request response latency budget index vector search fetch file "
    "branch commit patch diff error retry timeout stream batch queue worker shard replica "
    "metric trace span label owner policy region quota limit window context prompt model"
).split()

_TASKS: dict[str, list[str]] = {
    "investigate": ["gather_evidence", "analyse_logs", "summarise_findings"],
    "implement": ["plan_change", "edit_code", "run_tests", "fix_failures"],
    "review": ["read_diff", "check_style", "write_comments"],
    "research": ["search_papers", "read_paper", "extract_claims"],
}
_LEAVES = ["verify_claim", "draft_paragraph", "classify_item", "score_option"]
_TOOLS = ["read_file", "bash", "grep", "web_fetch", "edit_file", "list_dir", "run_python"]


class _Gen:
    def __init__(self, steps: int, seed: int) -> None:
        self.rng = random.Random(seed)
        self.target = steps
        self.llm_calls = 0
        self.now = datetime(2026, 3, 2, 9, 0, 0, tzinfo=UTC)
        self.events: list[dict[str, Any]] = []

    def words(self, lo: int, hi: int) -> str:
        return " ".join(self.rng.choice(_WORDS) for _ in range(self.rng.randint(lo, hi)))

    def text(self, lines_lo: int, lines_hi: int) -> str:
        n = self.rng.randint(lines_lo, lines_hi)
        if n <= 1:
            return self.words(6, 30)
        return "\n".join(f"- {self.words(5, 16)}" for _ in range(n))

    def tick(self) -> str:
        roll = self.rng.random()
        if roll < 0.004:
            gap = timedelta(minutes=self.rng.randint(61, 180))
        elif roll < 0.02:
            gap = timedelta(minutes=self.rng.randint(6, 50))
        else:
            gap = timedelta(seconds=self.rng.randint(2, 90))
        self.now += gap
        return format_time(self.now)

    def emit(self, **event: Any) -> None:
        self.events.append({"type": event.pop("type"), "at": self.tick(), **event})

    def llm(self, decision: bool = False) -> None:
        self.llm_calls += 1
        call: dict[str, Any] = {
            "type": "llm",
            "input": self.text(1, 6),
            "output": self.text(1, 12),
        }
        if decision:
            call["contract"] = {"kind": "decision"}
            call["output_schema"] = {
                "type": "object",
                "properties": {"task": {"enum": sorted(_TASKS)}},
                "required": ["task"],
            }
            call["position"] = f"main loop round {self.llm_calls}"
        elif self.rng.random() < 0.3:
            call["memory_prefetch"] = self.text(2, 4)
        self.emit(**call)

    def call(self, function: str, depth: int, dispatched_by: str | None = None) -> None:
        enter: dict[str, Any] = {"type": "enter", "function": function, "input": self.text(1, 5)}
        if dispatched_by:
            enter["dispatched_by"] = dispatched_by
        self.emit(**enter)
        for _ in range(self.rng.randint(1, 2)):
            if self.llm_calls >= self.target:
                break
            for _ in range(self.rng.randint(0, 3)):
                self.emit(type="tool", name=self.rng.choice(_TOOLS), input=self.words(2, 8))
            self.llm()
            if depth < 5 and self.rng.random() < 0.45 and self.llm_calls < self.target:
                self.call(self.rng.choice(_LEAVES), depth + 1)
        out = self.text(1, 10)
        self.emit(type="exit", function=function, output=out, key_output=self.words(4, 12))

    def run(self) -> list[dict[str, Any]]:
        self.emit(type="enter", function="agent_main", input=self.words(8, 20))
        while self.llm_calls < self.target:
            self.emit(type="enter", function="_plan")
            self.llm(decision=True)
            self.emit(type="exit", function="_plan", output=self.words(3, 6))
            if self.llm_calls >= self.target:
                break
            task = self.rng.choice(sorted(_TASKS))
            self.emit(type="enter", function=task, input=self.text(1, 4), dispatched_by="_plan")
            for sub in _TASKS[task]:
                if self.llm_calls >= self.target:
                    break
                self.call(sub, 3)
            self.emit(
                type="exit", function=task, output=self.text(2, 8), key_output=self.words(4, 10)
            )
        self.emit(type="exit", function="agent_main", output=self.words(8, 20))
        return self.events


def _tool(rng: random.Random, name: str) -> dict[str, Any]:
    props = {
        f"{rng.choice(_WORDS)}_{i}": {
            "type": rng.choice(["string", "integer", "boolean"]),
            "description": " ".join(rng.choice(_WORDS) for _ in range(rng.randint(6, 16))),
        }
        for i in range(rng.randint(2, 6))
    }
    return {
        "name": name,
        # production agents ship long tool descriptions (usage rules, examples):
        # 150-400 words each puts the tools at about 9,000 tokens
        "description": " ".join(rng.choice(_WORDS) for _ in range(rng.randint(150, 400))),
        "input_schema": {"type": "object", "properties": props, "required": sorted(props)[:1]},
    }


def generate_session(steps: int, seed: int = 0) -> dict[str, Any]:
    """A session with exactly ``steps`` LLM calls, as schema-valid data."""
    if steps < 1:
        raise ValueError("steps must be at least 1")
    gen = _Gen(steps, seed)
    rng = random.Random(seed + 1)
    functions = {
        name: {"doc": f"{name.replace('_', ' ').strip().capitalize()} for the current task."}
        for name in [
            "agent_main",
            "_plan",
            *_TASKS,
            *(s for v in _TASKS.values() for s in v),
            *_LEAVES,
        ]
    }
    session: dict[str, Any] = {
        "id": f"generated-{steps}-{seed}",
        "title": f"Generated session: {steps} LLM calls (seed {seed})",
        "agent": {"name": "bench-agent", "description": "A synthetic agent for benchmarks."},
        "provider": "anthropic",
        "model": "claude-sonnet-4-5",
        "channel": "cli",
        "environment": {
            "os": "Debian 12",
            "shell": "bash",
            "backend": "local",
            "cwd": "/srv/work",
            "harness": "OpenProgram",
            "state_dir": "/root/.openprogram",
            "git_repo": True,
        },
        "skills": [{"name": w, "description": gen.words(6, 12)} for w in _WORDS[:6]],
        "tools": [_tool(rng, name) for name in [*_TOOLS, *(f"{w}_tool" for w in _WORDS[:18])]],
        "memory": {
            "backend": "builtin",
            "state": "healthy",
            "workspace": "/root/.openprogram/memory",
            "budget_tokens": 900,
            "global": gen.text(12, 20),
            "project": gen.text(4, 8),
        },
        "workspace_files": [{"path": "AGENTS.md", "content": gen.text(40, 60)}],
        "bindings": {"session_id": f"gen_{seed}", "model": "anthropic:claude-sonnet-4-5"},
        "functions": functions,
    }
    return {"format": FORMAT, "session": session, "events": gen.run()}


def write_session(data: dict[str, Any], path: Path | str) -> None:
    """YAML for ``.yaml``/``.yml`` (libyaml's emitter where installed: the pure one takes
    seconds for a long transcript), JSON Lines otherwise."""
    path = Path(path)
    if path.suffix in (".yaml", ".yml"):
        dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
        text = yaml.dump(data, Dumper=dumper, sort_keys=False, allow_unicode=True)
        path.write_text(text, "utf-8")
        return
    with path.open("w", encoding="utf-8") as f:
        f.writelines(jsonl_lines(data))


def jsonl_lines(data: dict[str, Any]) -> list[str]:
    """The session as JSON Lines: the header (format and session), then an event a line."""
    header = {"format": data["format"], "session": data["session"]}
    return [json.dumps(x, ensure_ascii=False) + "\n" for x in (header, *data["events"])]

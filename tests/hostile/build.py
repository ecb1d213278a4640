"""Hostile inputs, written at test time into a temporary folder (nothing large is committed).

Each case is a small file (or a special file) that once cost minutes and gigabytes,
hung, or ended in ``internal error``. ``CASES`` says how the CLI is run on it and
what the one line must name.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
IMPORTER_FIXTURES = ROOT / "tests" / "sessions" / "importers" / "fixtures"
CLAUDE = IMPORTER_FIXTURES / "claude_code" / "session.jsonl"
CODEX = next((IMPORTER_FIXTURES / "codex").glob("*.jsonl"))
REQUESTS = IMPORTER_FIXTURES / "requests" / "proxy.jsonl"
T = "2026-03-02T09:00:00Z"
HOSTILE_URL = "https://proxy.invalid/pixel.png"
IMAGE = f"![t]({HOSTILE_URL})"


def header(**session: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "id": "hostile",
        "agent": {"name": "a"},
        "provider": "anthropic",
        "model": "claude-sonnet-4-5",
    }
    base.update(session)
    return {"format": "context-session/1", "session": base}


def events(*extra: dict[str, Any], n_llm: int = 1) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [{"type": "enter", "function": "main", "at": T}]
    out += [{"type": "llm", "input": "q", "output": "a", "at": T} for _ in range(n_llm)]
    out += list(extra)
    out.append({"type": "exit", "function": "main", "output": "done", "at": T})
    return out


def session_json(doc: dict[str, Any] | None = None, **session: Any) -> str:
    return json.dumps(doc or {**header(**session), "events": events()})


def jsonl(head: dict[str, Any], evs: list[dict[str, Any]]) -> str:
    return "\n".join([json.dumps(head), *(json.dumps(e) for e in evs)]) + "\n"


def alias_bomb(levels: int = 8, width: int = 9) -> list[str]:
    """``a: &a [x, x, …]``, ``b: &b [*a, *a, …]`` …: width**levels values from a few hundred bytes."""
    names = "abcdefghijklmnop"
    lines = [f"{names[0]}: &{names[0]} [{', '.join(['x'] * width)}]"]
    for i in range(1, levels):
        refs = ", ".join([f"*{names[i - 1]}"] * width)
        lines.append(f"{names[i]}: &{names[i]} [{refs}]")
    return lines


def key_alias_bomb() -> str:
    bomb = ", ".join(line for line in alias_bomb())
    return (
        "format: context-session/1\n"
        f"? {{{bomb}}}\n"
        ": 1\n"
        "session: {id: s, agent: {name: a}, provider: anthropic, model: claude-sonnet-4-5}\n"
        f"events: [{{type: llm, input: q, output: a, at: '{T}'}}]\n"
    )


def layout_alias_bomb() -> str:
    bomb = ", ".join(alias_bomb())
    return f"name: bomb\nrender_range: {{functions: {{{bomb}}}}}\ndescription: *h\nttl: *h\n"


def keep_chain(n: int) -> str:
    """``n`` requests, each keeping all of the previous one and adding a block (JSON Lines)."""
    evs: list[dict[str, Any]] = [{"type": "enter", "function": "main", "at": T}]
    for i in range(n):
        request: dict[str, Any] = {"blocks": [{"section": "messages", "text": f"turn {i}"}]}
        if i:
            request["keep"] = i
        evs.append({"type": "llm", "input": "q", "output": "a", "at": T, "request": request})
    evs.append({"type": "exit", "function": "main", "at": T})
    return jsonl(header(), evs)


def deep_calls(depth: int) -> str:
    evs = [{"type": "enter", "function": f"f{i}", "input": "x", "at": T} for i in range(depth)]
    evs.append({"type": "llm", "input": "q", "output": "a", "at": T})
    evs += [
        {"type": "exit", "function": f"f{i}", "output": "o", "at": T}
        for i in reversed(range(depth))
    ]
    return jsonl(header(), evs)


def nested(depth: int) -> str:
    return "description: " + "[" * depth + "]" * depth + "\n"


def mutate_line(path: Path, old: str, new: str, count: int = 1) -> str:
    text = path.read_text("utf-8")
    assert old in text, old
    return text.replace(old, new, count)


@dataclass(frozen=True)
class Case:
    """``argv`` with ``{f}`` for the written file and ``{tmp}`` for the folder."""

    name: str
    argv: tuple[str, ...]
    expect: tuple[str, ...] = ()  # substrings of the one error line (after the file)
    exit: int = 2
    names_file: bool = True
    write: Callable[[Path], None] | None = None


def _text(name: str, body: Callable[[], str]) -> Callable[[Path], None]:
    def write(tmp: Path) -> None:
        (tmp / name).write_text(body(), "utf-8", errors="surrogatepass")

    return write


def _fifo(tmp: Path) -> None:
    os.mkfifo(tmp / "fifo.yaml")


def _layout_fifo(tmp: Path) -> None:
    _ok(tmp)
    _fifo(tmp)


def _layout_fifo(tmp: Path) -> None:
    _ok(tmp)
    _fifo(tmp)


def _zero_link(tmp: Path) -> None:
    (tmp / "zero.yaml").symlink_to("/dev/zero")


def _zero_subagents(tmp: Path) -> None:
    folder = tmp / "subagents"
    folder.mkdir()
    (folder / "agent-zero.jsonl").symlink_to("/dev/zero")


def _glob_named(tmp: Path) -> None:
    (tmp / "sess[1].yaml").write_text(session_json(), "utf-8")
    (tmp / "sess1.yaml").write_text("not: [a session", "utf-8")


def _long_string(n: int) -> Callable[[], str]:
    return lambda: jsonl(
        header(), events({"type": "tool", "name": "t", "output": "x" * n, "at": T})
    )


BIG = "9" * 5000
# An importer skips a line it cannot read and says so (a warning naming the line); the
# rest of the transcript still imports.
EXIT_SKIPPED = 0
SESSION = ("steps", "{tmp}/s.json")
SESSION_L = ("steps", "{tmp}/s.jsonl")
LAYOUT = ("analyze", "{tmp}/ok.json", "--layout", "{tmp}/l.yaml")


def _ok(tmp: Path) -> None:
    (tmp / "ok.json").write_text(session_json(), "utf-8")


def _layout(body: str) -> Callable[[Path], None]:
    def write(tmp: Path) -> None:
        _ok(tmp)
        (tmp / "l.yaml").write_text(body, "utf-8")

    return write


def _importer(fixture: Path, old: str, new: str, count: int = 1) -> Callable[[Path], None]:
    return _text("t.jsonl", lambda: mutate_line(fixture, old, new, count))


CASES: tuple[Case, ...] = (
    # 1-2 alias bombs
    Case(
        "key-alias-bomb", ("steps", "{tmp}/k.yaml"), ("key",), write=_text("k.yaml", key_alias_bomb)
    ),
    Case("layout-alias-bomb", LAYOUT, ("alias",), write=_layout(layout_alias_bomb())),
    # 4 special files
    Case("fifo", ("steps", "{tmp}/fifo.yaml"), ("regular file",), write=_fifo),
    Case("dev-zero-link", ("analyze", "{tmp}/zero.yaml"), ("regular file",), write=_zero_link),
    Case(
        "folder-as-layout",
        ("analyze", "{tmp}/ok.json", "--layout", "{tmp}"),
        ("layout",),
        write=_layout(""),
    ),
    Case(
        "subagents-dev-zero",
        (
            "import",
            "claude-code",
            str(CLAUDE),
            "--subagents",
            "{tmp}/subagents",
            "-o",
            "{tmp}/o.jsonl",
        ),
        ("regular file",),
        write=_zero_subagents,
    ),
    Case(
        "layout-fifo",
        ("analyze", "{tmp}/ok.json", "--layout", "{tmp}/fifo.yaml"),
        ("regular file",),
        write=_layout_fifo,
    ),
    # 5 one long string
    Case(
        "long-string", SESSION_L, ("characters",), write=_text("s.jsonl", _long_string(5_000_001))
    ),
    # 8 generate
    Case(
        "generate-huge",
        ("generate", "--steps", "1000000000", "-o", "{tmp}/g.yaml"),
        ("--steps",),
        names_file=False,
    ),
    Case(
        "generate-missing-folder",
        ("generate", "--steps", "2", "-o", "{tmp}/no/such/g.yaml"),
        ("cannot write",),
    ),
    Case(
        "generate-folder",
        ("generate", "--steps", "2", "-o", "{tmp}"),
        ("expected a regular file or a new path, found a folder",),
    ),
    Case(
        "generate-full-device",
        ("generate", "--steps", "2", "-o", "/dev/full"),  # refused by its kind, never opened
        ("expected a regular file or a new path, found a device",),
        names_file=False,
    ),
    # 11 internal errors
    Case(
        "big-int-session",
        SESSION,
        ("digits",),
        write=_text("s.json", lambda: session_json().replace('"id": "hostile"', f'"id": {BIG}')),
    ),
    Case(
        "big-int-yaml",
        ("steps", "{tmp}/s.yaml"),
        ("digits",),
        write=_text(
            "s.yaml", lambda: session_json().replace('"id": "hostile"', f'"id": {BIG}') + "\n"
        ),
    ),
    Case(
        "big-int-jsonl",
        SESSION_L,
        ("digits",),
        write=_text(
            "s.jsonl",
            lambda: jsonl(header(), events()).replace('"output": "done"', f'"output": {BIG}'),
        ),
    ),
    Case(
        "big-int-layout",
        LAYOUT,
        ("digits",),
        write=_layout(f"name: big\ncomponents: {{task_frame: {{order: {BIG}}}}}\n"),
    ),
    Case(
        "big-int-claude",
        ("import", "claude-code", "{tmp}/t.jsonl", "-o", "{tmp}/o.jsonl"),
        ("digits",),
        exit=EXIT_SKIPPED,
        write=_importer(CLAUDE, '"input_tokens": ', f'"input_tokens": {BIG}, "x": '),
    ),
    Case(
        "big-int-codex",
        ("import", "codex", "{tmp}/t.jsonl", "-o", "{tmp}/o.jsonl"),
        ("digits",),
        exit=EXIT_SKIPPED,
        write=_importer(CODEX, '"input_tokens": ', f'"input_tokens": {BIG}, "x": '),
    ),
    Case(
        "big-int-requests",
        ("import", "requests", "{tmp}/t.jsonl", "-o", "{tmp}/o.jsonl"),
        ("digits",),
        exit=EXIT_SKIPPED,
        write=_importer(REQUESTS, '"max_tokens": 4096', f'"max_tokens": {BIG}'),
    ),
    Case(
        "lone-surrogate",
        SESSION,
        ("surrogate",),
        write=_text("s.json", lambda: session_json(title="a\ud800b")),
    ),
    Case(
        "lone-surrogate-jsonl",
        SESSION_L,
        ("surrogate",),
        write=_text(
            "s.jsonl",
            lambda: jsonl(header(title="a\\ud800b"), events()).replace("\\\\ud800", "\\ud800"),
        ),
    ),
    Case(
        "date-year-1",
        SESSION,
        ("at",),
        write=_text("s.json", lambda: session_json().replace(T, "0001-01-01T00:00:00+01:00")),
    ),
    Case(
        "date-year-9999",
        SESSION,
        ("at",),
        write=_text("s.json", lambda: session_json().replace(T, "9999-12-31T23:59:59-01:00")),
    ),
    Case(
        "long-timezone",
        SESSION,
        ("timezone",),
        write=_text(
            "s.json", lambda: session_json(environment={"timezone": "Europe/" + "x" * 300})
        ),
    ),
    Case("layout-add-mapping", LAYOUT, ("add",), write=_layout("add: [{x: 1}]\n")),
    Case("layout-add-scalar", LAYOUT, ("add",), write=_layout("add: 7\n")),
    Case(
        "layout-expose-functions",
        LAYOUT,
        ("expose.functions",),
        write=_layout("expose: {functions: [a, b]}\n"),
    ),
    Case(
        "layout-range-functions",
        LAYOUT,
        ("render_range.functions",),
        write=_layout("render_range: {functions: text}\n"),
    ),
    Case("layout-deep", LAYOUT, ("nested",), write=_layout(nested(5000))),
    # 12 JSON Lines separators
    Case(
        "jsonl-u2028",
        SESSION_L,
        (),
        exit=0,
        write=_text(
            "s.jsonl",
            lambda: (
                jsonl(header(title="a\u2028b\u2029c\x85d"), events())
                .replace("\\u2028", "\u2028")
                .replace("\\u2029", "\u2029")
                .replace("\\u0085", "\x85")
            ),
        ),
    ),
    Case(
        "claude-u2028",
        ("import", "claude-code", "{tmp}/t.jsonl", "-o", "{tmp}/o.jsonl"),
        (),
        exit=0,
        write=_importer(CLAUDE, "Find out why.", "Find\u2028out\u2029why\x85."),
    ),
    Case(
        "claude-lone-surrogate",
        ("import", "claude-code", "{tmp}/t.jsonl", "-o", "{tmp}/o.jsonl"),
        (),
        exit=0,
        write=_importer(CLAUDE, "Find out why.", "Find out why \\ud83d."),
    ),
    # 13 change.model
    Case(
        "requests-long-model",
        ("import", "requests", "{tmp}/t.jsonl", "-o", "{tmp}/o.jsonl"),
        (),
        exit=0,
        write=_importer(
            REQUESTS, '"model": "claude-sonnet-4-5"', '"model": "' + "m" * 300 + '"', 3
        ),
    ),
    # 15 one line
    Case(
        "key-with-newline",
        ("steps", "{tmp}/s.yaml"),
        ("unknown field",),
        write=_text("s.yaml", lambda: session_json().replace('"id"', '"i\\nd": 1, "id"') + "\n"),
    ),
    Case(
        "huge-key",
        SESSION,
        ("unknown field",),
        write=_text(
            "s.json", lambda: session_json().replace('"id"', f'"{"k" * 100_000}": 1, "id"')
        ),
    ),
    Case("layout-bad-yaml", LAYOUT, ("l.yaml:2:",), write=_layout("name: x\n  bad: [\n")),
    Case("layout-unknown-line", LAYOUT, (":3:",), write=_layout("name: x\n\nnope: 1\n")),
    # 16 compare thresholds
    Case(
        "nan-threshold",
        (
            "compare",
            "{tmp}/ok.json",
            "--base",
            "seed",
            "--head",
            "seed",
            "--max-hit-ratio-drop",
            "nan",
        ),
        ("finite",),
        names_file=False,
        write=lambda t: _ok(t),
    ),
    Case(
        "inf-threshold",
        (
            "compare",
            "{tmp}/ok.json",
            "--base",
            "seed",
            "--head",
            "seed",
            "--max-cost-increase",
            "inf",
        ),
        ("finite",),
        names_file=False,
        write=lambda t: _ok(t),
    ),
    # 17 smaller
    Case(
        "unknown-model",
        ("analyze", "{tmp}/s.json"),
        ("model",),
        write=_text("s.json", lambda: session_json(model=IMAGE)),
    ),
    Case(
        "unknown-provider",
        ("analyze", "{tmp}/s.json"),
        ("provider",),
        write=_text("s.json", lambda: session_json(provider=IMAGE)),
    ),
    Case(
        "jsonl-duplicate-header-key",
        SESSION_L,
        ("duplicate",),
        write=_text(
            "s.jsonl",
            lambda: jsonl(header(), events()).replace('"format"', '"format": "x", "format"', 1),
        ),
    ),
    Case("layout-duplicate-key", LAYOUT, ("duplicate",), write=_layout("name: a\nname: b\n")),
    Case(
        "duplicate-tool",
        SESSION,
        ("duplicate",),
        write=_text(
            "s.json",
            lambda: session_json(tools=[{"name": "t", "description": "d", "input_schema": {}}] * 2),
        ),
    ),
    Case(
        "huge-output-tokens",
        ("analyze", "{tmp}/s.jsonl"),
        ("output",),
        write=_text(
            "s.jsonl",
            lambda: jsonl(header(), events()).replace(
                '"output": "a", ', '"output": "a", "usage": {"output": ' + "9" * 400 + "}, ", 1
            ),
        ),
    ),
    Case("glob-named-file", ("analyze", "{tmp}/sess[1].yaml"), (), exit=0, write=_glob_named),
    # 14 deep call stack renders
    Case(
        "deep-calls",
        ("render", "{tmp}/d.jsonl", "--step", "1"),
        (),
        exit=0,
        write=_text("d.jsonl", lambda: deep_calls(1000)),
    ),
    # 3 keep chains
    Case(
        "keep-chain-3000",
        ("analyze", "{tmp}/c.jsonl"),
        ("keep",),
        write=_text("c.jsonl", lambda: keep_chain(3000)),
    ),
    Case(
        "keep-chain-20000",
        ("analyze", "{tmp}/c.jsonl"),
        ("keep",),
        write=_text("c.jsonl", lambda: keep_chain(20000)),
    ),
    # 9 markdown in messages
    Case(
        "markdown-unknown-key",
        SESSION,
        ("unknown field",),
        write=_text("s.json", lambda: session_json().replace('"id"', f'"{IMAGE}": 1, "id"')),
    ),
    Case("markdown-layout-ttl", LAYOUT, ("ttl",), write=_layout(f"ttl: '{IMAGE}'\n")),
)


def build(tmp: Path) -> dict[str, Case]:
    """Write every case's files under ``tmp/<case name>``; the cases by name."""
    out: dict[str, Case] = {}
    for case in CASES:
        folder = tmp / case.name
        folder.mkdir(parents=True, exist_ok=True)
        if case.write is not None:
            case.write(folder)
        out[case.name] = case
    return out


def argv(case: Case, tmp: Path) -> list[str]:
    folder = tmp / case.name
    return [a.replace("{tmp}", str(folder)) for a in case.argv]

"""Mutated sessions, layouts and transcripts: every outcome is a result or one clear error
(SessionError, LayoutError, ImporterError), never another exception."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import yaml
from build import CLAUDE, CODEX, REQUESTS, ROOT
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from assembler.analysis.engine.layouts import LayoutError, parse_layout_text
from assembler.sessions.generator import generate_session
from assembler.sessions.importers import ImporterError, import_session
from assembler.sessions.loader import parse_bytes
from assembler.sessions.model import SessionError
from assembler.sessions.replay import replay

SESSION_YAML = yaml.safe_dump(generate_session(3, 0), sort_keys=False, width=80)
SESSION_JSONL = "\n".join(
    [
        json.dumps({k: v for k, v in generate_session(3, 1).items() if k != "events"}),
        *(json.dumps(e) for e in generate_session(3, 1)["events"]),
    ]
)
LAYOUTS = {
    name: (ROOT / "assembler" / "data" / "layouts" / f"{name}.yaml").read_text("utf-8")
    for name in ("seed", "split-tree", "expose-full", "date-in-l0")
}
TRANSCRIPTS = {
    "claude-code": CLAUDE.read_text("utf-8"),
    "codex": CODEX.read_text("utf-8"),
    "requests": REQUESTS.read_text("utf-8"),
}
# Pieces that broke readers before: aliases, nesting, huge numbers, odd line ends, tags.
PIECES = [
    "&a ", "*a", "? ", "[[[[", "]]", "{", "}", ": ", "\n", "\n- ", "- ", "!!python/object ",
    "9" * 4400, "-1", "1e999", "nan", "\u2028", "\u2029", "\x85", "\ud800", "\t", '"', "'",
    "#", "|", ">", "~", "null", "true", "0001-01-01T00:00:00+01:00", "keep: 99", "<<: *a",
    "![t](https://proxy.invalid/x.png)", "\r", "\x00", "\ufeff",
]  # fmt: skip

mutation = st.tuples(
    st.floats(0, 1), st.integers(0, 40), st.one_of(st.sampled_from(PIECES), st.text(max_size=8))
)
mutations = st.lists(mutation, min_size=1, max_size=6)


def mutate(text: str, edits: list[tuple[float, int, str]]) -> str:
    for where, cut, piece in edits:
        at = int(where * len(text))
        text = text[:at] + piece + text[at + cut :]
    return text


FAST = settings(
    max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow], database=None
)


@FAST
@given(mutations, st.booleans())
def test_mutated_sessions(edits: list[tuple[float, int, str]], jsonl: bool) -> None:
    text = mutate(SESSION_JSONL if jsonl else SESSION_YAML, edits)
    try:
        session = parse_bytes(
            text.encode("utf-8", "surrogatepass"), "f.jsonl" if jsonl else "f.yaml"
        )
        replay(session)
    except SessionError as exc:
        assert "\n" not in str(exc)


@settings(max_examples=100, deadline=None, database=None)
@given(st.sampled_from(["seed", "split-tree", "expose-full", "date-in-l0"]), mutations)
def test_mutated_layouts(name: str, edits: list[tuple[float, int, str]]) -> None:
    text = mutate(LAYOUTS[name], edits)
    try:
        parse_layout_text(text, "l.yaml")
    except LayoutError as exc:
        assert "\n" not in str(exc)


@settings(max_examples=80, deadline=None, database=None)
@given(st.sampled_from(sorted(TRANSCRIPTS)), mutations)
def test_mutated_transcripts(fmt: str, edits: list[tuple[float, int, str]]) -> None:
    text = mutate(TRANSCRIPTS[fmt], edits)
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "t.jsonl"
        path.write_bytes(text.encode("utf-8", "surrogatepass"))
        try:
            imported = import_session(fmt, path, len)
        except ImporterError as exc:
            assert "\n" not in str(exc)
            return
    # What an importer returns must load: the importers' output is a session.
    data = imported.data
    head = {k: v for k, v in data.items() if k != "events"}
    lines = [json.dumps(head), *(json.dumps(e) for e in data["events"])]
    parse_bytes("\n".join(lines).encode("utf-8", "surrogatepass"), "o.jsonl")

"""Two subagent files of one base name in a zip (two folders): both kept, both counted."""

from __future__ import annotations

import io
import zipfile

from build import CLAUDE

from assembler.analysis.app import read_upload
from assembler.sessions.loader import parse_bytes
from assembler.sessions.model import Enter, LLMCall

AGENT = CLAUDE.parent / "subagents" / "agent-a1b2c3.jsonl"


def _zip(files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as z:
        for name, raw in files.items():
            z.writestr(name, raw)
    return buffer.getvalue()


def _subagents_and_calls(raw: bytes) -> tuple[int, int]:
    session = parse_bytes(raw, "s.jsonl")
    enters = sum(
        1 for e in session.events if isinstance(e, Enter) and e.function.startswith("subagent:")
    )
    return enters, sum(1 for e in session.events if isinstance(e, LLMCall))


def test_two_files_of_one_name_are_kept_apart() -> None:
    other = AGENT.read_bytes().replace(b"a1b2c3-", b"d4e5f6-").replace(b"List the", b"Count the")
    one = read_upload(
        [
            (
                "t.zip",
                _zip({"s.jsonl": CLAUDE.read_bytes(), "a/agent-a1b2c3.jsonl": AGENT.read_bytes()}),
            )
        ]
    )
    both = read_upload(
        [
            (
                "t.zip",
                _zip(
                    {
                        "s.jsonl": CLAUDE.read_bytes(),
                        "a/agent-a1b2c3.jsonl": AGENT.read_bytes(),
                        "b/agent-a1b2c3.jsonl": other,
                    }
                ),
            )
        ]
    )
    subs_one, calls_one = _subagents_and_calls(one.raw)
    subs_both, calls_both = _subagents_and_calls(both.raw)
    assert (subs_one, subs_both) == (1, 2)
    assert calls_both > calls_one  # the second file's requests are in the session
    assert "1 subagent," in one.summary and "2 subagents" in both.summary


def test_the_same_file_twice_is_kept_once() -> None:
    raw = AGENT.read_bytes()
    twice = read_upload(
        [
            (
                "t.zip",
                _zip(
                    {
                        "s.jsonl": CLAUDE.read_bytes(),
                        "a/agent-a1b2c3.jsonl": raw,
                        "b/agent-a1b2c3.jsonl": raw,
                    }
                ),
            )
        ]
    )
    once = read_upload(
        [("t.zip", _zip({"s.jsonl": CLAUDE.read_bytes(), "a/agent-a1b2c3.jsonl": raw}))]
    )
    assert twice.raw == once.raw and twice.summary == once.summary

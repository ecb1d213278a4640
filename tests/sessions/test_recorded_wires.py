"""Recorded requests as wires, one after another: each wire equals the request replayed on
its own, and a block the request before also sent, at the same place with the same reading,
is the very object it was (the stages after tell an unchanged block by identity). A kept
block the request marks is the same object in every request that marks it so."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

from assembler.analysis.engine import import_file
from assembler.sessions.loader import load_session, parse_session
from assembler.sessions.model import LLMCall, RecordedRequest
from assembler.sessions.recorded import RecordedWires, recorded_wire

ROOT = Path(__file__).resolve().parents[2]
FIX = ROOT / "tests" / "sessions" / "importers" / "fixtures"


def _requests() -> list[list[RecordedRequest]]:
    sessions = [
        load_session(ROOT / "sample_sessions" / "imported_claude_code.yaml"),
        parse_session(
            json.dumps(import_file("claude-code", FIX / "claude_code" / "session.jsonl")),
            "session.json",
        ),
        parse_session(
            json.dumps(
                import_file("codex", FIX / "codex" / "rollout-2026-03-12T14-00-00-019a9776.jsonl")
            ),
            "rollout.json",
        ),
    ]
    return [
        [e.request for e in s.events if isinstance(e, LLMCall) and e.request is not None]
        for s in sessions
    ]


def test_each_wire_is_the_request_replayed_on_its_own() -> None:
    for requests in _requests():
        assert len(requests) > 2
        wires = RecordedWires()
        for request in requests:
            assert wires.build(request) == recorded_wire(request)


def test_unchanged_blocks_are_the_same_objects_from_request_to_request() -> None:
    shared = 0
    for requests in _requests():
        wires = RecordedWires()
        before = wires.build(requests[0])
        for request, source in zip(requests[1:], requests, strict=False):
            now = wires.build(request)
            kept = request.blocks()
            previous = source.blocks()
            for i, (a, b) in enumerate(zip(now.blocks, before.blocks, strict=False)):
                if kept[i] is previous[i] and a == b:
                    assert a is b, (request, i)
                    shared += 1
            before = now
    assert shared > 50  # the check saw the kept prefixes


def test_a_kept_block_marked_again_is_the_same_object() -> None:
    marked = 0
    for requests in _requests():
        for earlier, later in itertools.pairwise(requests):
            kept = later._keep  # the blocks it shares with the request before
            pairs = list(zip(earlier.blocks()[:kept], later.blocks()[:kept], strict=True))
            assert all(a is b for a, b in pairs if a == b)
            marked += sum(1 for a, b in pairs if a == b and b.breakpoint)
    assert marked > 5  # the system prompt's marker, kept from request to request

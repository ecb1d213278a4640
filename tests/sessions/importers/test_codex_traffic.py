"""The Codex rules the real-traffic corpus showed, one situation each, on the rollouts of
fixtures/codex_traffic (written by fixtures/build_codex_traffic.py): each is billed by a
small model of OpenAI's cache from what the client sent, so the importer must rebuild
exactly that for the simulation to agree with the bill call by call."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from importer_helpers import FIXTURES, lines

from assembler.analysis.bill import compare_measured, continuity_breaks, hit_bin
from assembler.analysis.engine import SessionAnalysis, analyze, import_file
from assembler.sessions.loader import parse_session
from assembler.sessions.model import LLMCall, RecordedBlock, Session

OLD = FIXTURES / "codex_traffic" / "rollout-codex-058.jsonl"
NEW = FIXTURES / "codex_traffic" / "rollout-codex-0125.jsonl"


@cache
def session(path: Path) -> Session:
    return parse_session(json.dumps(import_file("codex", path)), f"{path.stem}.json")


@cache
def analysed(path: Path) -> SessionAnalysis:
    return analyze(session(path))


def calls(path: Path) -> list[LLMCall]:
    return [e for e in session(path).events if isinstance(e, LLMCall)]


def blocks(path: Path, step: int) -> list[RecordedBlock]:
    request = calls(path)[step - 1].request
    assert request is not None
    return list(request)


def billed(path: Path) -> list[dict[str, Any]]:
    """Each response's usage as the rollout writes it, once per response."""
    out: list[dict[str, Any]] = []
    for r in lines(path):
        info = r["payload"].get("info") if r["payload"].get("type") == "token_count" else None
        if info and (not out or info["last_token_usage"] != out[-1]):
            out.append(info["last_token_usage"])
    return out


@pytest.mark.parametrize("path", [OLD, NEW], ids=["0.58", "0.125"])
def test_every_call_reads_what_the_bill_says(path: Path) -> None:
    steps = analysed(path).steps
    assert [(s.read, s.tokens["total"]) for s in steps] == [
        (u["cached_input_tokens"], u["input_tokens"]) for u in billed(path)
    ]
    assert all(c.simulated_class == c.measured_class for c in compare_measured(analysed(path)))


@pytest.mark.parametrize("path", [OLD, NEW], ids=["0.58", "0.125"])
def test_each_response_is_billed_once_before_or_after_its_items(path: Path) -> None:
    """0.58 writes a usage before its response's items and again after the next
    turn_context; 0.125 once, after them. Either way one usage per response."""
    counts = [r for r in lines(path) if r["payload"].get("type") == "token_count"]
    responses = billed(path)
    assert len(counts) == (2 * len(responses) - 1 if path is OLD else len(responses))
    got = [(c.usage.input + c.usage.cache_read, c.usage.output) for c in calls(path) if c.usage]
    assert got == [(u["input_tokens"], u["output_tokens"]) for u in responses]


def test_a_legacy_rollout_sends_a_long_output_cut_to_its_first_5_kib() -> None:
    """No truncation policy recorded: the 12 KB output is cut as Codex 0.58 cut it (a JSON
    output is one line: its first 5,120 bytes and a marker), the escaped JSON read as is."""
    output = blocks(OLD, 3)[-1]
    assert output.text.startswith('Total output lines: 1\n\n{"output": "export.py 0:')
    assert "[... output truncated to fit 10240 bytes ...]" in output.text
    assert len(output.text.encode()) < 5_300


def test_a_rollout_with_a_truncation_policy_sends_its_outputs_as_recorded() -> None:
    recorded = next(
        r["payload"]["output"]
        for r in lines(NEW)
        if r["payload"].get("type") == "function_call_output"
    )
    assert len(recorded.encode()) > 10_240
    output = next(b for b in blocks(NEW, 2) if b.name.endswith("function_call_output"))
    assert output.text == recorded


def test_a_json_output_is_read_decoded() -> None:
    output = next(b for b in blocks(OLD, 2) if b.name.endswith("function_call_output"))
    assert (
        output.text
        == 'export.py\nrefunds.py\n\nmetadata: {"exit_code": 0, "duration_seconds": 0.2}'
    )


def test_reasoning_dropped_at_a_new_turn_is_a_named_break() -> None:
    assert [c.label for c in calls(OLD)] == [
        None,
        None,
        None,
        "reasoning-dropped",
        None,
        "reasoning-dropped-2",
    ]
    assert continuity_breaks(session(OLD)) == {"reasoning-dropped": 2}
    assert not any(b.name.endswith("reasoning") for b in blocks(OLD, 4)[:-1])
    # the read ends where the first dropped reasoning item stood
    step = analysed(OLD).steps[3]
    assert hit_bin(step.read, step.tokens["total"]) == "partial"


def test_what_other_sessions_keep_cached_is_warm_first_and_after_a_pause() -> None:
    """The first request reads 3,072 of the unrecorded head (the base instructions and
    tools every session sends); after 37 minutes the session's own entries are gone and
    the request reads that part again."""
    warm = [[b.name for b in blocks(OLD, k) if b.warm] for k in range(1, 7)]
    shared = "unrecorded prefix, cached before"
    assert warm == [[shared], [], [], [], [], [shared]]
    head = blocks(OLD, 1)[:2]
    assert [b.tokens for b in head] == [3_072, 28]
    steps = analysed(OLD).steps
    assert (steps[0].read, steps[5].read) == (3_072, 3_072)


def test_recorded_base_instructions_are_a_block_of_their_own() -> None:
    head = blocks(NEW, 1)[:2]
    base = next(r for r in lines(NEW) if r["type"] == "session_meta")["payload"]
    assert (head[0].name, head[0].text) == ("base instructions", base["base_instructions"]["text"])
    assert (head[1].name, head[1].tokens) == ("unrecorded tools", 2_500)
    assert not any(b.warm for k in range(1, 4) for b in blocks(NEW, k))


def test_a_web_search_is_read_by_its_own_response() -> None:
    """The response that searched billed its results as input: its request holds the
    items before the search and the search, sized from the bill."""
    second = blocks(NEW, 2)
    assert [b.name.split()[1] for b in second[-2:]] == ["reasoning", "web_search_call"]
    assert (second[-1].tokens, second[-1].inferred) == (3_000, True)
    third = blocks(NEW, 3)
    assert third[: len(second)] == second  # the next request continues it


def test_gpt_5_5_reads_in_512_token_steps_from_384() -> None:
    reads = [s.read for s in analysed(NEW).steps if s.read]
    assert reads and all((r - 384) % 512 == 0 for r in reads)

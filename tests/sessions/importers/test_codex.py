"""The Codex rollout importer on fixtures/codex."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from importer_helpers import CODEX, lines, steps, texts

from assembler.analysis.engine.importing import import_file
from assembler.cache.tokenizers import counter
from assembler.sessions.importers import ImporterError
from assembler.sessions.importers.codex.items import FRAMING, SUMMARY_FRAMING
from assembler.sessions.model import Usage
from assembler.sessions.replay import Step


@pytest.fixture(scope="module")
def imported() -> dict[str, Any]:
    return import_file("codex", CODEX)


@pytest.fixture(scope="module")
def all_steps(imported: dict[str, Any]) -> list[Step]:
    return steps(imported)


def test_one_step_per_token_count_with_models_turns_and_labels(all_steps: list[Step]) -> None:
    assert len(all_steps) == 5
    assert [s.context.profile.model for s in all_steps] == ["gpt-5-codex"] * 3 + ["gpt-5"] * 2
    assert [s.call_path[-1] for s in all_steps] == ["turn_1"] * 3 + ["turn_2", "turn_3"]
    assert [s.label for s in all_steps] == [None, None, None, "model-switch", "compaction"]


def test_session_header(imported: dict[str, Any]) -> None:
    s = imported["session"]
    assert (s["id"], s["agent"]["name"], s["provider"], s["model"]) == (
        "019a9776-0a34-7842-8627-112b63d66e90",
        "codex",
        "openai",
        "gpt-5-codex",
    )
    assert s["environment"] == {
        "harness": "Codex CLI",
        "cwd": "/home/dev/ledgerline",
        "git_repo": True,
    }
    turn = next(e for e in imported["events"] if e.get("function") == "turn_1")
    assert turn["input"] == "Add a --json flag to the report command."


def test_usage_is_last_token_usage_with_cached_tokens_taken_out(all_steps: list[Step]) -> None:
    assert [s.call.usage for s in all_steps] == [
        Usage(input=9000, cache_read=0, cache_write=0, output=120),
        Usage(input=9400 - 8960, cache_read=8960, cache_write=0, output=300),
        Usage(input=9700 - 9344, cache_read=9344, cache_write=0, output=40),
        Usage(input=9800, cache_read=0, cache_write=0, output=80),
        Usage(input=8100 - 7936, cache_read=7936, cache_write=0, output=30),
    ]


def test_unrecorded_prefix_follows_the_documented_inference(all_steps: list[Step]) -> None:
    """The head is the smallest billed input less the history's size over the requests
    before the history is first rewritten (the model switch at step 4)."""
    gaps = []
    for s in all_steps[:3]:
        assert s.call.usage is not None and s.call.request is not None
        u = s.call.usage
        history = sum(b.tokens or 0 for b in s.call.request[1:])
        gaps.append(u.input + u.cache_read + u.cache_write - history)
    sizes = {s.call.request[0].tokens for s in all_steps if s.call.request}
    assert sizes == {min(gaps)} and 7000 < min(gaps) < 9500
    assert not any(b.breakpoint for s in all_steps for b in s.call.request or ())


def test_history_is_input_items_in_order_with_reasoning_as_a_sized_block(
    all_steps: list[Step],
) -> None:
    second = all_steps[1].call.request
    assert second is not None
    assert [b.name for b in second] == [
        "unrecorded prefix",
        "messages[0] text",
        "messages[1] text",
        "messages[2] text",
        "messages[3] reasoning",
        "messages[4] function_call shell",
        "messages[5] function_call_output",
    ]
    assert second[1].text.startswith("<user_instructions>")
    # a call as the model reads it: its arguments; an output object read decoded
    assert json.loads(second[5].text) == {"command": ["rg", "-n", "def report", "ledgerline"]}
    assert second[6].text == 'ledgerline/cli.py:40:def report(args):\n\nmetadata: {"exit_code": 0}'
    # every block counted with the framing of its kind
    count = counter("o200k_base").count
    assert second[5].tokens == count(second[5].text) + FRAMING["function_call"]
    # the reasoning goes back in the same turn, sized, never as its encrypted text; its
    # summary is shown
    assert second[4].text.endswith("Find the command.")
    first_count = next(r for r in lines(CODEX) if r["payload"].get("type") == "token_count")
    reasoning = first_count["payload"]["info"]["last_token_usage"]["reasoning_output_tokens"]
    assert second[4].tokens == reasoning + FRAMING["reasoning"] + SUMMARY_FRAMING
    assert not any("gAAAA" in t for s in all_steps for t in texts(s))


def test_compaction_restarts_the_history_from_the_summary(all_steps: list[Step]) -> None:
    after = texts(all_steps[4])
    assert len(after) == 3
    assert after[1].startswith("Summary: added a --json flag")
    assert after[2] == "Commit it."


def test_replacement_history_replaces_the_history(tmp_path: Path) -> None:
    records = lines(CODEX)
    for r in records:
        if r["type"] == "compacted":
            r["payload"]["replacement_history"] = [
                {
                    "type": "message",
                    "role": "user",
                    "content": [{"type": "input_text", "text": "kept 1"}],
                },
                {
                    "type": "message",
                    "role": "user",
                    "content": [{"type": "input_text", "text": "kept 2"}],
                },
            ]
    path = tmp_path / "rollout.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), "utf-8")
    assert texts(steps(import_file("codex", path))[4])[1:] == ["kept 1", "kept 2", "Commit it."]


def test_tool_calls_become_tool_events(imported: dict[str, Any]) -> None:
    tools = [(e["name"], e["output"]) for e in imported["events"] if e["type"] == "tool"]
    assert [name for name, _ in tools] == ["shell", "apply_patch", "shell"]
    assert tools[1][1] == "Success. Updated ledgerline/cli.py"


def test_a_token_count_after_the_tool_output_still_belongs_to_its_request(tmp_path: Path) -> None:
    records = lines(CODEX)
    i = next(i for i, r in enumerate(records) if r["payload"].get("type") == "token_count")
    records[i], records[i + 1] = records[i + 1], records[i]
    path = tmp_path / "rollout.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), "utf-8")
    first = steps(import_file("codex", path))[0].call.usage
    assert first == Usage(input=9000, cache_read=0, cache_write=0, output=120)


def test_a_response_before_any_turn_context_is_an_error(tmp_path: Path) -> None:
    records = [r for r in lines(CODEX) if r["type"] != "turn_context"]
    path = tmp_path / "rollout.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), "utf-8")
    with pytest.raises(
        ImporterError, match=r"rollout.jsonl: no turn_context record names the model"
    ):
        import_file("codex", path)

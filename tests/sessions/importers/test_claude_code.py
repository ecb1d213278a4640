"""The Claude Code importer on the hand-written transcript in fixtures/claude_code."""

from __future__ import annotations

import json
import os
import shutil
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from importer_helpers import CLAUDE, SUBAGENT, lines, load, steps, texts

from assembler.analysis.engine.importing import import_file, import_session
from assembler.analysis.engine.pipeline import SessionAssembler
from assembler.cache.tokenizers import counter
from assembler.sessions.importers import ImporterError
from assembler.sessions.importers.claude_code import side_files
from assembler.sessions.model import Usage
from assembler.sessions.replay import Step

SONNET, HAIKU, OPUS = (
    "claude-sonnet-4-5-20250929",
    "claude-haiku-4-5-20251001",
    "claude-opus-4-5-20251101",
)
MAIN = ("claude_code_session",)


@pytest.fixture(scope="module")
def imported() -> dict[str, Any]:
    return import_file("claude-code", CLAUDE)


@pytest.fixture(scope="module")
def all_steps(imported: dict[str, Any]) -> list[Step]:
    return steps(imported)


def expected_usage(path: Path, request_id: str) -> Usage:
    """Straight from the raw records: the last record of a request carries its final usage."""
    recs = [r for r in lines(path) if r.get("requestId") == request_id]
    u = recs[-1]["message"]["usage"]
    return Usage(
        input=u["input_tokens"],
        cache_read=u["cache_read_input_tokens"],
        cache_write=u["cache_creation_input_tokens"],
        output=u["output_tokens"],
    )


def test_one_step_per_api_request_and_records_sharing_a_request_id_are_one(
    all_steps: list[Step],
) -> None:
    raw = lines(CLAUDE) + lines(SUBAGENT)
    ids = {r["requestId"] for r in raw if r.get("type") == "assistant" and "requestId" in r}
    assert len(ids) == 12 and len(all_steps) == 12  # the <synthetic> record is not a request
    first = all_steps[0]
    assert first.call.output == (
        "I'll look at how the report groups orders by day.\n[tool_use Grep]"
    )
    assert first.call.usage == expected_usage(CLAUDE, "req_01")
    assert first.call.usage is not None and first.call.usage.output > 1  # the final record's


def test_session_header(imported: dict[str, Any]) -> None:
    s = imported["session"]
    assert s["id"] == "5a0ddcd0-cafe-4000-8000-000000000001"
    assert (s["agent"]["name"], s["provider"], s["model"]) == ("claude-code", "anthropic", SONNET)
    assert s["environment"] == {
        "harness": "Claude Code",
        "cwd": "/home/dev/ledgerline",
        "git_repo": True,
    }
    assert s["title"] == "Fix the late-order double count"


def test_call_tree_turns_and_subagent(all_steps: list[Step]) -> None:
    paths = [s.call_path for s in all_steps]
    sub = (*MAIN, "turn_1", "subagent:a1b2c3")
    assert paths == [
        (*MAIN, "turn_1"),
        (*MAIN, "turn_1"),
        sub,
        sub,
        (*MAIN, "turn_1"),
        (*MAIN, "turn_2"),
        (*MAIN, "turn_2"),
        (*MAIN, "turn_3"),
        (*MAIN, "turn_3"),
        (*MAIN, "turn_4"),
        (*MAIN, "turn_4"),
        (*MAIN, "turn_5"),
    ]
    assert all_steps[2].depth == 3


def test_subagent_enters_with_its_prompt_before_the_task_result(imported: dict[str, Any]) -> None:
    events = imported["events"]
    enter = next(i for i, e in enumerate(events) if e.get("function") == "subagent:a1b2c3")
    task = next(i for i, e in enumerate(events) if e.get("name") == "Task")
    assert enter < task
    assert events[enter]["input"].startswith("List the tests that cover daily_revenue")
    tools = [e["name"] for e in events if e["type"] == "tool"]
    assert tools == ["Grep", "Glob", "Task", "Edit", "Write", "Bash"]


def test_models_follow_the_requests_and_only_the_main_switch_is_labelled(
    all_steps: list[Step],
) -> None:
    models = [s.context.profile.model for s in all_steps]
    assert models == [SONNET, SONNET, HAIKU, HAIKU] + [SONNET] * 5 + [OPUS] * 3
    labels = {s.number: s.label for s in all_steps if s.label}
    assert labels == {10: "model-switch", 12: "compaction"}


def test_unrecorded_prefix_is_inferred_from_usage(all_steps: list[Step]) -> None:
    """The fixture was billed for a 12,000-token main prefix and a 6,000-token subagent one."""
    for s in all_steps:
        assert s.call.request is not None
        head = s.call.request[0]
        assert (head.section, head.name, head.breakpoint) == ("system", "unrecorded prefix", True)
        assert head.tokens == (6000 if "subagent:a1b2c3" in s.call_path else 12000)
    # and by the documented rule: min over requests of (measured total - counted history)
    count = counter("o200k_base").count
    main = [s for s in all_steps if "subagent:a1b2c3" not in s.call_path]
    gaps = []
    for s in main:
        assert s.call.usage is not None and s.call.request is not None
        u = s.call.usage
        counted = sum(
            b.tokens if b.tokens is not None else count(b.text) for b in s.call.request[1:]
        )
        gaps.append(u.input + u.cache_read + u.cache_write - counted)
    assert min(gaps) == 12000


def test_subagent_prefix_text_differs_from_the_main_one(all_steps: list[Step]) -> None:
    assert texts(all_steps[2])[0] != texts(all_steps[0])[0]
    assert "a1b2c3" in texts(all_steps[2])[0]


def test_blocks_are_the_history_in_order_with_the_tail_marked(all_steps: list[Step]) -> None:
    second = all_steps[1].call.request
    assert second is not None
    assert [b.name for b in second] == [
        "unrecorded prefix",
        "messages[0] text",
        "messages[1] thinking",
        "messages[2] text",
        "messages[3] tool_use Grep",
        "messages[4] tool_result Grep",
    ]
    assert [b.role for b in second[1:]] == ["user", "assistant", "assistant", "assistant", "user"]
    assert json.loads(second[4].text)["input"] == {
        "pattern": "def daily_revenue",
        "path": "ledgerline/reports",
    }
    assert [b.breakpoint for b in second] == [True, False, False, False, False, True]
    # thinking goes back as a block of its billed size (none here), never as its text
    assert (second[2].tokens, second[2].inferred) == (0, True)
    assert not any("timezone handling" in t for s in all_steps for t in texts(s))


def test_history_grows_by_the_previous_exchange(all_steps: list[Step]) -> None:
    a, b = texts(all_steps[5]), texts(all_steps[6])
    assert b[: len(a)] == a and len(b) == len(a) + 2


def test_compaction_restarts_the_history_from_the_summary(all_steps: list[Step]) -> None:
    before, after = texts(all_steps[10]), texts(all_steps[11])
    assert "Fix it." in before
    assert "Fix it." not in after
    assert len(after) == 3
    assert after[1].startswith("This session is being continued")
    assert after[2] == "Write the commit message."
    u = all_steps[11].call.usage
    assert u is not None and u.cache_read == 12000  # only the system prefix survived


def test_idle_gap_and_model_switch_show_as_measured_misses(all_steps: list[Step]) -> None:
    def read(n: int) -> int:
        u = all_steps[n - 1].call.usage
        assert u is not None
        return u.cache_read

    assert all_steps[7].at - all_steps[6].at > timedelta(hours=1)
    assert read(7) > 0 and read(8) == 0  # the gap outlived the cache
    assert read(9) > 0 and read(10) == 0  # a new model has its own cache
    assert read(5) > 12000  # back from the subagent, sonnet's cache is still warm


def test_recorded_blocks_are_replayed_by_the_pipeline(all_steps: list[Step]) -> None:
    session = load(import_file("claude-code", CLAUDE))
    assembler = SessionAssembler(session)
    step = next(iter(assembler.steps()))
    wire = assembler.assemble(step).wire
    assert [b.name for b in wire.blocks] == ["unrecorded prefix", "messages[0] text"]
    assert wire.blocks[0].declared_tokens == 12000


def copy_main(tmp_path: Path, *, with_subagents: str | None) -> Path:
    target = tmp_path / "session.jsonl"
    shutil.copy(CLAUDE, target)
    if with_subagents is not None:
        folder = tmp_path / with_subagents
        folder.mkdir(parents=True)
        shutil.copy(SUBAGENT, folder / SUBAGENT.name)
    return target


def test_without_subagent_files_only_the_main_requests_remain(tmp_path: Path) -> None:
    got = steps(import_file("claude-code", copy_main(tmp_path, with_subagents=None)))
    assert len(got) == 10
    assert all("subagent:a1b2c3" not in s.call_path for s in got)


def test_subagents_in_a_folder_named_after_the_session(tmp_path: Path) -> None:
    path = copy_main(tmp_path, with_subagents="session/subagents")
    assert len(steps(import_file("claude-code", path))) == 12


def test_subagents_option_names_the_folder(tmp_path: Path) -> None:
    path = copy_main(tmp_path, with_subagents="elsewhere")
    got = steps(import_file("claude-code", path, subagents=tmp_path / "elsewhere"))
    assert [s.call_path[-1] for s in got].count("subagent:a1b2c3") == 2
    with pytest.raises(ImporterError, match="--subagents: expected a folder"):
        import_file("claude-code", path, subagents=tmp_path / "missing")


def test_the_folder_beside_is_found_once_for_subagents_and_compaction_calls(
    tmp_path: Path,
) -> None:
    path = copy_main(tmp_path, with_subagents="session/subagents")
    folder = tmp_path / "session" / "subagents"
    shutil.copy(SUBAGENT, folder / "agent-acompact-0001.jsonl")
    (folder / "notes.jsonl").write_text("")  # not an agent-*.jsonl: not read
    assert side_files(path, None) == (
        [folder / SUBAGENT.name],
        [folder / "agent-acompact-0001.jsonl"],
    )
    # a relative path finds the same folder, named as it was given
    relative = Path(os.path.relpath(path))
    assert side_files(relative, None)[0] == [relative.parent / "session/subagents" / SUBAGENT.name]
    # the folder is named after the file's stem as pathlib spells it (a trailing dot kept)
    odd = tmp_path / "odd" / "session."
    (odd.parent / "session." / "subagents").mkdir(parents=True)
    shutil.copy(CLAUDE, odd)
    shutil.copy(SUBAGENT, odd.parent / "session." / "subagents" / SUBAGENT.name)
    assert side_files(odd, None)[0] == [odd.parent / "session." / "subagents" / SUBAGENT.name]
    (tmp_path / "bare").mkdir()
    assert side_files(copy_main(tmp_path / "bare", with_subagents=None), None) == ([], [])


def test_the_import_says_how_many_subagent_files_it_read(tmp_path: Path) -> None:
    alone = import_session("claude-code", copy_main(tmp_path, with_subagents=None))
    assert alone.subagent_files == 0
    (tmp_path / "with").mkdir()
    beside = import_session(
        "claude-code", copy_main(tmp_path / "with", with_subagents="session/subagents")
    )
    assert beside.subagent_files == 1


def test_a_subagent_no_result_names_is_placed_by_time(tmp_path: Path) -> None:
    path = copy_main(tmp_path, with_subagents="subagents")
    records = lines(path)
    for r in records:
        r.pop("toolUseResult", None)
        content = r.get("message", {}).get("content")
        if isinstance(content, list):
            for part in content:
                if part.get("type") == "tool_result":
                    part["content"] = part["content"].split("\nagentId:")[0]
    path.write_text("".join(json.dumps(r) + "\n" for r in records), "utf-8")
    got = steps(import_file("claude-code", path))
    assert [s.call_path for s in got][2] == (*MAIN, "turn_1", "subagent:a1b2c3")


def test_inline_sidechain_records_become_a_child_call(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    main = lines(CLAUDE)
    at = next(i for i, r in enumerate(main) if r.get("toolUseResult"))
    path.write_text(
        "".join(json.dumps(r) + "\n" for r in [*main[:at], *lines(SUBAGENT), *main[at:]]), "utf-8"
    )
    got = steps(import_file("claude-code", path))
    assert len(got) == 12 and got[2].call_path[-1] == "subagent:a1b2c3"


def test_malformed_lines_are_skipped_and_counted(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    raw = CLAUDE.read_text("utf-8").splitlines()
    raw[5] = raw[5][:40]  # a line cut short
    raw.insert(8, "[1, 2]")
    path.write_text("\n".join(raw) + "\n", "utf-8")
    result = import_session("claude-code", path)
    assert result.warnings == (
        "skipped 2 malformed lines (first at line 6: not valid JSON: Unterminated string "
        "starting at)",
    )
    # line 6 held a tool_use record of req_01: the request itself survives (no subagents here)
    assert len(steps(result.data)) == 10


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('{"type": "assistant", "timestamp": "2026-03-12T09:00:00Z", "message": 3}',
         "message: expected an object, found a number"),
        ('{"type": "assistant", "timestamp": "yesterday", "message": {"model": "m", "content": []}}',
         "expected an ISO 8601 timestamp"),
        ('{"type": "assistant", "timestamp": "2026-03-12T09:00:00Z", "message": {"content": []}}',
         "message.model: expected the model name"),
        ('{"type": "user", "timestamp": "2026-03-12T09:00:00Z", "message": {"content": 7}}',
         "message.content: expected a string or a list"),
    ],
)  # fmt: skip
def test_structural_errors_name_file_line_and_expectation(
    tmp_path: Path, line: str, message: str
) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text('{"type": "summary", "summary": "x"}\n' + line + "\n", "utf-8")
    with pytest.raises(ImporterError) as info:
        import_file("claude-code", path)
    text = str(info.value)
    assert text.startswith(f"{path}:2: ") and message in text and "\n" not in text


def test_a_transcript_without_requests_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(
        '{"type": "user", "timestamp": "2026-03-12T09:00:00Z", "message": {"content": "hi"}}\n'
    )
    with pytest.raises(ImporterError, match="no API request found"):
        import_file("claude-code", path)


def test_the_history_is_written_once_not_once_per_request(
    imported: dict[str, Any], all_steps: list[Step]
) -> None:
    llm = [e for e in imported["events"] if e["type"] == "llm"]
    keeps = [e["request"].get("keep", 0) for e in llm]
    # a request starts from the previous one's blocks unless that one was another
    # agent's (the subagent's requests interleave with the main agent's)
    assert keeps == [0, 2, 0, 2, 0, 8, 10, 12, 14, 16, 19, 1]
    # each request lists only what it adds; read back, it is the whole request again
    written = sum(len(e["request"]["blocks"]) for e in llm)
    read_back = sum(len(s.call.request or ()) for s in all_steps)
    assert written < read_back / 2
    before_compaction = all_steps[-2].call.request
    assert before_compaction is not None and len(before_compaction) == 19 + 2
    assert [b.name for b in before_compaction][:2] == ["unrecorded prefix", "messages[0] text"]

"""Claude Code transcripts as real clients write them: images inside tool results,
repeated lines, tools run while the answer streams, parallel sidechains, mixed write
lifetimes and oversized records. Each transcript is built here, record by record."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assembler.sessions.importers import ImporterError
from tests.sessions.importers.claude_code_records import (
    Transcript,
    analysed,
    image,
    imported,
    reads,
    requests,
    result,
    text,
    usage,
    use,
)

# --- 1: an image inside a tool result ----------------------------------------------------


def test_an_image_in_a_tool_result_is_sized_from_its_header(tmp_path: Path) -> None:
    t = Transcript()
    t.user("09:00:00", "Look at shot.png")
    t.asst("09:00:04", "r1", [use("toolu_1", file_path="shot.png")], usage(0, 12000, 40))
    t.user("09:00:05", [result("toolu_1", [image(1000, 750)])])
    t.asst("09:00:10", "r2", [text("The button is misaligned.")], usage(12000, 1020, 30))
    t.user("09:01:00", "thanks, now fix it")
    t.asst("09:01:04", "r3", [text("Done.")], usage(13020, 20, 10))
    data = imported(t.write(tmp_path / "a.jsonl")).data
    a = analysed(data)
    block = next(b for b in a.steps[1].blocks if "tool_result" in b.name)
    assert block.tokens == 1000  # 1000 x 750 px / 750
    assert not a.steps[1].inferred
    simulated, measured = reads(data)[2]
    assert abs(simulated - measured) < 50  # the image was 1,000 short before


def test_a_tool_result_without_image_data_is_inferred_from_the_bill(tmp_path: Path) -> None:
    t = Transcript()
    t.user("09:00:00", "Look at shot.png")
    t.asst("09:00:04", "r1", [use("toolu_1", file_path="shot.png")], usage(0, 12000, 40))
    blank = {"type": "image", "source": {"type": "base64", "media_type": "image/png"}}
    t.user("09:00:05", [result("toolu_1", [blank])])
    t.asst("09:00:10", "r2", [text("Fine.")], usage(12000, 900, 30))
    a = analysed(imported(t.write(tmp_path / "a.jsonl")).data)
    assert [name for name, _ in a.steps[1].inferred] == ["messages[2] tool_result Read"]


# --- 2: a record written twice -----------------------------------------------------------


def test_a_repeated_record_is_read_once_and_counted(tmp_path: Path) -> None:
    t = Transcript()
    t.user("09:00:00", "Find the bug")
    t.asst("09:00:04", "r1", [text("Looking.")], usage(0, 12000, 10))
    t.asst("09:00:05", "r1", [use("toolu_1", "Grep", pattern="x")], usage(0, 12000, 40))
    t.lines.append(dict(t.lines[-1]))  # the same uuid again
    t.user("09:00:06", [result("toolu_1", "a.py:1: x")])
    t.asst("09:00:10", "r2", [text("Found it.")], usage(12000, 60, 10))
    got = imported(t.write(tmp_path / "h.jsonl"))
    names = [b["name"] for b in requests(got.data)[1]]
    assert names.count("messages[2] tool_use Grep") == 1
    assert len(names) == 5  # prefix, prompt, text, tool_use, tool_result
    assert got.warnings == (
        f"skipped 1 repeated record (a uuid written again, the first copy kept; "
        f"first at line 4 of {tmp_path / 'h.jsonl'})",
    )


# --- 3: tools run while the answer streams -----------------------------------------------


def _streamed(tmp_path: Path) -> Path:
    t = Transcript()
    t.user("09:00:00", "Read a.py and b.py")
    t.asst("09:00:04", "r1", [use("toolu_a", file_path="a.py")], usage(0, 12000, 20))
    t.user("09:00:04.500", [result("toolu_a", "print('a')\n" * 40)])
    t.asst("09:00:05", "r1", [use("toolu_b", file_path="b.py")], usage(0, 12000, 60))
    t.user("09:00:05.500", [result("toolu_b", "print('b')\n" * 40)])
    t.asst("09:00:10", "r2", [text("Both print.")], usage(12000, 380, 10))
    t.user("09:01:00", "ok next")
    t.asst("09:01:04", "r3", [text("Sure.")], usage(12380, 12, 5))
    return t.write(tmp_path / "b.jsonl")


def test_tool_uses_of_one_response_come_before_their_results(tmp_path: Path) -> None:
    names = [b["name"] for b in requests(imported(_streamed(tmp_path)).data)[1][2:]]
    assert names == [
        "messages[1] tool_use Read",
        "messages[2] tool_use Read",
        "messages[3] tool_result Read",
        "messages[4] tool_result Read",
    ]


def test_a_rewind_past_a_streamed_response_keeps_the_api_order(tmp_path: Path) -> None:
    t = Transcript()
    t.lines = [json.loads(x) for x in _streamed(tmp_path).read_text("utf-8").splitlines()]
    t.parent = t.lines[5]["uuid"]  # back to the answer "Both print."
    t.user("09:02:00", "other question")
    t.asst("09:02:04", "r4", [text("Answer.")], usage(12380, 12, 5))
    names = [b["name"] for b in requests(imported(t.write(tmp_path / "b2.jsonl")).data)[3][2:]]
    assert names[:4] == [
        "messages[1] tool_use Read",
        "messages[2] tool_use Read",
        "messages[3] tool_result Read",
        "messages[4] tool_result Read",
    ]
    assert names[-2:] == ["messages[5] text", "messages[6] text"]


# --- 4: parallel sidechains without agentId ----------------------------------------------


def test_parallel_sidechains_without_agent_id_keep_their_own_history(tmp_path: Path) -> None:
    t = Transcript()
    t.user("09:00:00", "Research X and Y in parallel")
    tasks = [
        use("toolu_x", "Task", prompt="research X"),
        use("toolu_y", "Task", prompt="research Y"),
    ]
    t.asst("09:00:04", "r1", tasks, usage(0, 12000, 80))
    main = t.parent
    for who, at, parent in (("x", "09:00:05", None), ("y", "09:00:05.100", None)):
        t.parent = parent
        t.user(at, f"research {who.upper()}", uuid=f"s{who}1", isSidechain=True)
    for who, at in (("x", "09:00:08"), ("y", "09:00:09")):
        t.parent = f"s{who}1"
        answer = [text(f"{who.upper()} is " + who * 400)]
        t.asst(at, f"r{who}", answer, usage(0, 5000, 100), uuid=f"s{who}2", isSidechain=True)
    t.parent = main
    t.user("09:00:10", [result("toolu_x", "X is ..."), result("toolu_y", "Y is ...")])
    t.asst("09:00:14", "r2", [text("Summary")], usage(12000, 40, 10))
    data = imported(t.write(tmp_path / "d.jsonl")).data
    enters = [e["function"] for e in data["events"] if e["type"] == "enter"]
    assert enters.count("subagent:sidechain") == 1
    assert enters.count("subagent:sidechain-2") == 1
    prompts = [[b["text"] for b in r if b["name"].endswith("text")] for r in requests(data)]
    assert ["research X"] in prompts and ["research Y"] in prompts


# --- 5: a bill mixing 1-hour and 5-minute writes -----------------------------------------


def test_the_part_billed_for_an_hour_is_kept_an_hour(tmp_path: Path) -> None:
    t = Transcript()
    t.user("09:00:00", "hello")
    t.asst("09:00:04", "r1", [text("hi")], usage(0, 12000, 50, hour=11000))
    t.user("09:07:00", "again")  # 7 minutes: the 5-minute part expired, the hour's did not
    t.asst("09:07:04", "r2", [text("yes")], usage(11000, 1015, 8))
    data = imported(t.write(tmp_path / "g.jsonl")).data
    head = requests(data)[0][0]
    assert (head["name"], head["tokens"]) == ("unrecorded system prompt", 11000)
    first, second = (e["request"] for e in data["events"] if e["type"] == "llm")
    assert first["blocks"][0]["ttl"] == "1h" and second["breakpoints_1h"] == [0]
    assert reads(data)[1] == (11000, 11000)  # the simulation read nothing before


# --- 7: an oversized record ----------------------------------------------------------------

BIG = "A" * (9 * 1024 * 1024)  # over the 8 MiB a record may hold


def test_an_oversized_tool_result_is_skipped_and_counted(tmp_path: Path) -> None:
    t = Transcript()
    t.user("09:00:00", "Read big.pdf")
    t.asst("09:00:04", "r1", [use("toolu_e", file_path="big.pdf")], usage(0, 12000, 20))
    pdf = {"type": "document", "source": {"type": "base64", "data": BIG}}
    t.user("09:00:05", [result("toolu_e", [pdf])])
    t.asst("09:00:10", "r2", [text("It is a PDF.")], usage(12000, 30000, 10))
    path = t.write(tmp_path / "e.jsonl")
    got = imported(path)
    assert len(requests(got.data)) == 2
    assert got.warnings == (
        "skipped 1 oversized record (over 8,388,608 bytes, e.g. an attached file; its "
        f"content is missing from the history; first at line 3 of {path}, "
        f"{len(json.dumps(t.lines[2])):,} bytes)",
    )


def test_an_oversized_response_is_refused(tmp_path: Path) -> None:
    t = Transcript()
    t.user("09:00:00", "Write it all out")
    t.asst("09:00:04", "r1", [text(BIG)], usage(0, 12000, 20))
    path = t.write(tmp_path / "e.jsonl")
    with pytest.raises(ImporterError, match=r"e\.jsonl:2: .* a response the session needs"):
        imported(path)

"""Sizes from the bill: each conversation's unrecorded part, a block for what a bill holds
beyond the recorded blocks, one factor per session and model, the task notification the
bill shows was not rewritten, the part a mixed bill wrote for an hour, and the factor the
analysis carries. Each transcript is billed from the sizes its own blocks are counted at
(an import with placeholder bills tells them), plus what the client sent that the
transcript does not show."""

from __future__ import annotations

import json
from collections.abc import Callable
from itertools import pairwise
from pathlib import Path
from typing import Any

from assembler.analysis.bill.measured import compare_measured
from assembler.analysis.engine.analyzer import analyze
from assembler.analysis.engine.results import SessionAnalysis, StepAnalysis
from assembler.sessions.importers.claude_code.sizes import SHORTFALL_MINIMUM
from assembler.sessions.importers.sizing import ScaleFit
from assembler.sessions.loader import parse_session
from tests.sessions.importers.claude_code_records import (
    SONNET,
    Transcript,
    analysed,
    imported,
    result,
    text,
    use,
)
from tests.sessions.importers.claude_code_records import usage as billed

HAIKU = "claude-haiku-4-5-20251001"
SYSTEM = 10_000  # the system prompt and tools the client sends before the messages


def usage(read: int, write: int, out: int = 10, hour: int = 0) -> dict[str, Any]:
    """A bill whose input is all read or written, so sizes add up to the token."""
    return billed(read, write, out, hour, uncached=0)


def total(s: StepAnalysis) -> int:
    return s.read + s.write + s.uncached


def history(s: StepAnalysis) -> int:
    """What a step's recorded history blocks hold, as the analysis counts them."""
    return sum(b.tokens for b in s.blocks if b.name.startswith("messages["))


def counted(build: Callable[[list[int]], Transcript], writes: int, tmp: Path) -> SessionAnalysis:
    """The transcript with placeholder bills: its blocks at the sizes the importer counts."""
    return analysed(imported(build([0] * writes).write(tmp / "counted.jsonl")).data)


def growth(a: SessionAnalysis) -> list[int]:
    totals = [total(s) for s in a.steps]
    return [later - earlier for earlier, later in pairwise(totals)]


def block(s: StepAnalysis, name: str) -> tuple[str, int]:
    b = next(b for b in s.blocks if name in b.name)
    return b.name, b.tokens


def reads(a: SessionAnalysis) -> list[tuple[int, int]]:
    return [(c.simulated.read, c.measured.read) for c in compare_measured(a)]


# --- what a bill holds beyond the recorded blocks ----------------------------------------


def _edits(writes: list[int]) -> Transcript:
    """Three requests; the Edit's result went out with a snippet of the file that the
    transcript leaves out. ``writes``: the second and third requests' writes."""
    t = Transcript()
    t.user("09:00:00", "Fix the date parser in p.py")
    edit = use("toolu_1", "Edit", file_path="p.py", old_string="a", new_string="b")
    t.asst("09:00:04", "r1", [edit], usage(0, 12000))
    t.user("09:00:05", [result("toolu_1", "The file p.py has been updated successfully.")])
    t.asst("09:00:09", "r2", [text("Fixed.")], usage(12000, writes[0]))
    t.user("09:01:00", "thanks")
    t.asst("09:01:04", "r3", [text("Welcome.")], usage(12000 + writes[0], writes[1]))
    return t


def test_what_the_bill_holds_beyond_the_blocks_becomes_a_block_of_its_own(
    tmp_path: Path,
) -> None:
    grew = growth(counted(_edits, 2, tmp_path))
    unseen = 1_000  # the snippet of p.py the client sent back with the Edit's result
    a = analysed(imported(_edits([grew[0] + unseen, grew[1]]).write(tmp_path / "e.jsonl")).data)
    second, third = a.steps[1], a.steps[2]
    # before the tool result that carries the request's tail marker, and sent again after
    assert [b.name for b in second.blocks][-2:] == [
        "messages[2] unrecorded",
        "messages[3] tool_result Edit",
    ]
    assert block(second, "] unrecorded")[1] == block(third, "] unrecorded")[1] == unseen
    assert ("messages[2] unrecorded", unseen) in second.inferred
    assert [s.input_residual for s in a.steps] == [0, 0, 0]
    assert reads(a)[2] == (total(second), total(second))  # all the second left cached


def _parallel(writes: list[int]) -> Transcript:
    t = Transcript()
    t.user("09:00:00", "Read a.py and b.py")
    reads_ = [use("toolu_a", file_path="a.py"), use("toolu_b", file_path="b.py")]
    t.asst("09:00:04", "r1", reads_, usage(0, 12000))
    t.user("09:00:05", [result("toolu_a", "print('a')"), result("toolu_b", "print('b')")])
    t.asst("09:00:09", "r2", [text("Both print.")], usage(12000, writes[0]))
    return t


def test_the_block_goes_before_the_run_of_results_it_came_with(tmp_path: Path) -> None:
    grew = growth(counted(_parallel, 1, tmp_path))
    a = analysed(imported(_parallel([grew[0] + 500]).write(tmp_path / "p.jsonl")).data)
    # a run of tool results is one lookback position: the block does not split it
    assert [b.name.split(" ", 1)[1] for b in a.steps[1].blocks[-5:]] == [
        "tool_use Read",
        "tool_use Read",
        "unrecorded",
        "tool_result Read",
        "tool_result Read",
    ]
    assert a.steps[1].input_residual == 0


def test_less_than_the_minimum_stays_a_residual(tmp_path: Path) -> None:
    grew = growth(counted(_edits, 2, tmp_path))
    under = SHORTFALL_MINIMUM - 1
    a = analysed(imported(_edits([grew[0] + under, grew[1]]).write(tmp_path / "e.jsonl")).data)
    assert not any(b.name.endswith("] unrecorded") for s in a.steps for b in s.blocks)
    assert [s.input_residual for s in a.steps] == [0, under, under]


# --- one conversation, one unrecorded size ------------------------------------------------


def _compacted(writes: list[int]) -> Transcript:
    """A request, a compaction, then two requests; the first after it reads the system
    prompt alone, and holds files the client read back in after the summary."""
    t = Transcript()
    t.user("09:00:00", "Implement the exporter")
    t.asst("09:00:04", "r1", [text("Starting.")], usage(0, 12000))
    t.compacted("09:02:00", "Summary: the exporter is half done; parse.py and out.py changed.")
    t.user("09:02:05", "continue")
    t.asst("09:02:09", "r2", [text("Continuing.")], usage(SYSTEM, writes[0]))
    t.user("09:02:30", "and the tests")
    t.asst("09:02:34", "r3", [text("Tests next.")], usage(SYSTEM + writes[0], writes[1]))
    return t


def test_each_conversation_sizes_what_its_blocks_do_not_hold_from_its_first_bill(
    tmp_path: Path,
) -> None:
    plain = counted(_compacted, 2, tmp_path)
    unrecorded = 12000 - history(plain.steps[0])  # system prompt, tools, prepended context
    restored = 3_000  # the files the client reads back in after the summary
    write = unrecorded + restored + history(plain.steps[1]) - SYSTEM
    a = analysed(imported(_compacted([write, growth(plain)[1]]).write(tmp_path / "c.jsonl")).data)
    before, after, later = a.steps
    assert block(before, "unrecorded system prompt")[1] == SYSTEM
    assert block(after, "unrecorded system prompt")[1] == SYSTEM
    context = block(after, "first-message context")[1]
    assert context == block(before, "first-message context")[1] + restored
    assert block(later, "first-message context")[1] == context
    assert "(conversation restarted, 1×)" in next(
        b.text for b in after.blocks if "context" in b.name
    )
    assert [s.input_residual for s in a.steps] == [0, 0, 0]
    # the compaction reads the system prompt alone, as billed; the next one reads it all
    assert reads(a)[1:] == [(SYSTEM, SYSTEM), (total(after), total(after))]


# --- task notifications: rewritten or not, as the bill shows -----------------------------

NOTE = (
    "<task-notification>\n<task-id>{}</task-id>\n<status>completed</status>\n</task-notification>"
)


def _notified() -> Transcript:
    t = Transcript()
    t.user("09:00:00", "Run the tests in the background")
    run = use("toolu_1", "Bash", command="mix test", run_in_background=True)
    t.asst("09:00:04", "r1", [run], usage(0, 12000))
    t.user("09:00:05", [result("toolu_1", "Command running in background with ID: b1.")])
    t.asst("09:00:09", "r2", [text("Started; I will wait.")], usage(12000, 120))
    t.user("09:01:00", NOTE.format("b1"))
    # re-sent rewritten: the bill reads the system prompt and writes the rest again
    t.asst("09:01:04", "r3", [text("The tests passed.")], usage(SYSTEM, 2300))
    t.user("09:01:30", NOTE.format("b2"))
    # not rewritten: it reads everything the request before left cached
    t.asst("09:01:34", "r4", [text("That one too.")], usage(12300, 80))
    return t


def test_a_task_notification_is_rewritten_only_where_its_bill_reads_the_system_prompt(
    tmp_path: Path,
) -> None:
    a = analysed(imported(_notified().write(tmp_path / "n.jsonl")).data)
    rewritten, quiet = a.steps[2], a.steps[3]
    context = next(b.text for b in rewritten.blocks if "first-message context" in b.name)
    assert "(re-sent rewritten, 1×)" in context
    assert [b.text for b in quiet.blocks[:4]] == [b.text for b in rewritten.blocks[:4]]
    checks = compare_measured(a)
    assert all(c.agree for c in checks), [c.sentence for c in checks if not c.agree]
    assert (checks[2].simulated.read, checks[2].measured.read) == (SYSTEM, SYSTEM)
    assert checks[3].simulated_class == checks[3].measured_class == "full hit"


# --- a thread on two models ---------------------------------------------------------------


def _switched(writes: list[int]) -> Transcript:
    t = Transcript()
    t.user("09:00:00", "Plan the migration")
    t.asst("09:00:04", "r1", [text("Plan: three steps.")], usage(0, 12000))
    t.user("09:00:30", "now do step one")
    t.asst("09:00:34", "r2", [text("Step one done.")], usage(0, 9000), model=HAIKU)
    t.user("09:01:00", "step two")
    t.asst("09:01:04", "r3", [text("Step two done.")], usage(9000, writes[1]), model=HAIKU)
    return t


def test_each_model_sizes_the_unrecorded_part_in_its_own_tokens(tmp_path: Path) -> None:
    grew = growth(counted(_switched, 2, tmp_path))
    a = analysed(imported(_switched([0, grew[1]]).write(tmp_path / "m.jsonl")).data)
    sonnet_prefix = block(a.steps[0], "unrecorded prefix")[1]
    haiku_prefix = block(a.steps[1], "unrecorded prefix")[1]
    assert haiku_prefix < sonnet_prefix - 2_000  # one text, fewer of haiku's tokens here
    assert [s.input_residual for s in a.steps] == [0, 0, 0]
    switch = compare_measured(a)[1]
    assert switch.agree and switch.reason == "model switch"


# --- the factor ---------------------------------------------------------------------------


def test_the_factor_is_the_median_of_the_growth_weighted_by_its_tokens() -> None:
    # 3.0: a tool result the client sent in full and the transcript keeps shortened
    fit = ScaleFit({SONNET: [(1.1, 5000), (1.2, 1000), (3.0, 900)], HAIKU: [(1.5, 1999)]})
    assert fit.scales() == {SONNET: 1.1}  # too little growth seen on haiku to tell


def _grown(writes: list[int]) -> Transcript:
    t = Transcript()
    t.user("09:00:00", "Read the log")
    t.asst("09:00:04", "r1", [use("toolu_1", file_path="app.log")], usage(0, 12000))
    log = "".join(f"09:00:{k % 60:02d} worker {k} finished job {k * 7}\n" for k in range(300))
    t.user("09:00:05", [result("toolu_1", log)])
    t.asst("09:00:09", "r2", [text("The log is clean.")], usage(12000, writes[0]))
    return t


def test_the_analysis_carries_the_factor_per_model_and_per_step(tmp_path: Path) -> None:
    grew = growth(counted(_grown, 1, tmp_path))
    data = imported(_grown([round(grew[0] * 1.2)]).write(tmp_path / "g.jsonl")).data
    assert data["session"]["token_scale"] == {SONNET: 1.2}
    a = analysed(data)
    assert a.token_scale == {SONNET: 1.2}
    assert [s.token_scale for s in a.steps] == [1.2, 1.2]
    assert abs(a.steps[1].input_residual or 0) <= 1  # one rounding
    what_if = analyze(parse_session(json.dumps(data), "g.json"), model=HAIKU)
    assert what_if.token_scale == {} and what_if.steps[1].token_scale == 1.0


# --- lifetimes per marker -----------------------------------------------------------------


def test_a_bill_mixing_lifetimes_keeps_the_hour_on_the_part_it_wrote_for_an_hour(
    tmp_path: Path,
) -> None:
    t = Transcript()
    t.user("09:00:00", "hello")
    # 5,000 warm from other sessions, 6,000 more written for an hour, the rest for 5 minutes
    t.asst("09:00:04", "r1", [text("hi")], usage(5000, 7000, hour=6000))
    t.user("09:07:00", "again")  # 7 minutes: the 5-minute part expired, the hour's did not
    t.asst("09:07:04", "r2", [text("yes")], usage(11000, 1015))
    data = imported(t.write(tmp_path / "h.jsonl")).data
    first = next(e["request"] for e in data["events"] if e["type"] == "llm")
    assert [(b["name"], b["tokens"], b.get("ttl")) for b in first["blocks"][:2]] == [
        ("unrecorded system prompt, cached before", 5000, None),
        ("unrecorded system prompt", 6000, "1h"),
    ]
    assert reads(analysed(data))[1] == (11000, 11000)

"""The design's §6 walkthrough, reproduced from sample_sessions/research_agent.yaml."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from assembler import SessionAssembler, to_anthropic, to_openai
from assembler.design.calltree_yaml import tree_yaml
from assembler.sessions.model import Session
from assembler.sessions.replay import find_step

GOLDEN = Path(__file__).parents[1] / "golden"
SAMPLE = Path(__file__).parents[2] / "sample_sessions" / "research_agent.yaml"
LABELS = {"walk-1": 1, "walk-2": 2, "walk-3": 3, "walk-4": 4}

# seed-tables.md, "Call path": the four example paths.
CALL_PATHS = {
    "walk-1": "research_agent → _pick_stage → literature → _lit_decide",
    "walk-2": "research_agent → _pick_stage → literature → _lit_decide → seed_surveys",
    "walk-3": "research_agent → _pick_stage",
    "walk-4": "research_agent → _pick_stage → idea → generate_ideas → check_novelty",
}

# The design's four call trees, reduced to structure: (depth, function, marker), where the
# marker is "running", "output" (a key output kept) or "done" (a flow line in a finished subtree).
STRUCTURE = {
    "walk-1": [(0, "research_agent", "running"), (1, "_pick_stage", "output"),
          (1, "literature", "running"), (2, "_lit_decide", "running")],
    "walk-2": [(0, "research_agent", "running"), (1, "_pick_stage", "output"),
          (1, "literature", "running"), (2, "_lit_decide", "output"),
          (2, "seed_surveys", "running")],
    "walk-3": [(0, "research_agent", "running"), (1, "_pick_stage", "output"),
          (1, "literature", "output"), (2, "_lit_decide", "done"), (2, "seed_surveys", "done"),
          (2, "extract_framework", "done"), (1, "_pick_stage", "running")],
    "walk-4": [(0, "research_agent", "running"), (1, "_pick_stage", "output"),
          (1, "literature", "output"), (2, "_lit_decide", "done"), (2, "seed_surveys", "done"),
          (2, "extract_framework", "done"), (1, "_pick_stage", "output"),
          (1, "idea", "running"), (2, "generate_ideas", "running"),
          (3, "check_novelty", "running")],
}  # fmt: skip


def render(label: str, *extra: str) -> str:
    out = subprocess.run(
        [sys.executable, "-m", "assembler", "render", str(SAMPLE), "--step", label, *extra],
        capture_output=True,
        text=True,
        check=True,
    )
    return out.stdout


def structure(nodes: list[dict[str, object]], depth: int = 0) -> list[tuple[int, str, str]]:
    out: list[tuple[int, str, str]] = []
    for node in nodes:
        if node.get("status") == "running":
            marker = "running"
        elif "output" in node:
            marker = "output"
        else:
            assert node.get("status") == "done", node
            marker = "done"
        out.append((depth, str(node["function"]), marker))
        out += structure(node.get("children", []), depth + 1)  # type: ignore[arg-type]
    return out


@pytest.mark.parametrize("label", LABELS)
def test_render_matches_golden(label: str) -> None:
    golden = GOLDEN / f"research_agent_walkthrough_{LABELS[label]}.txt"
    assert render(label) == golden.read_text("utf-8")


@pytest.mark.parametrize("label", LABELS)
def test_call_tree_structure_matches_the_design(label: str) -> None:
    text = render(label)
    block = re.search(r"<call_tree>\n.*?\n</call_tree>", text, re.S)
    assert block is not None
    tree = yaml.safe_load(tree_yaml(block.group()))
    assert structure(tree) == STRUCTURE[label]


@pytest.mark.parametrize("label", LABELS)
def test_situation_call_path(label: str) -> None:
    situation = re.search(r"<situation>\n(.*?)\n</situation>", render(label), re.S)
    assert situation is not None
    assert f"Call path: {CALL_PATHS[label]}" in situation.group(1).splitlines()


def test_text_before_the_call_tree_is_byte_identical() -> None:
    prefixes = {render(label).split("<call_tree>")[0] for label in LABELS}
    assert len(prefixes) == 1
    assert len(prefixes.pop()) > 5000


def test_no_layer_labels_or_breakpoint_wording(research_session: Session) -> None:
    assembler = SessionAssembler(research_session)
    for step in assembler.steps():
        text = assembler.assemble(step).wire.text()
        assert not re.search(r"\bL[012]\b", text), step.number
        assert "breakpoint" not in text.lower(), step.number


def test_wire_goldens(research_session: Session) -> None:
    assembler = SessionAssembler(research_session)
    step = find_step(list(assembler.steps()), "walk-1")
    wire = assembler.assemble(step).wire
    anthropic = to_anthropic(wire, "claude-sonnet-4-5")
    openai = to_openai(wire, "claude-sonnet-4-5", research_session.id)
    assert anthropic == json.loads(
        (GOLDEN / "research_agent_walkthrough_1.anthropic.json").read_text()
    )
    assert openai == json.loads((GOLDEN / "research_agent_walkthrough_1.openai.json").read_text())


def test_anthropic_request_marks_the_four_breakpoints(research_session: Session) -> None:
    assembler = SessionAssembler(research_session)
    wire = assembler.assemble(find_step(list(assembler.steps()), "walk-4")).wire
    marked = [(b.breakpoint, b.name) for b in wire.blocks if b.breakpoint]
    assert marked == [(1, "tools"), (2, "environment"), (3, "deferred_catalog"), (4, "call_tree")]
    request = to_anthropic(wire, "claude-sonnet-4-5")
    dumped = json.dumps(request)
    assert dumped.count('"cache_control"') == 4
    assert "cache_control" in request["tools"][-1]
    # the model reads the same continuous text, split into blocks
    text = "".join(b["text"] for b in request["system"])
    assert text == wire.system_text()
    assert "prompt_cache_key" in to_openai(
        wire, "gpt-5", "k"
    ) and "cache_control" not in json.dumps(to_openai(wire, "gpt-5", "k"))


def test_date_sits_last_in_the_system_prompt(research_session: Session) -> None:
    assembler = SessionAssembler(research_session)
    wire = assembler.assemble(next(iter(assembler.steps()))).wire
    system = wire.section("system")
    assert system[-1].name == "current_date"
    assert system[-1].text == "Today is Wednesday, June 24, 2026."


def test_breakpoint_3_closes_the_project_part_before_the_date(research_session: Session) -> None:
    """Reading 5: ③ after the project part, the date after ③ and before the call tree."""
    assembler = SessionAssembler(research_session)
    for step in list(assembler.steps())[:3]:
        blocks = assembler.assemble(step).wire.blocks
        names = [b.name for b in blocks]
        three = next(i for i, b in enumerate(blocks) if b.breakpoint == 3)
        date = names.index("current_date")
        assert three < date < names.index("call_tree")
        assert blocks[date].breakpoint is None
        assert all(b.layer.value == "L1" for b in blocks[three + 1 : date + 1])

"""Recorded text printed by the CLI: escape sequences, other controls and bidi overrides
shown as ``\\uXXXX``, never obeyed; CSV cells that would start a formula kept as text."""

from __future__ import annotations

import csv
import io
import json
import re
import shutil
from pathlib import Path

import pytest
from build import CLAUDE, T, header
from hypothesis import given, settings
from hypothesis import strategies as st

from assembler.safe_text import csv_cell, printable
from tests.hostile.runner import run_cli

SESSION_ID = "s\x1b]0;pwned\x07\u202eid"
FUNCTION = "main\x1b[2J"
LABEL = "l\x9b31m\r"
#: What a terminal obeys: C0 but newline and tab, DEL, C1, bidi controls.
RAW_CONTROL = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]"
)


@pytest.fixture
def hostile_session(tmp_path: Path) -> Path:
    doc = {
        **header(id=SESSION_ID),
        "events": [
            {"type": "enter", "function": FUNCTION, "at": T},
            {"type": "llm", "input": "q", "output": "a", "at": T, "label": LABEL},
            {"type": "llm", "input": "=1+1", "output": "a", "at": T, "label": "=HYPERLINK(1)"},
            {"type": "exit", "function": FUNCTION, "output": "d", "at": T},
        ],
    }
    path = tmp_path / "esc.json"
    path.write_text(json.dumps(doc), "utf-8")
    return path


@pytest.mark.parametrize(
    "argv",
    [
        ("steps", "{f}"),
        ("steps", "{f}", "--json"),
        ("analyze", "{f}"),
        ("analyze", "{f}", "--json"),
        ("analyze", "{f}", "--csv"),
        ("compare", "{f}", "--base", "seed", "--head", "date-in-l0"),
        ("render", "{f}", "--step", "1"),
    ],
    ids=lambda a: " ".join(a[:1] + a[2:]),
)
def test_no_control_reaches_the_terminal(argv: tuple[str, ...], hostile_session: Path) -> None:
    run = run_cli([a.format(f=hostile_session) for a in argv], hostile_session.parent / "p")
    assert run.code in (0, 1), run.stderr
    assert RAW_CONTROL.search(run.stdout + run.stderr) is None
    if "--json" not in argv:
        assert "\\u001b" in run.stdout  # shown, not dropped


def test_json_output_keeps_the_value(hostile_session: Path) -> None:
    """Inside a JSON string the escape stands for the same character: the value survives."""
    run = run_cli(["analyze", str(hostile_session), "--json"], hostile_session.parent / "p")
    assert run.code == 0 and RAW_CONTROL.search(run.stdout) is None
    doc = json.loads(run.stdout)
    assert doc["session"] == SESSION_ID and doc["steps"][0]["label"] == LABEL


def test_an_error_line_names_the_value_without_obeying_it(tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    doc = {**header(id="x"), "events": [{"type": "launch\x1b[2J", "at": T}]}
    path.write_text(json.dumps(doc), "utf-8")
    run = run_cli(["steps", str(path)], tmp_path / "p")
    assert run.code == 2 and len(run.stderr.strip().splitlines()) == 1, run.stderr
    assert RAW_CONTROL.search(run.stderr) is None and "\\u001b" in run.stderr


def test_import_prints_the_session_id_neutralised(tmp_path: Path) -> None:
    source = tmp_path / "session.jsonl"
    escaped = json.dumps(SESSION_ID)[1:-1]  # as it sits in a JSON string
    text = CLAUDE.read_text("utf-8").replace("5a0ddcd0-cafe-4000-8000-000000000001", escaped)
    source.write_text(text, "utf-8")
    shutil.copytree(CLAUDE.parent / "subagents", tmp_path / "subagents")
    run = run_cli(
        ["import", "claude-code", str(source), "-o", str(tmp_path / "o.jsonl")], tmp_path / "p"
    )
    assert run.code == 0, run.stderr
    assert RAW_CONTROL.search(run.stdout + run.stderr) is None
    assert "session s\\u001b]0;pwned\\u0007\\u202eid" in run.stdout


def test_csv_cells_never_start_a_formula(hostile_session: Path) -> None:
    run = run_cli(["analyze", str(hostile_session), "--csv"], hostile_session.parent / "p")
    assert run.code == 0, run.stderr
    rows = list(csv.DictReader(io.StringIO(run.stdout)))
    assert rows[1]["label"] == "'=HYPERLINK(1)"
    for row in rows:
        for value in row.values():
            assert not value.startswith(("=", "+", "@", "\t", "\r")), value
            assert not (value.startswith("-") and not _number(value)), value


def _number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


@pytest.mark.parametrize("start", ["=", "+", "-", "@", "\t", "\r"])
def test_csv_cell_keeps_a_formula_as_text(start: str) -> None:
    assert csv_cell(f"{start}cmd|' /C calc'!A0") == f"'{start}cmd|' /C calc'!A0"
    assert csv_cell(-1.5) == -1.5 and csv_cell("plain") == "plain"


def test_printable_escapes_each_kind_of_control() -> None:
    assert printable("a\x1b[31mb\x07\x9b\u202e\u2066c\r\nd\te") == (
        "a\\u001b[31mb\\u0007\\u009b\\u202e\\u2066c\\u000d\nd\te"
    )
    assert printable("plain — ü 漢字") == "plain — ü 漢字"
    assert printable("half \ud83d an emoji\x9b") == "half \ud83d an emoji\\u009b"


@given(
    st.text(
        st.one_of(
            st.characters(max_codepoint=0x7F),  # ASCII: the quick path
            st.sampled_from("\x7f\x85\x9b\u061c\u200e\u202e\u2066é—\ud83d"),
            st.characters(),
        )
    )
)
@settings(max_examples=500, deadline=None)
def test_printable_leaves_no_control_and_changes_nothing_else(text: str) -> None:
    """Whichever path a text takes (ASCII or not), each control is escaped and the rest kept."""
    assert printable(text) == RAW_CONTROL.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def test_tables_align_on_the_text_as_printed(hostile_session: Path) -> None:
    run = run_cli(["steps", str(hostile_session)], hostile_session.parent / "p")
    header, first = run.stdout.splitlines()[:2]
    assert header.index("timestamp") == first.index(T[:10])  # the escapes widen the columns

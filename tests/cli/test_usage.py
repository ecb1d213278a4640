"""``usage``: the default places of a (fake) home, the per-day sums, the filters."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from assembler.analysis.app import open_session
from assembler.analysis.bill import session_costs
from assembler.analysis.engine import analyze, builtin_layout
from assembler.analysis.fleet import default_places, unread_writes
from assembler.cli.main import main
from assembler.sessions.model import Usage

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "sessions" / "importers" / "fixtures"
CLAUDE = FIXTURES / "claude_code" / "session.jsonl"
CODEX = FIXTURES / "codex" / "rollout-2026-03-12T14-00-00-019a9776.jsonl"
REAL_CLAUDE = ROOT.parent / "shared" / "real-traffic" / "claude-code" / "marot-spotter"
PROJECT = "/home/dev/ledgerline"  # the fixtures' working folder


def _claude_into(projects: Path) -> Path:
    folder = projects / "-home-dev-ledgerline"
    folder.mkdir(parents=True)
    shutil.copy(CLAUDE, folder / "5a0ddcd0.jsonl")
    shutil.copytree(CLAUDE.parent / "subagents", folder / "5a0ddcd0" / "subagents")
    return folder / "5a0ddcd0.jsonl"


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home with one Claude Code project and one Codex day, as the two tools lay them out."""
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    monkeypatch.delenv("CODEX_HOME", raising=False)
    _claude_into(tmp_path / ".claude" / "projects")
    day = tmp_path / ".codex" / "sessions" / "2026" / "03" / "12"
    day.mkdir(parents=True)
    shutil.copy(CODEX, day / CODEX.name)
    return tmp_path


def _usage(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, Any, str]:
    code = main(["usage", *args])
    out, err = capsys.readouterr()
    return code, (json.loads(out) if "--json" in args and code == 0 else out), err


def _billed(path: Path) -> float:
    a = analyze(open_session(str(path)).session, builtin_layout("seed"))
    billed = session_costs(a).billed
    assert billed is not None
    return billed


def test_no_argument_reads_the_default_places(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, report, err = _usage(capsys, "--json", "--workers", "1")
    assert code == 0 and err == ""  # nothing on stderr when it is not a terminal
    assert report["sessions"] == 2 and report["failures"] == []
    (row,) = report["rows"]
    assert (row["project"], row["day"]) == (PROJECT, "2026-03-12")
    assert row["requests"] == 12 + 5  # the transcript with its subagent, and the rollout
    assert row["billed_usd"] == pytest.approx(_billed(CLAUDE) + _billed(CODEX), abs=1e-6)
    assert row["usd_without_cache"] > row["simulated_usd"] > 0
    assert 0 < row["hit_ratio"] < 1
    assert row["miss_causes"] and all(c["usd_lost"] >= 0 for c in row["miss_causes"])
    lost = [c["usd_lost"] for c in row["miss_causes"]]
    assert lost == sorted(lost, reverse=True)


def test_two_workers_sum_to_the_same_bill(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    one = _usage(capsys, "--json", "--workers", "1")[1]
    two = _usage(capsys, "--json", "--workers", "2")[1]
    assert one["rows"] == two["rows"]


def test_the_tools_own_folders_are_read_too(tmp_path: Path) -> None:
    """$CLAUDE_CONFIG_DIR and $CODEX_HOME beside an empty home; a folder named twice is
    read once."""
    _claude_into(tmp_path / "claude" / "projects")
    (tmp_path / "codex" / "sessions").mkdir(parents=True)
    empty_home = tmp_path / "home"
    empty_home.mkdir()
    env = {"CLAUDE_CONFIG_DIR": str(tmp_path / "claude"), "CODEX_HOME": str(tmp_path / "codex")}
    places = default_places(env, empty_home)
    assert places == [tmp_path / "claude" / "projects", tmp_path / "codex" / "sessions"]
    same = {"CLAUDE_CONFIG_DIR": str(empty_home / ".claude")}
    (empty_home / ".claude" / "projects").mkdir(parents=True)
    assert default_places(same, empty_home) == [empty_home / ".claude" / "projects"]


def test_the_table_names_the_project_the_day_and_the_causes(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = _usage(capsys, "--workers", "1")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split() == [
        "project",
        "day",
        "requests",
        "billed",
        "simulated",
        "no",
        "cache",
        "hit",
        "writes",
        "never",
        "read",
    ]
    assert lines[1].startswith(f"{PROJECT}  2026-03-12")
    assert any(x.startswith(f"  {PROJECT}: ") and "miss" in x for x in lines)
    assert "2 sessions in" in out


@pytest.mark.parametrize(
    ("flags", "rows"),
    [
        (["--since", "2026-03-12", "--until", "2026-03-12"], 1),
        (["--since", "2026-03-13"], 0),
        (["--until", "2026-03-11"], 0),
        (["--project", "LEDGERLINE"], 1),
        (["--project", "elsewhere"], 0),
    ],
)
def test_dates_and_project_filter_the_rows(
    home: Path, capsys: pytest.CaptureFixture[str], flags: list[str], rows: int
) -> None:
    code, report, _ = _usage(capsys, "--json", "--workers", "1", *flags)
    assert code == 0 and len(report["rows"]) == rows


def test_bad_input_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    monkeypatch.delenv("CODEX_HOME", raising=False)
    code, _, err = _usage(capsys)
    assert code == 2 and err.startswith("error: no sessions in the default places")
    code, _, err = _usage(capsys, str(CLAUDE), "--since", "12/03/2026")
    assert code == 2 and err == (
        "error: --since: expected a date as YYYY-MM-DD, found '12/03/2026'\n"
    )


def test_parquet_rows(home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pq = pytest.importorskip("pyarrow.parquet")
    target = tmp_path / "usage.parquet"
    code, report, _ = _usage(capsys, "--json", "--workers", "1", "--parquet", str(target))
    assert code == 0
    table = pq.read_table(target).to_pylist()
    assert [r["requests"] for r in table] == [r["requests"] for r in report["rows"]]


def _step(thread: str, read: int, write: int, total: int = 1000) -> Any:
    usage = Usage(input=total - read - write, cache_read=read, cache_write=write, output=0)
    return SimpleNamespace(call_path=("root", thread), measured=usage)


def test_writes_never_read_follow_each_thread() -> None:
    steps = [
        _step("turn", 0, 400),  # read by the next call: 0 unread
        _step("subagent:a", 0, 300),  # its thread never calls again: 300 unread
        _step("turn", 400, 100),  # the next call reads 30 of its 100
        _step("turn", 430, 0),
        _step("turn", 0, 500),  # written again from the start: 0 left to read after it
        _step("turn", 0, 500),
    ]
    assert unread_writes(steps) == [0, 300, 70, 0, 500, 500]


@pytest.mark.skipif(not REAL_CLAUDE.is_dir(), reason="../shared/real-traffic is absent")
def test_a_real_transcript_bills_as_analyze_does(capsys: pytest.CaptureFixture[str]) -> None:
    transcript = REAL_CLAUDE / "subagent.jsonl"
    code, report, _ = _usage(capsys, str(transcript), "--json", "--workers", "1")
    assert code == 0 and report["sessions"] == 1
    billed = sum(r["billed_usd"] for r in report["rows"])
    assert billed == pytest.approx(_billed(transcript), abs=1e-6)


PEAK = """
import resource, sys
from assembler.cli.main import main
code = main(["usage", sys.argv[1], "--json", "--workers", "1"])
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr)
sys.exit(code)
"""


def test_peak_memory_does_not_grow_with_the_number_of_sessions(tmp_path: Path) -> None:
    import subprocess
    import sys

    peaks = []
    for n in (4, 24):
        folder = tmp_path / str(n)
        for i in range(n):
            _claude_into(folder / f"p{i}")
        done = subprocess.run(
            [sys.executable, "-c", PEAK, str(folder)], capture_output=True, text=True, check=True
        )
        assert json.loads(done.stdout)["sessions"] == n
        peaks.append(int(done.stderr.strip().splitlines()[-1]))  # KB
    assert peaks[1] - peaks[0] < 8 * 1024, peaks  # six times the sessions, under 8 MB more

"""Every command takes a raw transcript, a rollout, a request log, OTel traces, a zip and a
mixed folder as it takes a session file (analysis/inputs.py), with no import step."""

from __future__ import annotations

import json
import shutil
import zipfile
from dataclasses import replace
from pathlib import Path

import pytest

from assembler.analysis.app import open_session, session_names
from assembler.cli.main import main

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "sessions" / "importers" / "fixtures"
CLAUDE = FIXTURES / "claude_code" / "session.jsonl"
CODEX = FIXTURES / "codex" / "rollout-2026-03-12T14-00-00-019a9776.jsonl"
LOG = FIXTURES / "capture" / "proxy_streamed.jsonl"
OTEL = FIXTURES / "otel" / "genai.json"
SAMPLE = ROOT / "sample_sessions" / "research_agent.yaml"
REAL = ROOT.parent / "shared" / "real-traffic"
REAL_CLAUDE = REAL / "claude-code" / "marot-spotter"


@pytest.fixture(scope="module")
def mixed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder of every kind: a transcript with its subagents folder, a rollout two levels
    down, a request log, traces, a session file and a zip holding a transcript."""
    root = tmp_path_factory.mktemp("mixed")
    (root / "claude").mkdir()
    shutil.copy(CLAUDE, root / "claude" / "s1.jsonl")
    shutil.copytree(CLAUDE.parent / "subagents", root / "claude" / "s1" / "subagents")
    (root / "deep" / "er").mkdir(parents=True)
    shutil.copy(CODEX, root / "deep" / "er" / CODEX.name)
    shutil.copy(LOG, root / "log.jsonl")
    shutil.copy(OTEL, root / "traces.json")
    shutil.copy(SAMPLE, root / "research.yaml")
    (root / "notes.txt").write_text("not a session", "utf-8")
    with zipfile.ZipFile(root / "claude.zip", "w") as z:
        z.write(CLAUDE, "t/session.jsonl")
        z.write(
            CLAUDE.parent / "subagents" / "agent-a1b2c3.jsonl",
            "t/session/subagents/agent-a1b2c3.jsonl",
        )
    return root


@pytest.fixture(scope="module")
def one_zip(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A transcript and its subagent file zipped as the app takes an upload."""
    path = tmp_path_factory.mktemp("zip") / "upload.zip"
    with zipfile.ZipFile(path, "w") as z:
        z.write(CLAUDE, "session.jsonl")
        z.write(CLAUDE.parent / "subagents" / "agent-a1b2c3.jsonl", "agent-a1b2c3.jsonl")
    return path


def test_a_mixed_folder_is_one_session_per_transcript(mixed: Path) -> None:
    names = session_names(str(mixed))
    assert [n.removeprefix(f"{mixed}/") for n in names] == [
        "claude/s1.jsonl",
        "claude.zip:t/session.jsonl",
        f"deep/er/{CODEX.name}",
        "log.jsonl",
        "research.yaml",
        "traces.json",
    ]
    kinds = [open_session(n).kind for n in names]
    assert kinds == ["claude-code", "claude-code", "codex", "requests", "session", "otel"]


def test_a_transcript_brings_its_subagents_from_disk_and_from_a_zip(mixed: Path) -> None:
    on_disk = open_session(str(mixed / "claude" / "s1.jsonl"))
    zipped = open_session(f"{mixed}/claude.zip:t/session.jsonl")
    assert "1 subagent" in on_disk.summary and on_disk.summary == zipped.summary
    # imported where it lies, the same call tree as the upload's copy in a temporary folder
    assert replace(on_disk.session, source=zipped.session.source) == zipped.session
    assert any(getattr(e, "function", "").startswith("subagent:") for e in on_disk.session.events)


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize(
    "target", [CLAUDE, CODEX, LOG, OTEL], ids=["claude-code", "codex", "requests", "otel"]
)
def test_single_session_commands_read_a_raw_file(
    target: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = _run(capsys, "steps", str(target), "--json")
    assert code == 0, err
    steps = json.loads(out)
    assert steps and err.splitlines()[0].startswith(f"{target}: ")  # what it was read as
    code, out, err = _run(capsys, "render", str(target), "--step", str(len(steps)))
    assert code == 0 and out.strip(), err
    code, out, err = _run(capsys, "lint", str(target))
    assert code in (0, 1) and "error(s)" in out, err
    code, out, err = _run(capsys, "analyze", str(target), "--json")
    assert code == 0, err
    assert len(json.loads(out)["steps"]) == len(steps)
    code, out, err = _run(capsys, "compare", str(target), "--base", "seed", "--head", "seed")
    assert code == 0 and "within thresholds" in out, err


def test_a_zip_of_one_transcript_is_that_transcript(
    one_zip: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, zipped, err = _run(capsys, "steps", str(one_zip), "--json")
    assert code == 0, err
    code, plain, err = _run(capsys, "steps", str(CLAUDE), "--json")
    assert json.loads(zipped) == json.loads(plain)
    code, out, err = _run(capsys, "analyze", str(one_zip))
    assert code == 0, err
    assert out == _run(capsys, "analyze", str(CLAUDE))[1]


def test_a_folder_runs_the_batch_and_a_single_command_asks_for_one(
    mixed: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = _run(capsys, "analyze", str(mixed), "--json", "--workers", "1")
    assert code == 0, err
    report = json.loads(out)
    assert report["sessions"] == 6 and report["failed"] == 0
    code, out, err = _run(capsys, "compare", str(mixed), "--base", "seed", "--head", "seed")
    assert code == 0 and "6 sessions compared" in out, err
    for command in (["steps"], ["render", "--step", "1"], ["lint"]):
        code, out, err = _run(capsys, command[0], str(mixed), *command[1:])
        assert code == 2 and err.count("\n") == 1, err
        assert f"{mixed}: holds 6 sessions (" in err and f"{command[0]} reads one" in err


def test_a_zip_member_is_named_archive_colon_member(
    mixed: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = _run(capsys, "steps", f"{mixed}/claude.zip:t/session.jsonl")
    assert code == 0 and "subagent:a1b2c3" in out, err
    code, out, err = _run(capsys, "steps", f"{mixed}/claude.zip:t/nothing.jsonl")
    assert code == 2 and "no session file 't/nothing.jsonl' in this zip" in err


def test_recommend_reads_a_zip_and_a_folder_of_session_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with zipfile.ZipFile(tmp_path / "one.zip", "w") as z:
        z.write(SAMPLE, "research.yaml")
    code, out, err = _run(capsys, "recommend", str(tmp_path / "one.zip"), "--json")
    assert code == 0, err
    assert json.loads(out)["layout"]


def test_recommend_lists_a_session_it_cannot_read_and_plans_for_the_rest(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """As analyze and usage do: a subagent folder whose transcript is gone does not stop
    the folder's plan."""
    shutil.copy(CLAUDE, tmp_path / "s1.jsonl")
    lone = tmp_path / "gone" / "subagents"
    lone.mkdir(parents=True)
    shutil.copy(CLAUDE.parent / "subagents" / "agent-a1b2c3.jsonl", lone)
    code, out, err = _run(capsys, "recommend", str(tmp_path))
    assert code == 0, err
    assert "1 session(s)" in out and "could not be read (1):" in out
    assert f"{lone / 'agent-a1b2c3.jsonl'}: a subagent transcript without its session" in out
    code, out, err = _run(capsys, "recommend", str(tmp_path), "--json")
    assert code == 0, err
    (skipped,) = json.loads(out)["could_not_read"]
    assert skipped["path"] == str(lone / "agent-a1b2c3.jsonl")
    (tmp_path / "s1.jsonl").unlink()  # nothing left to read: one line, exit 2
    code, out, err = _run(capsys, "recommend", str(tmp_path))
    assert code == 2 and err.count("\n") == 1 and "no session could be read" in err


def test_a_lone_subagent_file_says_what_is_missing(tmp_path: Path) -> None:
    folder = tmp_path / "abc" / "subagents"
    folder.mkdir(parents=True)
    shutil.copy(CLAUDE.parent / "subagents" / "agent-a1b2c3.jsonl", folder)
    names = session_names(str(tmp_path))
    assert names == [str(folder / "agent-a1b2c3.jsonl")]  # nothing claims it: it is listed
    with pytest.raises(ValueError, match=r"a subagent transcript without its session: expected"):
        open_session(names[0])


def test_a_bad_line_in_a_raw_file_is_one_line_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = tmp_path / "log.jsonl"
    log.write_text(json.dumps({"request": {"url": "https://x/v1/messages", "body": 3}}) + "\n")
    code, _out, err = _run(capsys, "analyze", str(log))
    assert code == 2 and err.count("\n") == 1
    assert err.startswith(f"error: {log}:1: request.body: expected the request as a JSON object")


@pytest.mark.skipif(not REAL_CLAUDE.is_dir(), reason="../shared/real-traffic is absent")
def test_a_real_transcript_and_its_folder(capsys: pytest.CaptureFixture[str]) -> None:
    transcript = REAL_CLAUDE / "258c7280-ae70-4798-800f-63464d01a85d.jsonl"
    code, out, err = _run(capsys, "steps", str(transcript), "--json")
    assert code == 0, err
    assert len(json.loads(out)) > 152  # the main thread's 152, its subagent and compaction
    assert "Claude Code transcript, 156 requests, 1 subagent" in err.splitlines()[0]
    names = session_names(str(REAL_CLAUDE))
    assert str(transcript) in names
    assert not any("/subagents/" in n and "6c2214d7" not in n for n in names)


@pytest.mark.skipif(not (REAL / "codex").is_dir(), reason="../shared/real-traffic is absent")
def test_a_real_rollout_is_read_by_lint(capsys: pytest.CaptureFixture[str]) -> None:
    rollout = next((REAL / "codex").rglob("rollout-*.jsonl"))
    code, out, err = _run(capsys, "lint", str(rollout))
    assert code in (0, 1) and "error(s) in the recorded requests" in out, err


def test_a_zip_of_several_keeps_each_subagent_with_its_transcript(tmp_path: Path) -> None:
    archive = tmp_path / "many.zip"
    agent = CLAUDE.parent / "subagents" / "agent-a1b2c3.jsonl"
    with zipfile.ZipFile(archive, "w") as z:
        z.write(CLAUDE, "a/s1.jsonl")
        z.write(agent, "a/s1/subagents/agent-a1b2c3.jsonl")
        z.write(CLAUDE, "b/s2.jsonl")  # the same transcript without its subagent file
        z.write(CODEX, "c/rollout.jsonl")
    names = session_names(str(archive))
    assert names == [f"{archive}:a/s1.jsonl", f"{archive}:b/s2.jsonl", f"{archive}:c/rollout.jsonl"]
    with_agent, without, rollout = (open_session(n) for n in names)
    assert "1 subagent" in with_agent.summary and rollout.kind == "codex"
    assert len(without.session.events) < len(with_agent.session.events)


def test_unzip_reads_only_the_members_asked_for(tmp_path: Path) -> None:
    from assembler.analysis.app.uploads import unzip, zip_names

    archive = tmp_path / "two.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.write(CLAUDE, "one.jsonl")
        z.write(CODEX, "two.jsonl")
        z.writestr("notes.txt", "not a session")
    raw = archive.read_bytes()
    assert zip_names("two.zip", raw) == ["one.jsonl", "two.jsonl"]
    assert [n for n, _ in unzip("two.zip", raw, keep={"two.jsonl"}.__contains__)] == ["two.jsonl"]


@pytest.mark.parametrize("target", [CLAUDE, CODEX, LOG], ids=["claude-code", "codex", "requests"])
def test_recommend_opens_a_raw_file_and_answers_for_its_recorded_requests(
    target: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The file is opened as the other commands open it; what recommend makes of recorded
    requests is its own answer (a plan, or that the layout changes nothing in them)."""
    code, _out, err = _run(capsys, "recommend", str(target), "--json")
    assert err.splitlines()[0].startswith(f"{target}: ")  # read as a raw file
    assert code == 0 or "every call is a recorded request" in err, err

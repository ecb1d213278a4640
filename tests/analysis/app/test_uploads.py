"""Uploaded files are recognised by their records and imported in-process."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from assembler.analysis.app import uploads
from assembler.analysis.app.uploads import (
    CLAUDE_CODE,
    CODEX,
    REQUESTS,
    SESSION,
    UploadError,
    read_upload,
    recognise,
)
from assembler.sessions.loader import parse_bytes
from assembler.sessions.model import SessionError

ROOT = Path(__file__).resolve().parents[3]
FIX = ROOT / "tests" / "sessions" / "importers" / "fixtures"
MAIN = FIX / "claude_code" / "session.jsonl"
AGENT = FIX / "claude_code" / "subagents" / "agent-a1b2c3.jsonl"
CODEX_FILE = FIX / "codex" / "rollout-2026-03-12T14-00-00-019a9776.jsonl"
PROXY = FIX / "requests" / "proxy.jsonl"


@pytest.mark.parametrize(
    ("path", "kind"),
    [
        (MAIN, CLAUDE_CODE),
        (AGENT, CLAUDE_CODE),
        (CODEX_FILE, CODEX),
        (PROXY, REQUESTS),
        (ROOT / "sample_sessions" / "research_agent.yaml", SESSION),
    ],
)
def test_each_format_is_recognised_by_its_records(path: Path, kind: str) -> None:
    # the name says nothing: recognition reads the content
    assert recognise("upload.bin", path.read_bytes()) == kind


def test_a_claude_code_transcript_with_its_subagent_file() -> None:
    up = read_upload([(MAIN.name, MAIN.read_bytes()), (AGENT.name, AGENT.read_bytes())])
    assert up.summary == "Claude Code transcript, 12 requests, 1 subagent, 1 compaction"
    session = parse_bytes(up.raw, up.name)
    assert sum(1 for e in session.events if type(e).__name__ == "LLMCall") == 12


def test_the_same_transcript_as_a_zip_gives_the_same_session() -> None:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("project/session.jsonl", MAIN.read_bytes())
        z.writestr("project/session/subagents/agent-a1b2c3.jsonl", AGENT.read_bytes())
    zipped = read_upload([("transcript.zip", buf.getvalue())])
    plain = read_upload([(MAIN.name, MAIN.read_bytes()), (AGENT.name, AGENT.read_bytes())])
    assert zipped.raw == plain.raw
    assert zipped.summary == plain.summary


def test_without_the_subagent_file_the_inline_count_is_what_is_left() -> None:
    up = read_upload([(MAIN.name, MAIN.read_bytes())])
    assert up.summary.startswith("Claude Code transcript, ")


def test_codex_and_request_logs() -> None:
    assert read_upload([(CODEX_FILE.name, CODEX_FILE.read_bytes())]).summary == (
        "Codex rollout, 5 requests, 1 compaction"
    )
    assert read_upload([(PROXY.name, PROXY.read_bytes())]).summary == "request log, 8 requests"


def test_an_unrecognised_file_names_the_formats_and_the_command() -> None:
    with pytest.raises(UploadError) as err:
        read_upload([("notes.jsonl", b'{"hello": 1}\n')])
    message = str(err.value)
    assert message.startswith("notes.jsonl: not a format the inspector reads")
    assert "Claude Code transcript" in message and "Codex rollout" in message
    assert "python -m assembler import" in message
    assert "\n" not in message


def test_two_main_transcripts_are_refused() -> None:
    with pytest.raises(UploadError, match="expected one session or transcript"):
        read_upload([("a.jsonl", MAIN.read_bytes()), ("b.jsonl", CODEX_FILE.read_bytes())])


def test_an_importer_error_names_the_uploaded_file_not_a_temporary_path() -> None:
    bad = b'{"type": "user", "sessionId": "s", "uuid": "u", "timestamp": "nope", "message": {"role": "user", "content": "x"}}\n'
    with pytest.raises(UploadError) as err:
        read_upload([("mine.jsonl", bad)])
    assert str(err.value).startswith("mine.jsonl")
    assert "inspector-upload-" not in str(err.value)


def test_a_zip_that_unpacks_past_the_limit_is_refused_before_it_is_read_whole(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # 64 MB of zeros compress to about 64 KB: a small upload, a large unpacking
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as z:
        z.writestr("session.jsonl", b"0" * (64 * 1024 * 1024))
    raw = buffer.getvalue()
    assert len(raw) < 1024 * 1024
    monkeypatch.setattr(uploads, "MAX_UNZIPPED", 8 * 1024 * 1024)
    with pytest.raises(UploadError, match=r"bomb\.zip: its files unpack to more than 8,388,608"):
        uploads.read_upload([("bomb.zip", raw)])


# --- recognition by the top-level keys, whatever comes before them --------------------

SAMPLES = ROOT / "sample_sessions"
COMMENTED = ("coding_agent_midnight.yaml", "review_agent_paths.yaml")


@pytest.mark.parametrize("name", COMMENTED)
def test_a_sample_that_opens_with_comments_is_a_session(name: str) -> None:
    raw = (SAMPLES / name).read_bytes()
    assert raw.startswith(b"#") and raw.index(b"format:") > 400  # the case that was refused
    assert recognise("upload.bin", raw) == SESSION
    up = read_upload([(name, raw)])
    assert (up.kind, up.raw) == (SESSION, raw)


_comment = st.text(
    alphabet=st.characters(blacklist_categories=("Cs", "Cc", "Zl", "Zp")), max_size=200
).map(lambda s: "#" + s)
_prefix_line = st.one_of(_comment, st.just(""), st.just("---"), st.just("%YAML 1.2"))


@settings(max_examples=60, deadline=None)
@given(prefix=st.lists(_prefix_line, max_size=60), bom=st.booleans(), crlf=st.booleans())
def test_any_leading_comments_blanks_and_markers_keep_a_session_a_session(
    prefix: list[str], bom: bool, crlf: bool
) -> None:
    body = (SAMPLES / "research_agent.yaml").read_text("utf-8")
    eol = "\r\n" if crlf else "\n"
    # a long comment first: the format line lies past any fixed window of the old sniffing
    text = eol.join(["# " + "x" * 4100, *prefix, *body.splitlines()]) + eol
    raw = (b"\xef\xbb\xbf" if bom else b"") + text.encode("utf-8")
    assert recognise("upload.yaml", raw) == SESSION


def test_a_near_session_reaches_the_loader_which_names_the_field() -> None:
    text = (SAMPLES / "coding_agent_midnight.yaml").read_text("utf-8")
    bad = text.replace("  provider: anthropic\n", "  provider: 42\n", 1)
    assert bad != text
    up = read_upload([("p42.yaml", bad.encode())])
    assert up.kind == SESSION
    with pytest.raises(
        SessionError, match=r"session\.provider: expected a string, found the integer 42"
    ):
        parse_bytes(up.raw, up.name)


@pytest.mark.parametrize(
    "raw",
    [
        b"# a comment\nformat: context-session/2\nsession: {}\nevents: []\n",  # wrong version
        b"events: []\n",  # no format at all
        b'{"session": {"id": "x"}}\n{"type": "llm"}\n',  # a JSON Lines header without format
        b'{\n  "format": "context-session/1",\n  "session": {},\n  "events": []\n}\n',  # pretty JSON
    ],
)
def test_near_sessions_are_sessions(raw: bytes) -> None:
    assert recognise("x", raw) == SESSION


@pytest.mark.parametrize(
    "raw",
    [
        b"name: seed\ndescription: a layout\ncomponents: []\n",  # another YAML document
        b"- format: context-session/1\n",  # a list, not a mapping
        b"notes:\n  format: context-session/1\n",  # the key nested, not top-level
        b'{"hello": 1}\n',
    ],
)
def test_other_documents_are_not_sessions(raw: bytes) -> None:
    assert recognise("x", raw) is None


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (b"", r"^empty\.yaml: the file is empty; expected a session file"),
        (b"\xef\xbb\xbf \n\n", r"^empty\.yaml: the file is empty; expected a session file"),
        (b"# nothing but\n# comments\n", r"^empty\.yaml: the file holds only comments; expected"),
        (
            b"\xff\xfe\x00b\x00a\x00d",
            r"^empty\.yaml: not UTF-8 text \(byte 0\); expected a session",
        ),
    ],
)
def test_empty_and_unreadable_files_say_so_in_one_line(raw: bytes, message: str) -> None:
    with pytest.raises(UploadError, match=message) as err:
        read_upload([("empty.yaml", raw)])
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("name", ["genai.json", "openinference.json"])
def test_otel_traces_are_recognised_pretty_printed_or_on_one_line(name: str) -> None:
    raw = (FIX / "otel" / name).read_bytes()
    assert recognise(name, raw) == uploads.OTEL
    upload = read_upload([(name, raw)])
    assert upload.kind == uploads.OTEL and upload.summary.startswith("OTel traces, ")
    assert parse_bytes(upload.raw, name).events


def test_a_file_is_recognised_from_its_first_lines() -> None:
    head = MAIN.read_bytes()
    garbage = b"\n".join(b"not json" for _ in range(1000))
    assert recognise("t.jsonl", head + b"\n" + garbage) == CLAUDE_CODE
    assert list(uploads._head_lines(b"a\nb\nc"))[:2] == [b"a", b"b"]
    assert len(list(uploads._head_lines(b"x\n" * 500))) == uploads.SNIFF_LINES


@pytest.mark.parametrize(
    ("path", "kind"), [(MAIN, CLAUDE_CODE), (CODEX_FILE, CODEX), (PROXY, REQUESTS)]
)
def test_recognition_parses_lines_up_to_the_first_record_of_a_format(
    path: Path, kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    raw = path.read_bytes()
    parsed: list[bytes] = []
    loads = json.loads

    def counted(line: bytes) -> Any:
        parsed.append(line)
        return loads(line)

    monkeypatch.setattr(uploads.json, "loads", counted)
    assert recognise("upload.bin", raw) == kind
    lines = [line for line in raw.split(b"\n") if line.strip()]
    assert 1 <= len(parsed) < len(lines)
    assert parsed == lines[: len(parsed)]
    assert uploads._record_kind(loads(parsed[-1])) == kind
    assert all(uploads._record_kind(loads(line)) is None for line in parsed[:-1])

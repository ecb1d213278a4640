"""Uploaded files → one session: recognise the format, import raw transcripts in-process.

The app receives bytes, not paths: one session file (``context-session/1``, YAML or
JSON Lines), or a raw transcript the importers read — a Claude Code transcript
with its subagent files (several files at once, or a zip), a Codex rollout, a
request log. The format is recognised from the records themselves, not the file
name, by the keys each tool writes on every line (docs/importers.md).
"""

from __future__ import annotations

import hashlib
import io
import itertools
import json
import re
import tempfile
import zipfile
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any

from assembler.analysis.engine import import_session
from assembler.limits import MAX_IMPORT_BYTES, MAX_ZIP_ENTRIES, clip, one_line
from assembler.sessions.importers import ImporterError

SESSION = "session"
CLAUDE_CODE = "claude-code"
CODEX = "codex"
REQUESTS = "requests"
OTEL = "otel"

KIND_NAMES = {
    SESSION: "session file",
    CLAUDE_CODE: "Claude Code transcript",
    CODEX: "Codex rollout",
    REQUESTS: "request log",
    OTEL: "OTel traces",
}

ACCEPTED = (
    "a session file (context-session/1, .yaml or .jsonl), a Claude Code transcript "
    "(.jsonl, with its agent-*.jsonl subagent files or as a .zip), a Codex rollout "
    "(rollout-*.jsonl), a request log (.jsonl) or OTel traces (OTLP JSON)"
)
CLI_HINT = "python -m assembler import {claude-code,codex,requests,otel} FILE -o SESSION.jsonl"

#: Lines read to recognise a JSON Lines file (transcripts start with metadata records).
SNIFF_LINES = 50
CODEX_TYPES = frozenset({"session_meta", "response_item", "turn_context", "event_msg"})


class UploadError(ValueError):
    """One line naming the file and what was expected."""


@dataclass(frozen=True)
class Upload:
    """What the uploaded files became."""

    name: str  # shown in the sidebar: the main file's name
    kind: str  # SESSION | CLAUDE_CODE | CODEX | REQUESTS
    raw: bytes  # a context-session/1 file (the upload itself, or the import written as JSON Lines)
    summary: str  # "Claude Code transcript, 155 requests, 2 subagents, 1 compaction"
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True)
class ImportedUpload:
    """Raw files imported, before the import is written as a session file: the command
    line reads the session from the document itself; the app keeps the file (``upload``)."""

    name: str
    kind: str  # CLAUDE_CODE | CODEX | REQUESTS | OTEL
    data: dict[str, Any]  # the context-session/1 document the importer made
    summary: str
    warnings: tuple[str, ...] = ()

    def upload(self) -> Upload:
        return Upload(self.name, self.kind, _to_jsonl(self.data), self.summary, self.warnings)


def _head_lines(raw: bytes) -> Iterator[bytes]:
    """The first :data:`SNIFF_LINES` lines, without splitting the rest of a long file."""
    start = 0
    for _ in range(SNIFF_LINES):
        if start > len(raw):
            return
        end = raw.find(b"\n", start)
        end = len(raw) if end < 0 else end
        yield raw[start:end]
        start = end + 1


def _records(raw: bytes) -> Iterator[dict[str, Any]]:
    """The JSON objects among the first lines, parsed one at a time as they are asked for."""
    for line in _head_lines(raw):
        try:
            value = json.loads(line)
        except (ValueError, UnicodeDecodeError, RecursionError):  # the loader says which
            continue
        if isinstance(value, dict):
            yield value


def _record_kind(record: dict[str, Any]) -> str | None:
    """The raw format one record is written in, by the keys its tool writes on every
    record; None for a record of none (a transcript's summary line, a session's event)."""
    if record.get("type") in CODEX_TYPES and isinstance(record.get("payload"), dict):
        return CODEX
    if "sessionId" in record and "uuid" in record:
        return CLAUDE_CODE
    if isinstance(record.get("request"), dict):
        return REQUESTS
    if isinstance(record.get("resourceSpans"), list):
        return OTEL
    return None


#: The top-level keys of a session document; any of them at the start of a line (a
#: top-level key of a YAML mapping) makes the file a session, valid or not, so that the
#: session loader, not the recogniser, names what is wrong in it.
SESSION_KEYS = ("format", "session", "events")
_YAML_SESSION_KEY = re.compile(
    rb"""^["']?(?:format|session|events)["']?[ \t]*:(?:[ \t\r]|$)""", re.MULTILINE
)
_BOM = "\ufeff".encode()


def _first_content(raw: bytes) -> bytes:
    """The first line that is not blank, a comment, a directive or a document marker.

    Read line by line from the start, so a large transcript is not split whole.
    """
    start = len(_BOM) if raw.startswith(_BOM) else 0
    while start < len(raw):
        end = raw.find(b"\n", start)
        end = len(raw) if end < 0 else end
        line = raw[start:end].strip()
        start = end + 1
        if line[:3] in (b"---", b"...") and line[3:4] in (b"", b" ", b"\t"):
            line = line[3:].strip()  # a document marker, perhaps with content after it
        if line and not line.startswith((b"#", b"%")):
            return line
    return b""


def _is_session_record(record: dict[str, Any]) -> bool:
    return any(key in record for key in SESSION_KEYS)


def _one_json_document(raw: bytes) -> dict[str, Any] | None:
    try:
        value = json.loads(raw)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def recognise(name: str, raw: bytes) -> str | None:
    """The kind of one file, or None when it is none of the accepted formats.

    A session file is recognised by its top-level keys wherever they start, whatever
    comments come before them; a transcript by the keys its tool writes on every record.
    """
    first = _first_content(raw)
    if not first:
        return None
    if not first.startswith((b"{", b"[")):
        return SESSION if _YAML_SESSION_KEY.search(raw) else None
    # the first record written in a raw format decides (a file of one tool holds no
    # other's records), so the rest of the head is not parsed
    records = _records(raw)
    head = next(records, None)
    if head is not None and "format" in head:
        return SESSION
    for record in itertools.chain((head,) if head is not None else (), records):
        kind = _record_kind(record)
        if kind is not None:
            return kind
    if head is not None and _is_session_record(head):
        return SESSION
    if head is None and first.startswith(b"{"):
        # One JSON document over several lines, as a pretty-printed session or trace is.
        document = _one_json_document(raw)
        if document is not None and _is_session_record(document):
            return SESSION
        if document is not None and isinstance(document.get("resourceSpans"), list):
            return OTEL
    return None


def _unreadable(name: str, raw: bytes) -> str:
    """Why an unrecognised file was refused, in one line."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return f"{name}: not UTF-8 text (byte {exc.start}); expected {ACCEPTED}"
    if not text.removeprefix("\ufeff").strip():
        return f"{name}: the file is empty; expected {ACCEPTED}"
    if not _first_content(raw):
        return f"{name}: the file holds only comments; expected {ACCEPTED}"
    return (
        f"{name}: not a format the inspector reads; it accepts {ACCEPTED}. "
        f"To convert another file first: {CLI_HINT}"
    )


#: What the files of one zip may unpack to, all together: a transcript's own limit.
MAX_UNZIPPED = MAX_IMPORT_BYTES
_SESSION_SUFFIXES = (".jsonl", ".json", ".yaml", ".yml")
#: Why a zip cannot be read at all: its directory, or a member's bytes.
_ZIP_ERRORS = (zipfile.BadZipFile, zlib.error, OSError, EOFError, NotImplementedError)


def _escapes(member: str) -> bool:
    """A member named outside the archive's own folder: absolute, a drive, or ``..``."""
    path = PureWindowsPath(member) if "\\" in member else PurePosixPath(member)
    return path.is_absolute() or bool(path.drive) or ".." in path.parts


def _session_infos(name: str, z: zipfile.ZipFile) -> list[zipfile.ZipInfo]:
    """The session files of a zip, from its directory alone: its entries counted and
    every member's name and flags checked before a byte is unpacked (one line each)."""
    infos = z.infolist()
    if len(infos) > MAX_ZIP_ENTRIES:
        raise UploadError(
            f"{name}: the zip holds {len(infos):,} entries; the limit is {MAX_ZIP_ENTRIES:,}"
        )
    out = []
    for info in infos:
        member = clip(info.filename, 120)
        if _escapes(info.filename):
            raise UploadError(
                f"{name}: {member}: a member outside the archive's folder (an absolute path "
                "or ..); expected names inside it"
            )
        if info.is_dir() or "__MACOSX" in info.filename:
            continue
        if info.filename.lower().endswith(".zip"):
            raise UploadError(
                f"{name}: {member}: a zip inside the zip; expected the session files "
                "themselves (unzip the inner one first)"
            )
        if not info.filename.endswith(_SESSION_SUFFIXES):
            continue
        if info.flag_bits & 0x1:
            raise UploadError(
                f"{name}: {member}: encrypted (password-protected); expected a zip without "
                "a password"
            )
        out.append(info)
    return out


def zip_names(name: str, raw: bytes) -> list[str]:
    """The session files a zip holds, listed without unpacking them."""
    try:
        with zipfile.ZipFile(io.BytesIO(raw)) as z:
            return [info.filename for info in _session_infos(name, z)]
    except _ZIP_ERRORS as exc:
        raise UploadError(f"{name}: not a readable zip archive ({one_line(str(exc))})") from None


def unzip(
    name: str, raw: bytes, limit: int | None = None, keep: Callable[[str], bool] | None = None
) -> list[tuple[str, bytes]]:
    """The session files in a zip (those ``keep`` names, if given). Each is read with a
    cap on what is left of ``limit`` (a zip's stated sizes can lie), so a small archive
    cannot unpack to gigabytes."""
    out: list[tuple[str, bytes]] = []
    limit = MAX_UNZIPPED if limit is None else limit
    left = limit
    too_big = UploadError(
        f"{name}: its files unpack to more than {limit:,} bytes, the limit for one upload; "
        "expected a zip of session files under that size"
    )
    try:
        with zipfile.ZipFile(io.BytesIO(raw)) as z:
            infos = [
                info for info in _session_infos(name, z) if keep is None or keep(info.filename)
            ]
            if sum(info.file_size for info in infos) > limit:  # as stated, before unpacking
                raise too_big
            for info in infos:
                try:
                    with z.open(info) as f:
                        data = f.read(left + 1)  # the stated sizes can lie
                except _ZIP_ERRORS as exc:
                    raise UploadError(
                        f"{name}: {clip(info.filename, 120)}: cannot be unpacked "
                        f"({one_line(str(exc), 160)}); the archive is damaged"
                    ) from None
                if len(data) > left:
                    raise too_big
                left -= len(data)
                out.append((info.filename, data))
    except _ZIP_ERRORS as exc:
        raise UploadError(f"{name}: not a readable zip archive ({one_line(str(exc))})") from None
    return out


def is_subagent(name: str) -> bool:
    return PurePosixPath(name).name.startswith("agent-")


def _apart(subs: list[tuple[str, bytes]]) -> list[tuple[str, bytes]]:
    """Subagent files by the base name the importer reads: two of one name (from two
    folders of a zip) kept apart, the second as ``agent-x-2.jsonl``; the same bytes twice
    kept once."""
    kept: dict[str, bytes] = {}
    seen: set[str] = set()
    for name, raw in subs:
        fingerprint = hashlib.sha256(raw).hexdigest()
        if fingerprint in seen:
            continue
        seen.add(fingerprint)
        base = PurePosixPath(name)
        unique, n = base.name, 1
        while unique in kept:
            n += 1
            unique = f"{base.stem}-{n}{base.suffix}"
        kept[unique] = raw
    return list(kept.items())


def _summary(kind: str, data: dict[str, Any], subagent_files: int) -> str:
    events = data["events"]
    requests = sum(1 for e in events if e.get("type") == "llm")
    subagents = sum(
        1
        for e in events
        if e.get("type") == "enter" and str(e.get("function", "")).startswith("subagent:")
    )
    compactions = sum(
        1
        for e in events
        if e.get("type") == "llm" and str(e.get("label") or "").startswith("compaction")
    )
    parts = [KIND_NAMES[kind], f"{requests:,} request{'s' if requests != 1 else ''}"]
    if kind == CLAUDE_CODE:
        n = max(subagents, subagent_files)
        parts.append(f"{n} subagent{'s' if n != 1 else ''}")
    if compactions:
        parts.append(f"{compactions} compaction{'s' if compactions != 1 else ''}")
    return ", ".join(parts)


def _to_jsonl(data: dict[str, Any]) -> bytes:
    header = {"format": data["format"], "session": data["session"]}
    lines = [json.dumps(header, ensure_ascii=False)]
    lines.extend(json.dumps(e, ensure_ascii=False) for e in data["events"])
    return ("\n".join(lines) + "\n").encode("utf-8")


def read_upload(files: list[tuple[str, bytes]]) -> Upload:
    """Recognise and import the uploaded files; raises :class:`UploadError` (one line)."""
    read = read_files(files)
    return read if isinstance(read, Upload) else read.upload()


def read_files(files: list[tuple[str, bytes]]) -> Upload | ImportedUpload:
    """:func:`read_upload` without writing an import as a session file."""
    flat: list[tuple[str, bytes]] = []
    for name, raw in files:
        flat.extend(unzip(name, raw) if name.lower().endswith(".zip") else [(name, raw)])
    if not flat:
        raise UploadError("no file in the upload; expected " + ACCEPTED)
    kinds = [(name, raw, recognise(name, raw)) for name, raw in flat]
    unknown = [(name, raw) for name, raw, kind in kinds if kind is None]
    if unknown:
        raise UploadError(_unreadable(*unknown[0]))
    mains = [(n, r, k) for n, r, k in kinds if not (k == CLAUDE_CODE and is_subagent(n))]
    subs = [(n, r) for n, r, k in kinds if k == CLAUDE_CODE and is_subagent(n)]
    if len(mains) != 1:
        names = ", ".join(n for n, _, _ in mains) or ", ".join(n for n, _ in subs)
        raise UploadError(
            f"{names}: expected one session or transcript (plus its agent-*.jsonl subagent "
            f"files), found {len(mains)}"
        )
    name, raw, kind = mains[0]
    assert kind is not None
    if kind == SESSION:
        if subs:
            raise UploadError(f"{subs[0][0]}: subagent files go with a Claude Code transcript")
        return Upload(name, SESSION, raw, KIND_NAMES[SESSION])
    if subs and kind != CLAUDE_CODE:
        raise UploadError(f"{subs[0][0]}: subagent files go with a Claude Code transcript")
    with tempfile.TemporaryDirectory(prefix="inspector-upload-") as tmp:
        root = Path(tmp)
        path = root / PurePosixPath(name).name
        path.write_bytes(raw)
        folder: Path | None = None
        if subs:
            subs = _apart(subs)
            folder = root / "subagents"
            folder.mkdir()
            for sub_name, sub_raw in subs:
                (folder / sub_name).write_bytes(sub_raw)
        real_subs = sum(1 for n, _ in subs if "acompact" not in n)
        return _imported(name, kind, path, folder, real_subs)


def read_in_place(name: str, kind: str) -> ImportedUpload:
    """A raw file on disk (``name``, of ``kind``) imported where it lies, its subagent
    folder found beside it as the ``import`` command finds it: what :func:`read_files`
    makes of the same bytes, without first copying the file and its subagents into a
    temporary folder (a tenth of a small transcript's analysis, measured)."""
    return _imported(name, kind, Path(name), None, None)


def _imported(
    name: str, kind: str, path: Path, folder: Path | None, real_subs: int | None
) -> ImportedUpload:
    """``path`` imported as ``kind``; messages name it ``name``, as the user knows it.
    ``real_subs``: the subagent files uploaded with it; None: those the importer found."""
    shown = str(path)
    try:
        imported = import_session(kind, path, subagents=folder)
    except ImporterError as exc:
        raise UploadError(str(exc).replace(shown, name)) from None
    warnings = tuple(w.replace(shown, name) for w in imported.warnings)
    subs = imported.subagent_files if real_subs is None else real_subs
    return ImportedUpload(name, kind, imported.data, _summary(kind, imported.data, subs), warnings)

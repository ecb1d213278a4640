"""Any input as sessions: how every command opens what it is given, recognised as an upload is.

A target is a session file, a raw transcript (a Claude Code transcript with its
``<session-id>/subagents/`` folder beside it, a Codex rollout, a request log, OTel
traces), a zip of them, a folder of any mix (walked into its subfolders), or a glob.
Each file is recognised by its content and a raw one imported in memory, with no import
step: a file on disk where it lies (:func:`assembler.analysis.app.uploads.read_in_place`),
one inside a zip as the app imports an upload (:func:`~assembler.analysis.app.uploads.read_files`).

One session is named by a string a worker process can open again: a file's path, or
``ARCHIVE.zip:MEMBER`` for a file inside a zip.
"""

from __future__ import annotations

import glob
import os
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from assembler.analysis.app.uploads import (
    CLAUDE_CODE,
    SESSION,
    Upload,
    UploadError,
    is_subagent,
    read_files,
    read_in_place,
    recognise,
    unzip,
    zip_names,
)
from assembler.errors import UsageError
from assembler.limits import MAX_IMPORT_BYTES as RAW_MAX_BYTES
from assembler.limits import ReadRefused, read_capped
from assembler.sessions.loader import load_session, parse_bytes, session_from_document
from assembler.sessions.model import Session, SessionError

INPUT_SUFFIXES = (".yaml", ".yml", ".jsonl", ".json")
GLOB_CHARS = frozenset("*?[")
ZIP = ".zip"
NAMES_SHOWN = 3  # in a message asking for one session: a hint, not a listing


class InputError(UsageError, ValueError):
    """A target that holds no session, or several where one is wanted (one line)."""


@dataclass(frozen=True)
class Opened:
    """One session as a command receives it."""

    name: str  # the path, or ARCHIVE.zip:MEMBER
    session: Session
    kind: str  # SESSION, or the raw format it was imported from
    summary: str  # "Claude Code transcript, 152 requests, 1 subagent, 1 compaction"
    warnings: tuple[str, ...] = ()

    @property
    def imported(self) -> bool:
        """Read from a raw file (a transcript, a log, traces), not a session file."""
        return self.kind != SESSION


def _zip_member(name: str) -> tuple[Path, str] | None:
    """``ARCHIVE.zip:MEMBER`` split, when the archive exists."""
    head, sep, member = name.partition(ZIP + ":")
    if not sep or not member or not Path(head + ZIP).is_file():
        return None
    return Path(head + ZIP), member


def is_many(target: str) -> bool:
    """A folder, a glob or a zip of several sessions (as opposed to one session's file)."""
    path = Path(target)
    if path.is_file():
        return path.suffix.lower() == ZIP and len(session_names(target)) > 1
    if _zip_member(target) is not None:
        return False
    return path.is_dir() or bool(GLOB_CHARS & set(target))


def session_names(target: str) -> list[str]:
    """The sessions ``target`` holds, in path order; raises :class:`InputError` when none.

    In a folder, a Claude Code subagent file goes with the transcript it sits under
    (``<id>.jsonl`` beside ``<id>/subagents/``), not on its own."""
    path = Path(target)
    if _zip_member(target) is not None:
        return [target]
    if os.path.isfile(target) and path.suffix.lower() != ZIP:  # the common case, one stat
        return [str(path)]
    if path.is_dir():
        files = [p for p in path.rglob("*") if _wanted(p) and not _claimed(p)]
        what = "folder"
    elif path.exists():  # a file, or a pipe or device its reader refuses by its kind
        files = [path]
        what = "file"
    elif GLOB_CHARS & set(target):
        files = [Path(p) for p in glob.glob(target, recursive=True)]
        files = [p for p in files if p.is_file()]
        what = "pattern"
    else:
        raise InputError(f"{target}: cannot read the file: no such file or folder")
    names: list[str] = []
    for f in sorted(files):
        names.extend(_zip_names(f) if f.suffix.lower() == ZIP else [str(f)])
    if not names:
        raise InputError(f"{target}: no session file in this {what}")
    return names


def _wanted(path: Path) -> bool:
    return path.suffix.lower() in (*INPUT_SUFFIXES, ZIP) and path.is_file()


def _claimed(path: Path) -> bool:
    """A subagent file whose transcript is in the folder (read with it)."""
    if path.parent.name != "subagents" or not is_subagent(path.name):
        return False
    owner = path.parent.parent
    return owner.with_suffix(".jsonl").is_file() or any(owner.glob("*.jsonl"))


def _zip_raw(archive: Path) -> bytes:
    try:
        return read_capped(archive, RAW_MAX_BYTES)
    except ReadRefused as exc:
        raise InputError(f"{archive}: {exc}") from None


def _mains(names: list[str]) -> list[str]:
    return [n for n in names if not is_subagent(n)]


def _zip_names(archive: Path) -> list[str]:
    try:
        inside = zip_names(str(archive), _zip_raw(archive))
    except UploadError as exc:
        raise InputError(str(exc)) from None
    return [f"{archive}:{m}" for m in _mains(inside)]


def _subagents_of(main: str, names: list[str]) -> list[str]:
    """The subagent files of ``main`` among ``names``: under ``<stem>/subagents/``, or all
    of them when ``main`` is the only transcript (as an upload of one transcript has)."""
    stem = PurePosixPath(main).with_suffix("")
    subs = [n for n in names if is_subagent(n)]
    own = [n for n in subs if PurePosixPath(n).parent == stem / "subagents"]
    return own if own or len(_mains(names)) > 1 else subs


def _zip_member_files(archive: Path, inner: str) -> list[tuple[str, bytes]]:
    """``inner`` and its subagent files, the only members unpacked (the main one first)."""
    raw = _zip_raw(archive)
    try:
        names = zip_names(str(archive), raw)
        if inner not in names:
            raise InputError(f"{archive}: no session file {inner!r} in this zip")
        wanted = {inner, *_subagents_of(inner, names)}
        files = unzip(str(archive), raw, keep=wanted.__contains__)
    except UploadError as exc:
        raise InputError(str(exc)) from None
    return sorted(files, key=lambda f: f[0] != inner)


def _read(path: Path) -> bytes:
    try:
        return read_capped(path, RAW_MAX_BYTES)
    except ReadRefused as exc:
        raise SessionError(str(path), str(exc)) from None


def open_session(name: str) -> Opened:
    """One session by its name (a path or ``ARCHIVE.zip:MEMBER``), imported if raw.

    Raises :class:`SessionError` or :class:`InputError`, one line naming the file."""
    member = _zip_member(name)
    if member is not None:
        archive, inner = member
        # the member's own name, so its session id and its subagent files read as unzipped
        return _opened(name, _zip_member_files(archive, inner), inner)
    path = Path(name)
    if not os.path.exists(name):
        raise InputError(f"{name}: cannot read the file: no such file")
    raw = _read(path)
    kind = recognise(name, raw)
    if kind in (SESSION, None):  # the loader names the line and field of what is wrong
        return Opened(name, load_session(path), SESSION, "session file")
    if kind == CLAUDE_CODE and is_subagent(path.name):
        owner = path.parent.parent if path.parent.name == "subagents" else path.parent
        raise InputError(
            f"{name}: a subagent transcript without its session: expected "
            f"{owner.name}.jsonl beside {owner.name}/subagents/"
        )
    try:
        read = read_in_place(name, kind)
    except UploadError as exc:  # already one line naming the file (and the line)
        raise InputError(str(exc)) from None
    return Opened(name, session_from_document(read.data, name), kind, read.summary, read.warnings)


def _opened(name: str, files: list[tuple[str, bytes]], called: str | None = None) -> Opened:
    """``files`` (the main one first) read as the app reads an upload; ``called``: the name
    they go by there, put back as ``name`` in what is said."""

    def said(text: str) -> str:
        return text.replace(called, name, 1) if called else text

    try:
        read = read_files(files)
    except UploadError as exc:  # already one line naming the file (and the line)
        raise InputError(said(str(exc))) from None
    warnings = tuple(said(w) for w in read.warnings)
    # an import is checked as the loader checks its file, with no file written and read back
    session = (
        parse_bytes(read.raw, name)
        if isinstance(read, Upload)
        else session_from_document(read.data, name)
    )
    return Opened(name, session, read.kind, read.summary, warnings)


def open_one(target: str, command: str) -> Opened:
    """The one session a single-session command reads: ``target`` must hold exactly one."""
    names = session_names(target)
    if len(names) > 1:
        shown = ", ".join(names[:NAMES_SHOWN]) + (", …" if len(names) > NAMES_SHOWN else "")
        raise InputError(
            f"{target}: holds {len(names)} sessions ({shown}); {command} reads one: "
            "name one of them (a zip's member as ARCHIVE.zip:MEMBER)"
        )
    return open_session(names[0])

"""The session upload: files in, recognised and imported, kept for the browser session.

An accepted upload is kept twice: in ``st.session_state`` (page switches) and in
a small server-wide store keyed by its link, ``upload:<content hash>-<token>``
(the token random per upload), which brings it back after a reload or in another
tab of the same server.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field, replace
from typing import Any

import streamlit as st

from assembler.analysis.app import UploadError, read_upload
from assembler.sessions.model import Session, SessionError
from assembler.sessions.replay import iter_steps
from ui.html import literal
from ui.state import data
from ui.state.work_budget import RUNS, WORK_SECONDS, AnalysisTooLong, bounded

PREFIX = "upload:"
#: Uploads the server keeps for deep links, least recently used dropped first: at most
#: this many, and at most ``data.CACHE_FILE_BYTES`` of them together (the newest always).
MAX_KEPT = 16
#: Characters of the content hash in a link, and random bytes of the upload's own token.
LINK_HASH = 16
LINK_TOKEN_BYTES = 8
STATE = "uploaded_session"
READ_HINT = (
    "import it with the command line (python -m assembler import FORMAT FILE -o SESSION.jsonl) "
    "and analyse it there, which has no time limit"
)


@dataclass(frozen=True)
class Kept:
    name: str
    raw: bytes
    key: str  # sha256 of raw
    summary: str
    warnings: tuple[str, ...] = ()
    #: Random, per upload: the link names this upload, not its content, so a second
    #: upload of the same bytes under another name does not rename the first one's
    #: link, and nobody who merely has the bytes can compute a link to someone's upload.
    token: str = field(default_factory=lambda: secrets.token_hex(LINK_TOKEN_BYTES))

    @property
    def link(self) -> str:
        return f"{PREFIX}{self.key[:LINK_HASH]}-{self.token}"


@st.cache_resource(show_spinner=False)
def _store() -> dict[str, Any]:
    return {"items": OrderedDict(), "lock": threading.Lock()}


def _keep(kept: Kept) -> Kept:
    """Keep ``kept`` for its link; the same content uploaded twice shares its bytes."""
    store = _store()
    items: OrderedDict[str, Kept] = store["items"]
    with store["lock"]:
        twin = next((k for k in items.values() if k.key == kept.key), None)
        if twin is not None:
            kept = replace(kept, raw=twin.raw)
        items[kept.link] = kept
        items.move_to_end(kept.link)
        while len(items) > 1 and (
            len(items) > MAX_KEPT or _kept_bytes(items) > data.CACHE_FILE_BYTES
        ):
            items.popitem(last=False)
    return kept


def _kept_bytes(items: OrderedDict[str, Kept]) -> int:
    return sum(len(raw) for raw in {k.key: k.raw for k in items.values()}.values())


def restore(link: str) -> bool:
    """Make the upload named by ``upload:<hash>`` the current one; False if the server lost it."""
    store = _store()
    with store["lock"]:
        kept = store["items"].get(link)
    if kept is None:
        return False
    st.session_state[STATE] = kept
    return True


def current() -> Kept | None:
    kept = st.session_state.get(STATE)
    return kept if isinstance(kept, Kept) else None


#: The uploader's key; after each accepted upload it gets a new one (``upload_session_<n>``).
UPLOADER = "upload_session"
#: How many uploads this browser session has accepted.
ACCEPTED = "_uploads_accepted"


def uploader_key() -> str:
    n = int(st.session_state.get(ACCEPTED, 0))
    return UPLOADER if n == 0 else f"{UPLOADER}_{n}"


def uploader(errors: list[str]) -> None:
    """The uploader, and the name and summary of what is loaded."""
    sb = st.sidebar
    ups = sb.file_uploader(
        "Session or transcript (.yaml, .jsonl, .zip)",
        type=["yaml", "yml", "jsonl", "json", "zip"],
        key=uploader_key(),
        accept_multiple_files=True,
        max_upload_size=data.MAX_SESSION_MB,
        help=(
            "A session file, a Claude Code transcript (with its agent-*.jsonl subagent files, "
            "or all in a zip), a Codex rollout, a request log or OTel traces; at most "
            f"{data.MAX_SESSION_MB} MB per file."
        ),
    )
    files = list(ups or [])
    if files:
        token = tuple((f.name, f.file_id, f.size) for f in files)
        if st.session_state.get("uploaded_session_token") != token:
            st.session_state["uploaded_session_token"] = token
            _read(files, errors)
    kept = current()
    if kept is not None:
        sb.caption(
            f":material/description: **{_md(kept.name)}** — {_md(kept.summary)}",
            help="Kept for this browser session; the page's link brings it back on this server.",
        )
        for warning in kept.warnings:
            sb.caption(f":orange-badge[warning] {_md(warning)}")


def _md(text: str) -> str:
    from ui.html import md

    return md(text)


def _read(files: list[Any], errors: list[str]) -> None:
    too_big = [f for f in files if f.size > data.MAX_SESSION_MB * 1024 * 1024]
    if too_big:
        f = too_big[0]
        errors.append(
            f"{f.name}: the file is {f.size:,} bytes; the limit is {data.MAX_SESSION_MB} MB"
        )
        return
    received = time.monotonic()
    try:
        with bounded("reading the upload", READ_HINT, seconds=WORK_SECONDS):
            upload = read_upload([(f.name, f.getvalue()) for f in files])
            key, session = data.parse_session_bytes(upload.raw, upload.name)
            _check_replay(session)
    except (UploadError, SessionError, AnalysisTooLong) as exc:
        # Refused: the kept upload, if any, stays the current one; the refused bytes go.
        message = str(exc)
        errors.append(
            f"{files[0].name}: {message}" if isinstance(exc, AnalysisTooLong) else message
        )
        _release(files)
        return
    kept = _keep(Kept(upload.name, upload.raw, key, upload.summary, upload.warnings))
    st.session_state[STATE] = kept
    # what is left of the answer's budget goes to the first analysis the page draws
    runs = int(st.session_state.get(RUNS, 0))
    st.session_state[data.FIRST_ANSWER] = (key, received + WORK_SECONDS, runs + 1)
    st.toast(literal(f"{upload.name}: {upload.summary}"), icon=":material/upload_file:")
    # Kept now: an empty uploader in its place. Streamlit copies a widget's value on every
    # run (a 33 MB file: 13 ms and 33 MB more per step), and its upload store would hold the
    # files (a raw transcript beside the session made of it) until the browser session ends.
    _release(files)
    st.session_state[ACCEPTED] = int(st.session_state.get(ACCEPTED, 0)) + 1
    st.rerun()


def _check_replay(session: Session) -> None:
    """Replay the session once, so a file the pages cannot show (no LLM call, events out
    of order, an exit without its enter) is refused here rather than kept and failing on
    every page; raises SessionError naming the file and the event."""
    with st.spinner("Checking the session…"):
        for _ in iter_steps(session):
            pass


def _release(files: list[Any]) -> None:
    """Drop accepted files from Streamlit's in-memory upload store, as its chat input does."""
    from streamlit.runtime.memory_uploaded_file_manager import MemoryUploadedFileManager
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx(suppress_warning=True)
    if ctx is None or not isinstance(ctx.uploaded_file_mgr, MemoryUploadedFileManager):
        return
    for f in files:
        ctx.uploaded_file_mgr.remove_file(session_id=ctx.session_id, file_id=f.file_id)

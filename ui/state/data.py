"""Loading and analysis, cached once per input so that a rerun costs only drawing.

Sessions are keyed by the sha256 of their bytes, layouts by name (built-in) or
by the sha256 of their text (uploaded or edited), so the analysis runs once per
(session content, layout, provider, model, ttl) and every later rerun — a step
change, a page switch, another browser tab — reuses it.
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path
from typing import Any

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from assembler.analysis.engine import (
    BUILTIN_LAYOUTS,
    Layout,
    SessionAnalysis,
    analyze,
    builtin_layout,
    freeze_for_reuse,
    parse_layout_text,
)
from assembler.errors import UsageError, provider_error
from assembler.sessions.loader import parse_bytes
from assembler.sessions.model import Session
from ui.state.work_budget import (
    ANALYSIS_SECONDS,
    ANSWER_SECONDS,
    RUNS,
    AnalysisTooLong,
    ByteBudget,
    bounded,
    visitor,
)

log = logging.getLogger("inspector")
ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "sample_sessions"
DEFAULT_SESSION = "research_agent"

#: Uploads larger than this are refused before they are parsed (MB, as Streamlit counts:
#: MiB). Measured on a real server (``bench_app_rerun.py --browser``): a session opened
#: costs about 9.6 bytes of server memory per byte of its file (parsed, analysed, and the
#: upload itself), so 40 MB stands for about 0.4 GB; it takes a 20,000-step session (33 MB)
#: with room, and its analysis stays well inside ``ANALYSIS_SECONDS`` on two busy cores.
MAX_SESSION_MB = 40
MAX_LAYOUT_MB = 1

#: Providers the cache engine simulates, and how their models are recognised in genai-prices.
PROVIDERS: dict[str, tuple[str, ...]] = {
    "anthropic": ("claude-",),
    "openai": ("gpt-", "o1", "o3", "o4", "chatgpt-"),
    "google": ("gemini-",),
    "deepseek": ("deepseek-",),
}
DEFAULT_MODELS = {
    "anthropic": "claude-sonnet-4-5",
    "openai": "gpt-5",
    "google": "gemini-2.5-pro",
    "deepseek": "deepseek-chat",
}


def bundled_sessions() -> dict[str, Path]:
    """Bundled sessions by name (file stem), the default first."""
    found = {
        p.stem: p
        for p in sorted(SAMPLES.glob("*"))
        if p.suffix in (".yaml", ".yml", ".jsonl", ".json")
    }
    ordered = dict(sorted(found.items(), key=lambda kv: (kv[0] != DEFAULT_SESSION, kv[0])))
    return ordered


def digest(raw: bytes) -> str:
    return hashlib.sha256(raw).hexdigest()


@st.cache_resource(show_spinner=False, max_entries=4)
def _bundled_bytes(path: str, mtime_ns: int) -> bytes:
    return Path(path).read_bytes()


def bundled_bytes(name: str) -> bytes:
    path = bundled_sessions()[name]
    return _bundled_bytes(str(path), path.stat().st_mtime_ns)


@st.cache_resource(show_spinner=False, max_entries=4)
def _bundled_key(path: str, mtime_ns: int) -> str:
    return digest(Path(path).read_bytes())


def bundled_key(name: str) -> str:
    path = bundled_sessions()[name]
    return _bundled_key(str(path), path.stat().st_mtime_ns)


#: Session files behind what the server keeps parsed, and behind what it keeps analysed,
#: for all users together: two files at the upload limit, so one user's big session does
#: not evict every other user's. Measured (RSS, generated 20,000-step session, 33 MB): a
#: session parsed takes 4.3x its file, its analysis about 3x. So at most about 0.36 GB of
#: sessions, 0.25 GB of analyses and 0.25 GB of comparisons (two analyses each), whatever
#: the number of users (``docs/app.md``).
CACHE_FILE_BYTES = 2 * MAX_SESSION_MB * 1024 * 1024


@st.cache_resource(show_spinner=False)
def _sessions() -> ByteBudget:
    return ByteBudget(CACHE_FILE_BYTES)


def file_bytes(session_key: str) -> int:
    """The size of the file behind a cached session (a guess of 1 MB if it was dropped)."""
    hit = _sessions().get(session_key)
    return int(hit[1]) if hit is not None else 1024 * 1024


@st.cache_resource(show_spinner=False)
def _analyses() -> ByteBudget:
    return ByteBudget(CACHE_FILE_BYTES, MAX_ANALYSES)


#: A comparison holds two analyses of one session (base and head layouts).
@st.cache_resource(show_spinner=False)
def _comparisons() -> ByteBudget:
    return ByteBudget(CACHE_FILE_BYTES, MAX_COMPARISONS)


def parse_session_bytes(raw: bytes, source: str, key: str | None = None) -> tuple[str, Session]:
    """(content key, Session); raises SessionError with a one-line message.

    ``key`` is the sha256 of ``raw`` when the caller already knows it. The parsed session
    is shared by content across browser sessions, but its ``source`` (the name its
    messages give) is always the caller's: one user's file name never reaches another.
    """
    key = key or digest(raw)
    store = _sessions()
    owner = visitor()
    hit = store.get(key, owner)
    if hit is not None:
        session: Session = hit[0]
        if session.source != source:
            session = replace(session, source=source)  # shallow: the events are shared
        return key, session
    session = parse_bytes(raw, source)
    store.put(key, (session, len(raw)), len(raw), owner)
    return key, session


@dataclass(frozen=True)
class LayoutChoice:
    key: str  # built-in name, or "text:<sha256>" for an uploaded or edited layout
    label: str
    layout: Layout


@st.cache_resource(show_spinner=False, max_entries=16)
def _layout_from_text(key: str, text: str, source: str) -> Layout:
    return parse_layout_text(text, source)


def layout_choice(name_or_text: str, source: str | None = None) -> LayoutChoice:
    """A built-in layout by name, or a layout parsed from YAML text (raises LayoutError)."""
    if source is None and name_or_text in BUILTIN_LAYOUTS:
        return LayoutChoice(name_or_text, name_or_text, builtin_layout(name_or_text))
    key = "text:" + digest(name_or_text.encode("utf-8"))
    layout = _layout_from_text(key, name_or_text, source or "layout.yaml")
    return LayoutChoice(key, f"{layout.name} ({source or 'edited'})", layout)


@cache
def builtin_layout_text(name: str) -> str:
    from importlib import resources

    return resources.files("assembler.data").joinpath("layouts", f"{name}.yaml").read_text("utf-8")


@cache
def provider_models() -> dict[str, tuple[str, ...]]:
    """Models genai-prices knows for each simulated provider (offline data)."""
    from genai_prices import data

    out: dict[str, tuple[str, ...]] = {}
    for provider in data.providers:
        prefixes = PROVIDERS.get(provider.id)
        if prefixes is None:
            continue
        models = sorted({m.id for m in provider.models if m.id.startswith(prefixes)})
        default = DEFAULT_MODELS[provider.id]
        if default in models:
            models.remove(default)
            models.insert(0, default)
        out[provider.id] = tuple(models)
    return {p: out.get(p, ()) for p in PROVIDERS}


Progress = Callable[[int, int], None]
#: Where work the app stops at its budget runs without one.
CLI_HINT = "run it with the command line (python -m assembler), which has no time limit"
AnalysisKey = tuple[str, str, str | None, str | None, str | None]
MAX_ANALYSES = 12
MAX_COMPARISONS = 8


#: In a browser session's state after an upload: (its content key, the time by which its
#: first analysis must end, the page run that draws it: the one after the run that read
#: it), so that the upload is answered within ``ANSWER_SECONDS``.
FIRST_ANSWER = "_first_answer"


CLI_ANALYZE = (
    "analyse this session with the command line (python -m assembler analyze), which has "
    "no time limit"
)


def _answer_hint() -> str:
    return (
        f"the app answers a new upload within {ANSWER_SECONDS:g} s; the next step you take "
        f"lets it run up to {ANALYSIS_SECONDS:g} s, or {CLI_ANALYZE}"
    )


def _first_answer(session_key: str) -> tuple[float, bool]:
    """The time the analysis of ``session_key`` may take, and whether it is a new upload's
    first page, which has what is left of the answer's budget (once: an analysis after
    it, answered or refused, has the full budget)."""
    if get_script_run_ctx(suppress_warning=True) is None:
        return ANALYSIS_SECONDS, False
    due = st.session_state.get(FIRST_ANSWER)
    if not isinstance(due, tuple) or len(due) != 3 or due[0] != session_key:
        return ANALYSIS_SECONDS, False
    del st.session_state[FIRST_ANSWER]
    if due[2] != st.session_state.get(RUNS):  # a later run: the answer drew no analysis
        return ANALYSIS_SECONDS, False
    # whole seconds, one at least, however late the reading ended: what a message says
    return float(max(1, min(ANALYSIS_SECONDS, round(due[1] - time.monotonic())))), True


@st.cache_resource(show_spinner=False)
def _analysis_locks() -> dict[str, Any]:
    """One lock per analysis being computed, so two tabs asking for it run it once.

    The analyses themselves are kept in a plain store rather than by a cached
    function: the progress bar drawn while ``analyze`` runs must not be recorded
    and replayed on every later hit.
    """
    return {"lock": threading.Lock(), "locks": {}}


def analysis(
    session_key: str,
    session: Session,
    layout: LayoutChoice,
    provider: str | None,
    model: str | None,
    ttl: str | None,
) -> SessionAnalysis:
    """The SessionAnalysis, computed once per input, with a progress bar while it runs."""

    store = _analysis_locks()
    items = _analyses()
    owner = visitor()
    key: AnalysisKey = (session_key, layout.key, provider, model, ttl)
    limit, first = _first_answer(session_key)
    hit: SessionAnalysis | None = items.get(key, owner)
    if hit is not None:
        return hit
    with store["lock"]:
        key_lock = store["locks"].setdefault(key, threading.Lock())
    with key_lock:
        hit = items.get(key, owner)
        if hit is not None:
            return hit
        slot = st.empty()

        started = time.monotonic()

        def progress(done: int, total: int) -> None:
            # a first answer is stopped by its watchdog alone (two clocks would race)
            if not first and time.monotonic() - started > limit:
                where = f"{session.source}: " if first else ""
                why = _answer_hint() if first else CLI_ANALYZE
                raise AnalysisTooLong(
                    f"{where}the analysis stopped after {limit:.0f} s at step {done:,} of "
                    f"{total:,}; {why}"
                )
            if total > 0 and (done == total or done % max(1, total // 100) == 0):
                slot.progress(
                    min(1.0, done / total),
                    text=f"Analysing the session… step {done:,} / {total:,}",
                )

        slot.progress(0.0, text="Analysing the session…")
        # a new upload's first page: stopped at its budget even inside a long step
        guard = (
            bounded(f"{session.source}: the analysis", _answer_hint(), seconds=limit)
            if first
            else nullcontext()
        )
        try:
            with guard:
                result = analyze(
                    session,
                    layout.layout,
                    provider=provider,
                    model=model,
                    ttl=ttl,
                    progress=progress,
                )
        except AnalysisTooLong:
            raise
        except UsageError as exc:
            message = provider_error(
                session.source, str(exc), provider_given=bool(provider), model_given=bool(model)
            )
            raise UsageError(message) from None
        finally:
            slot.empty()
            with store["lock"]:
                store["locks"].pop(key, None)

        freeze_for_reuse(result)  # Streamlit's collection after each rerun skips it
        # Bounded by count and by the bytes of the files behind them.
        items.put(key, result, file_bytes(session_key), owner)
    return result


def comparison(
    session_key: str,
    session: Session,
    base: LayoutChoice,
    head: LayoutChoice,
    provider: str | None,
    model: str | None,
    ttl: str | None,
) -> Any:
    """Both layouts analysed, once per input; kept by the bytes of the file behind them."""
    from assembler.analysis.advice import compare

    store = _comparisons()
    owner = visitor()
    key = (session_key, base.key, head.key, provider, model, ttl)
    hit = store.get(key, owner)
    if hit is not None:
        return hit
    # the base's analysis the step view drew is not run again (and on a session of recorded
    # requests it serves the head too: ``compare``)
    held = _analyses().get((session_key, base.key, provider, model, ttl), owner)
    with st.spinner("Analysing both layouts…"), bounded("the comparison", CLI_HINT):
        result = compare(
            session,
            base.layout,
            head.layout,
            provider=provider,
            model=model,
            ttl=ttl,
            analysed=held,
        )
    store.put(key, result, 2 * file_bytes(session_key), owner)
    return result


@st.cache_resource(show_spinner=False, max_entries=12)
def _step_frame(session_key: str, layout_key: str, provider: str | None, model: str | None, ttl: str | None, _a: Any) -> Any:  # fmt: skip
    import pandas as pd

    rows = [
        {
            "step": s.step,
            "label": s.label or "",
            "function": s.function,
            "depth": s.depth,
            "total": s.tokens.get("total", 0),
            "tools": s.tokens.get("tools", 0),
            "L0": s.tokens.get("L0", 0),
            "L1": s.tokens.get("L1", 0),
            "L2": s.tokens.get("L2", 0),
            "read": s.read,
            "write": s.write,
            "uncached": s.uncached,
            "hit_ratio": s.hit_ratio,
            "cached_prefix": s.cached_prefix_tokens,
            "usd": s.usd,
            "usd_without_cache": s.usd_without_cache,
            "miss": s.miss.component if s.miss else "",
        }
        for s in _a.steps
    ]
    frame = pd.DataFrame(rows)
    frame["cum_usd"] = frame["usd"].cumsum()
    frame["cum_usd_without_cache"] = frame["usd_without_cache"].cumsum()
    return frame


def step_frame(
    session_key: str,
    layout: LayoutChoice,
    provider: str | None,
    model: str | None,
    ttl: str | None,
    a: Any,
) -> Any:
    """One row per step (pandas), cached alongside the analysis."""
    return _step_frame(session_key, layout.key, provider, model, ttl, a)

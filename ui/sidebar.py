"""The sidebar every page shares: session, layout, provider/model, lifetime.

Choices live in plain ``st.session_state`` keys (``sel_*``) so they survive page
switches; each widget is re-seeded from them on every run. Query parameters
``session`` and ``layout`` are applied once per browser session and per page
load, so a deep link works on a freshly started server.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import streamlit as st

from assembler.analysis.layouts import BUILTIN_LAYOUTS, LayoutError
from assembler.analysis.results import SessionAnalysis
from assembler.limits import one_line
from assembler.sessions.model import Session, SessionError
from ui import data, html, layout_store, uploads
from ui.html import literal

UPLOAD = "Upload a file…"
RECORDED = "as recorded"
LAYOUT_DEFAULT = "layout's own"


@dataclass(frozen=True)
class Selection:
    session_name: str
    session_key: str
    session: Session
    layout: data.LayoutChoice
    provider: str | None
    model: str | None
    ttl: str | None

    @property
    def provider_label(self) -> str:
        provider = self.provider or self.session.profile.provider
        model = self.model or self.session.profile.model
        return f"{provider} · {model}"

    def analysis(self) -> SessionAnalysis:
        """The analysis of this choice, run once and cached (progress bar on the first run)."""
        return data.analysis(
            self.session_key, self.session, self.layout, self.provider, self.model, self.ttl
        )

    def query(self) -> dict[str, str]:
        """The query parameters that bring this choice back (bundled sessions, built-in layouts)."""
        params: dict[str, str] = {}
        params["session"] = self.session_name
        if self.layout.key in BUILTIN_LAYOUTS or layout_store.find(layout_store.link(self.layout)):
            params["layout"] = layout_store.link(self.layout)
        return params


def error(message: str) -> None:
    """An error naming a file or a value the user supplied: one line, shown literally
    (escaped, so an image or a link in it is text, never fetched or followed)."""
    st.error(literal(one_line(message)), icon=":material/error:")


def _seed(key: str, default: Any, options: list[Any] | None = None) -> None:
    """Copy the persisted choice into the widget key before the widget is drawn."""
    value = st.session_state.get(key, default)
    if options is not None and value not in options:
        value = default
    st.session_state[key] = value
    st.session_state["w_" + key] = value


def _keep(key: str) -> None:
    st.session_state[key] = st.session_state["w_" + key]


def apply_query_params() -> None:
    """Take ``session`` and ``layout`` from the URL once per page load."""
    qp = st.query_params
    token = (qp.get("session"), qp.get("layout"))
    if st.session_state.get("_qp_sel_applied") == token:
        return
    st.session_state["_qp_sel_applied"] = token
    session, layout = token
    if session and session in data.bundled_sessions():
        st.session_state["sel_session"] = session
    elif session and session.startswith(uploads.PREFIX):
        st.session_state["sel_session"] = UPLOAD
        if not uploads.restore(session):
            st.session_state["_upload_lost"] = session
    if layout and layout in BUILTIN_LAYOUTS:
        st.session_state["sel_layout"] = layout
    elif layout and (kept := layout_store.find(layout)) is not None:
        st.session_state["sel_layout"] = UPLOAD
        st.session_state["uploaded_layout"] = kept


def _layout_upload(errors: list[str]) -> None:
    up = st.sidebar.file_uploader(
        "Layout file (.yaml)",
        type=["yaml", "yml"],
        key="upload_layout",
        max_upload_size=data.MAX_LAYOUT_MB,
    )
    if up is None:
        return
    raw = up.getvalue()
    try:
        text = raw.decode("utf-8")
        data.layout_choice(text, up.name)
    except UnicodeDecodeError as exc:
        errors.append(f"{up.name}: not UTF-8 text (byte {exc.start})")
        return
    except LayoutError as exc:
        errors.append(str(exc))
        return
    st.session_state["uploaded_layout"] = (up.name, text)


def sidebar() -> Selection | None:
    """Draw the shared sidebar; None (with the error already shown) if nothing usable is chosen."""
    apply_query_params()
    errors: list[str] = []
    bundled = list(data.bundled_sessions())
    sb = st.sidebar
    sb.markdown("### :material/dataset: Session")
    options = [*bundled, UPLOAD]
    default = data.DEFAULT_SESSION if data.DEFAULT_SESSION in bundled else options[0]
    _seed("sel_session", default, options)
    choice = sb.selectbox(
        "Session",
        options,
        key="w_sel_session",
        on_change=_keep,
        args=("sel_session",),
        label_visibility="collapsed",
    )
    if choice == UPLOAD:
        uploads.uploader(errors)

    sb.markdown("### :material/view_agenda: Layout")
    l_options = [*BUILTIN_LAYOUTS, UPLOAD]
    _seed("sel_layout", "seed", l_options)
    l_choice = sb.selectbox(
        "Layout",
        l_options,
        key="w_sel_layout",
        on_change=_keep,
        args=("sel_layout",),
        label_visibility="collapsed",
    )
    if l_choice == UPLOAD:
        _layout_upload(errors)

    sb.markdown("### :material/payments: Pricing")
    providers = [RECORDED, *data.PROVIDERS]
    _seed("sel_provider", RECORDED, providers)
    provider = sb.selectbox(
        "Provider", providers, key="w_sel_provider", on_change=_keep, args=("sel_provider",)
    )
    model: str | None = None
    if provider != RECORDED:
        models = list(data.provider_models()[provider]) or [data.DEFAULT_MODELS[provider]]
        _seed("sel_model", models[0], models)
        model = sb.selectbox(
            "Model", models, key="w_sel_model", on_change=_keep, args=("sel_model",)
        )
    ttls = [LAYOUT_DEFAULT, "5m", "1h"]
    _seed("sel_ttl", LAYOUT_DEFAULT, ttls)
    ttl = sb.selectbox("Cache lifetime", ttls, key="w_sel_ttl", on_change=_keep, args=("sel_ttl",))

    for message in errors:
        error(message)

    # Resolve the session.
    if choice == UPLOAD:
        kept = uploads.current()
        if kept is None:
            lost = st.session_state.pop("_upload_lost", None)
            if lost:
                st.warning(
                    f"The link names an upload ({html.md(lost)}) this server no longer keeps: "
                    "upload the file again."
                )
            elif not errors:
                st.info(
                    "Upload a session file or a raw transcript (Claude Code, Codex, request log) "
                    "in the sidebar, or pick a bundled session."
                )
            return None
        name, raw, known = kept.name, kept.raw, kept.key
        session_name = kept.link
    else:
        name, raw, known = choice, data.bundled_bytes(choice), data.bundled_key(choice)
        session_name = choice
    try:
        key, session = data.parse_session_bytes(raw, name, known)
    except SessionError as exc:
        error(str(exc))
        return None

    # Resolve the layout.
    if l_choice == UPLOAD:
        up_layout = st.session_state.get("uploaded_layout")
        if up_layout is None:
            if not errors:
                st.info("Upload a layout file in the sidebar, or pick a built-in one.")
            return None
        layout = layout_store.keep(up_layout[1], up_layout[0])
    else:
        layout = data.layout_choice(l_choice)

    return Selection(
        session_name=session_name,
        session_key=key,
        session=session,
        layout=layout,
        provider=None if provider == RECORDED else provider,
        model=model,
        ttl=None if ttl == LAYOUT_DEFAULT else ttl,
    )

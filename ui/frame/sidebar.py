"""The sidebar every page shares: session, layout, provider/model, lifetime.

Choices live in plain ``st.session_state`` keys (``sel_*``) so they survive page
switches; each widget is re-seeded from them on every run. Query parameters
``session``, ``layout``, ``provider``, ``model`` and ``ttl`` are applied when
they change (a load, a reload, a link), so a shared link or a reload on a
freshly started server brings the same choice back; a value the app does not
know gets one warning line naming it and what was expected.
"""

from __future__ import annotations

from contextlib import suppress
from dataclasses import dataclass
from typing import Any

import streamlit as st

from assembler.analysis.engine import (
    BUILTIN_LAYOUTS,
    LayoutError,
    SessionAnalysis,
    runs_as_recorded,
)
from assembler.limits import clip, one_line
from assembler.sessions.model import Session, SessionError
from ui import html
from ui.html import literal
from ui.state import data, layout_store, uploads
from ui.views import step

UPLOAD = "Upload a file…"
RECORDED = "as recorded"
LAYOUT_DEFAULT = "layout's own"
LIFETIMES = ("5m", "1h")
#: Query values that ask for the defaults outright (a link whose text is about them).
RECORDED_QUERY = "recorded"
LAYOUT_QUERY = "layout"
#: Warnings about the URL's values, shown once by the page that applied them.
LINK_WARNINGS = "_link_warnings"
#: Set by a button that switches page: the next page opens at its top.
SCROLL_TOP = "_scroll_top"
# A page switched to from a button keeps the scroll offset of the page it left (a link
# click resets it): the new page scrolls its main area back to the top once it is drawn.
_TOP_JS = """
export default function() {
  const top = () => {
    const main = document.querySelector('[data-testid="stMain"]');
    if (main) main.scrollTop = 0;
  };
  top();
  setTimeout(top, 150);
  setTimeout(top, 600);
}
"""
_top: Any = None


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
    def recorded(self) -> bool:
        """Priced at the session's own provider and model (another name of it counts): only
        then is its measured usage a bill, as the command line decides."""
        return runs_as_recorded(self.session, self.provider, self.model)

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
        return params | _pricing_query(self.provider, self.model, self.ttl)


def _pricing_query(provider: str | None, model: str | None, ttl: str | None) -> dict[str, str]:
    """Provider, model and lifetime, each only when it is not the default."""
    params: dict[str, str] = {}
    if provider is not None:
        params["provider"] = provider
        if model is not None:
            params["model"] = model
    if ttl is not None:
        params["ttl"] = ttl
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


def _warn(name: str, value: str, expected: str, shown: str) -> None:
    """One line of Markdown: the value as typed (a code span: a URL in it is not a link)."""
    st.session_state.setdefault(LINK_WARNINGS, []).append(
        f"The link's {literal(one_line(f'{name}={clip(value)}'))} is not "
        f"{html.md(expected)}: showing {html.md(shown)}."
    )


def _models(provider: str) -> list[str]:
    return list(data.provider_models()[provider]) or [data.DEFAULT_MODELS[provider]]


def apply_query_params() -> None:
    """Take the choice from the URL when the URL's choice changed (a load, a reload, a link)."""
    qp = st.query_params
    token = tuple(qp.get(k) for k in step.SELECTION_KEYS)
    if st.session_state.get("_qp_sel_applied") == token:
        return
    st.session_state["_qp_sel_applied"] = token
    session, layout, provider, model, ttl = token
    bundled = data.bundled_sessions()
    if session and session in bundled:
        st.session_state["sel_session"] = session
    elif session and session.startswith(uploads.PREFIX):
        st.session_state["sel_session"] = UPLOAD
        if not uploads.restore(session):
            st.session_state["_upload_lost"] = session
    elif session:
        shown = st.session_state.get("sel_session", data.DEFAULT_SESSION)
        _warn("session", session, f"a bundled session ({', '.join(bundled)})", shown)
    if layout and layout in BUILTIN_LAYOUTS:
        st.session_state["sel_layout"] = layout
    elif layout and (kept := layout_store.find(layout)) is not None:
        st.session_state["sel_layout"] = UPLOAD
        st.session_state["uploaded_layout"] = kept
    elif layout:
        shown = st.session_state.get("sel_layout", "seed")
        if layout.startswith(layout_store.PREFIX):
            expected = "a layout this server keeps (upload it again)"
        else:
            expected = f"a built-in layout ({', '.join(BUILTIN_LAYOUTS)})"
        _warn("layout", layout, expected, str(shown))
    if provider and provider in data.PROVIDERS:
        st.session_state["sel_provider"] = provider
    elif provider == RECORDED_QUERY:
        st.session_state["sel_provider"] = RECORDED
    elif provider:
        _warn(
            "provider",
            provider,
            f"a provider ({', '.join([*data.PROVIDERS, RECORDED_QUERY])})",
            "the recorded one",
        )
    chosen = st.session_state.get("sel_provider", RECORDED)
    if model and chosen != RECORDED and model in _models(chosen):
        st.session_state["sel_model"] = model
    elif model and chosen == RECORDED:
        _warn("model", model, "used without a provider", "the recorded model")
    elif model:
        default = _models(chosen)[0]
        _warn("model", model, f"a {chosen} model with a known price (e.g. {default})", default)
    if ttl and ttl in LIFETIMES:
        st.session_state["sel_ttl"] = ttl
    elif ttl == LAYOUT_QUERY:
        st.session_state["sel_ttl"] = LAYOUT_DEFAULT
    elif ttl:
        _warn(
            "ttl",
            ttl,
            f"a cache lifetime ({', '.join(LIFETIMES)} or {LAYOUT_QUERY})",
            "the layout's own",
        )


def link_warnings() -> None:
    """The URL's rejected values, one warning line each (once: the URL is rewritten)."""
    for message in st.session_state.pop(LINK_WARNINGS, []):
        st.warning(message, icon=":material/link_off:")


def remembered_query() -> dict[str, str]:
    """The URL of the choice kept in this browser session, for a page without the sidebar."""
    params: dict[str, str] = {}
    session = st.session_state.get("sel_session")
    kept = uploads.current()
    if session in data.bundled_sessions():
        params["session"] = str(session)
    elif session == UPLOAD and kept is not None:
        params["session"] = kept.link
    layout = st.session_state.get("sel_layout")
    up_layout = st.session_state.get("uploaded_layout")
    if layout in BUILTIN_LAYOUTS:
        params["layout"] = str(layout)
    elif layout == UPLOAD and up_layout is not None:
        with suppress(LayoutError):  # a layout that no longer parses is left out of the URL
            params["layout"] = layout_store.link(layout_store.keep(up_layout[1], up_layout[0]))
    provider = st.session_state.get("sel_provider", RECORDED)
    model = st.session_state.get("sel_model")
    if provider in data.PROVIDERS and model not in _models(provider):
        model = _models(provider)[0]
    ttl = st.session_state.get("sel_ttl", LAYOUT_DEFAULT)
    return params | _pricing_query(
        str(provider) if provider in data.PROVIDERS else None,
        model,
        str(ttl) if ttl in LIFETIMES else None,
    )


def keep_in_url() -> None:
    """For a page without the sidebar: take the URL's choice, and keep the choice in the URL."""
    apply_query_params()
    link_warnings()
    step.write_query(None, remembered_query())


def _forget_session() -> None:
    """No session is shown: the URL must not go on naming the one shown before."""
    if "session" in st.query_params:
        del st.query_params["session"]
    st.session_state["_qp_sel_applied"] = tuple(st.query_params.get(k) for k in step.SELECTION_KEYS)


def _layout_upload(errors: list[str]) -> None:
    up = st.sidebar.file_uploader(
        "Layout file (.yaml)",
        type=["yaml", "yml"],
        key="upload_layout",
        max_upload_size=data.MAX_LAYOUT_MB,
    )
    if up is not None:
        _take_layout(up.name, up.getvalue(), errors)
    kept = st.session_state.get("uploaded_layout")
    if kept is not None:
        # what is in use, uploaded or handed over by a page (edited, recommended)
        with suppress(LayoutError):
            name = data.layout_choice(kept[1], kept[0]).layout.name
            st.sidebar.caption(
                f":material/description: **{html.md(kept[0])}** — layout {html.md(name)}",
                help="Kept for this browser session; the page's link brings it back on this server.",
            )


def _take_layout(name: str, raw: bytes, errors: list[str]) -> None:
    try:
        text = raw.decode("utf-8")
        data.layout_choice(text, name)
    except UnicodeDecodeError as exc:
        errors.append(f"{name}: not UTF-8 text (byte {exc.start})")
        return
    except LayoutError as exc:
        errors.append(str(exc))
        return
    st.session_state["uploaded_layout"] = (name, text)


def _scroll_to_top() -> None:
    global _top
    if not st.session_state.pop(SCROLL_TOP, False):
        return
    if _top is None:
        _top = st.components.v2.component("cai_scroll_top", js=_TOP_JS)
    with st.sidebar:  # drawn there, it takes no room in the page
        _top(key="scroll_top", height=0)


def sidebar() -> Selection | None:
    """Draw the shared sidebar; None (with the error already shown) if nothing usable is chosen."""
    _scroll_to_top()
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
        models = _models(provider)
        _seed("sel_model", models[0], models)
        model = sb.selectbox(
            "Model", models, key="w_sel_model", on_change=_keep, args=("sel_model",)
        )
    ttls = [LAYOUT_DEFAULT, *LIFETIMES]
    _seed("sel_ttl", LAYOUT_DEFAULT, ttls)
    ttl = sb.selectbox("Cache lifetime", ttls, key="w_sel_ttl", on_change=_keep, args=("sel_ttl",))

    for message in errors:
        error(message)
    link_warnings()

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
            _forget_session()
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
        _forget_session()
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

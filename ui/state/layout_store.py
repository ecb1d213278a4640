"""Layouts given as text (uploaded or edited) kept for links that name them.

``layout=text:<hash>-<token>`` in a URL brings back the exact layout on the same
server: the step view opened from Compare shows the head layout that was edited
there, not the built-in one of the same name. As for an uploaded session, the token
is random, one per layout and browser session (a link opened elsewhere brings its
own along): whoever merely has a layout's text cannot compute a link to someone's.
"""

from __future__ import annotations

import secrets
import threading
from collections import OrderedDict
from typing import Any

import streamlit as st

from assembler.analysis.engine import check_names
from ui.state import data

PREFIX = "text:"
LINK_HASH = 16
LINK_TOKEN_BYTES = 8
MAX_KEPT = 32
#: This browser session's token for each layout text it has kept or opened (by key).
TOKENS = "_layout_link_tokens"


@st.cache_resource(show_spinner=False)
def _store() -> dict[str, Any]:
    return {"items": OrderedDict(), "lock": threading.Lock()}


def _tokens() -> dict[str, str]:
    tokens = st.session_state.get(TOKENS)
    if not isinstance(tokens, dict):
        tokens = st.session_state[TOKENS] = {}
    return tokens


def link(choice: data.LayoutChoice) -> str:
    """The ``layout`` query value naming this layout: its name if built in, else its hash
    and this browser session's token for it."""
    if not choice.key.startswith(PREFIX):
        return choice.key
    token = _tokens().setdefault(choice.key, secrets.token_hex(LINK_TOKEN_BYTES))
    return f"{choice.key[: len(PREFIX) + LINK_HASH]}-{token}"


def keep(text: str, source: str) -> data.LayoutChoice:
    """Parse a layout (raises LayoutError, with "did you mean" for an unknown component)
    and keep its text for links."""
    choice = data.layout_choice(text, source)
    check_names(choice.layout)
    store = _store()
    with store["lock"]:
        items: OrderedDict[str, tuple[str, str]] = store["items"]
        items[link(choice)] = (source, text)
        items.move_to_end(link(choice))
        while len(items) > MAX_KEPT:
            items.popitem(last=False)
    return choice


def find(value: str) -> tuple[str, str] | None:
    """(source, text) of a kept layout named by ``text:<hash>-<token>``; the link's token
    becomes this browser session's for the layout, so the link stays what it was."""
    store = _store()
    with store["lock"]:
        found: tuple[str, str] | None = store["items"].get(value)
    if found is not None:
        key = PREFIX + data.digest(found[1].encode("utf-8"))
        _tokens()[key] = value.rpartition("-")[2]
    return found

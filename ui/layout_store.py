"""Layouts given as text (uploaded or edited) kept by content hash, so a link can name them.

``layout=text:<hash>`` in a URL brings back the exact layout on the same server:
the step view opened from Compare shows the head layout that was edited there,
not the built-in one of the same name.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any

import streamlit as st

from assembler.analysis.engine import check_names
from ui import data

PREFIX = "text:"
LINK_HASH = 16
MAX_KEPT = 32


@st.cache_resource(show_spinner=False)
def _store() -> dict[str, Any]:
    return {"items": OrderedDict(), "lock": threading.Lock()}


def link(choice: data.LayoutChoice) -> str:
    """The ``layout`` query value naming this layout: its name if built in, else its hash."""
    if not choice.key.startswith(PREFIX):
        return choice.key
    return choice.key[: len(PREFIX) + LINK_HASH]


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
    """(source, text) of a kept layout named by ``text:<hash>``."""
    store = _store()
    with store["lock"]:
        found: tuple[str, str] | None = store["items"].get(value)
    return found

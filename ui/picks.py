"""A widget's change is the user's only when it comes from the widget the last run drew.

A rerun the browser sends before it has drawn the last run carries the values of the
widgets it still shows. One the server no longer draws has lost its state, so Streamlit
takes its value for a change and calls its ``on_change`` (measured on the Live page under
load: step 1's Block picker, sent again after step 2 was drawn, pinned its block on every
later step). A picker whose key changes records the key it is drawn under in a slot of its
own; its callback acts only for that key. (The step slider knows its current key from the
step itself: ``ui.views.step._from_slider``.)
"""

from __future__ import annotations

import hashlib

import streamlit as st


def key(prefix: str, *shown: str) -> str:
    """A picker's key naming what it shows (any text, of any length): a new widget when
    that changes, which opens on it by its ``index``, so the browser's first value is the
    one shown and no value is set into a widget's state for a rerun to overtake."""
    text = "\n".join(shown).encode("utf-8", "surrogatepass")
    return f"{prefix}_{hashlib.sha1(text).hexdigest()[:16]}"


def drawn(slot: str, key: str) -> None:
    """The widget under ``key`` is the one this run draws for ``slot``."""
    st.session_state[slot] = key


def is_drawn(slot: str, key: str) -> bool:
    """Whether ``key`` is the widget the last run drew for ``slot``: its change is a pick."""
    return bool(st.session_state.get(slot) == key)

"""AppTest fixtures: caches cleared around each test, the bare-mode log silenced."""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import streamlit as st
import streamlit.runtime.scriptrunner_utils.script_run_context as script_run_context

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))


def quiet_logs() -> None:
    for name in (script_run_context.__name__, "streamlit.runtime.caching.cache_data_api"):
        logging.getLogger(name).setLevel(logging.ERROR)


def clear_caches() -> None:
    st.cache_data.clear()
    st.cache_resource.clear()


@pytest.fixture(autouse=True)
def _fresh_caches() -> Iterator[None]:
    quiet_logs()
    clear_caches()
    yield
    clear_caches()

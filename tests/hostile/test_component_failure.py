"""A component whose build raises is never silent: ``analyze`` (text and JSON) and the
app's step view say so in one line naming the component and the error."""

from __future__ import annotations

import contextlib
import io
import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "app"))

import streamlit as st  # noqa: E402
from app_helpers import new_app  # noqa: E402

import assembler.analysis.engine.pipeline as pipeline  # noqa: E402
from assembler.cli.main import main  # noqa: E402
from assembler.design.components import default_registry  # noqa: E402
from assembler.design.layers import Layer  # noqa: E402
from assembler.design.registry import ContextComponent, Registry  # noqa: E402

SESSION = str(ROOT / "sample_sessions" / "research_agent.yaml")
LINE = "component 'broken_note' failed: RuntimeError: the note store is down"


def _broken(ctx: object) -> str:
    raise RuntimeError("the note store is down")


def _registry() -> Registry:
    registry = default_registry()
    registry.register(ContextComponent("broken_note", Layer.L1, 90, _broken))
    return registry


@pytest.fixture
def broken(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(pipeline, "default_registry", _registry)
    st.cache_data.clear()
    st.cache_resource.clear()
    yield
    st.cache_data.clear()
    st.cache_resource.clear()


def _run(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(list(argv))
    return code, out.getvalue()


def test_analyze_text_names_the_failed_component(broken: None) -> None:
    code, out = _run("analyze", SESSION)
    assert code == 0
    lines = [line for line in out.splitlines() if "broken_note" in line]
    # one line for the failure every step met, with the steps it was met on
    assert lines == [f"warning: steps 1–21: {LINE}"], out[-2000:]


def test_analyze_json_names_the_failed_component(broken: None) -> None:
    code, out = _run("analyze", SESSION, "--json")
    assert code == 0
    steps = json.loads(out)["steps"]
    assert steps and all(LINE in s.get("warnings", ()) for s in steps)


def test_without_a_failure_there_is_no_warning() -> None:
    code, out = _run("analyze", SESSION)
    assert code == 0 and "failed:" not in out


def test_the_step_view_names_the_failed_component(broken: None) -> None:
    at = new_app(session="research_agent.yaml", step="2")
    at.run()
    assert not at.exception
    shown = [w.value for w in at.warning]
    assert any(LINE in text for text in shown), shown

"""The hostile inputs uploaded in the app's sidebar: one escaped error line naming the
upload, no exception, within a time and memory budget measured here."""

from __future__ import annotations

import re
import sys
import time
from pathlib import Path

import pytest
from build import CASES, IMAGE, Case, build

from tests.hostile.runner import PEAK_BYTES, SECONDS

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "app"))

import streamlit as st  # noqa: E402
from app_helpers import new_app  # noqa: E402


def clear_caches() -> None:
    st.cache_data.clear()
    st.cache_resource.clear()


SESSION_CASES = (
    "key-alias-bomb",
    "long-string",
    "big-int-session",
    "big-int-yaml",
    "big-int-jsonl",
    "lone-surrogate",
    "lone-surrogate-jsonl",
    "date-year-1",
    "date-year-9999",
    "long-timezone",
    "huge-key",
    "key-with-newline",
    "jsonl-duplicate-header-key",
    "duplicate-tool",
    "huge-output-tokens",
    "keep-chain-3000",
    "markdown-unknown-key",
    "unknown-model",
    "unknown-provider",
)
LAYOUT_CASES = (
    "layout-alias-bomb",
    "big-int-layout",
    "layout-add-mapping",
    "layout-expose-functions",
    "layout-range-functions",
    "layout-deep",
    "layout-duplicate-key",
    "layout-bad-yaml",
    "markdown-layout-ttl",
)
BY_NAME = {c.name: c for c in CASES}
# Shown literally: the whole message one Markdown code span (no backtick inside it).
LIVE_MARKDOWN = re.compile(r"\A(?!(`+) [^`]*? \1\Z)")


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("hostile-app")
    build(tmp)
    return tmp


def _file(case: Case, hostile: Path, index: int) -> Path:
    return Path(case.argv[index].replace("{tmp}", str(hostile / case.name)))


def _reset_peak() -> int:
    """Reset this process's peak resident size (Linux ``clear_refs``); the current size."""
    Path("/proc/self/clear_refs").write_text("5")
    return _status("VmRSS")


def _peak() -> int:
    return _status("VmHWM")


def _status(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024
    raise AssertionError(field)


def _upload(key: str, select: str, path: Path) -> tuple[list[str], float, int]:
    clear_caches()
    at = new_app()
    at.run()
    at.selectbox(key=select).select("Upload a file…").run()
    base = _reset_peak()
    start = time.process_time()  # CPU of this process: a shared runner's load is not the app's
    at.file_uploader(key=key).upload(path.name, path.read_bytes(), "application/octet-stream")
    at.run()
    seconds = time.process_time() - start
    peak = _peak() - base
    assert not at.exception, at.exception
    return [e.value for e in at.error], seconds, peak


def _check(messages: list[str], name: str, seconds: float, peak: int) -> None:
    assert seconds < SECONDS, f"{seconds:.1f} s"
    assert peak < PEAK_BYTES, f"{peak:,} bytes"
    assert len(messages) == 1, messages
    message = messages[0]
    assert "\n" not in message and len(message) < 1200
    assert name in message, message
    assert not LIVE_MARKDOWN.search(message), message
    assert "internal error" not in message and "Something went wrong" not in message, message


@pytest.mark.parametrize("name", SESSION_CASES)
def test_session_upload(name: str, hostile: Path) -> None:
    path = _file(BY_NAME[name], hostile, 1)
    messages, seconds, peak = _upload("upload_session", "w_sel_session", path)
    _check(messages, path.name, seconds, peak)


@pytest.mark.parametrize("name", LAYOUT_CASES)
def test_layout_upload(name: str, hostile: Path) -> None:
    path = _file(BY_NAME[name], hostile, 3)
    messages, seconds, peak = _upload("upload_layout", "w_sel_layout", path)
    _check(messages, path.name, seconds, peak)


def test_markdown_is_shown_as_text(hostile: Path) -> None:
    path = _file(BY_NAME["markdown-unknown-key"], hostile, 1)
    messages, _, _ = _upload("upload_session", "w_sel_session", path)
    assert IMAGE in messages[0]


def test_step_in_the_url_is_text() -> None:
    at = new_app(step=IMAGE)
    at.run()
    assert not at.exception
    toasts = [t.value for t in at.toast]
    assert toasts and not LIVE_MARKDOWN.search(toasts[0]), toasts

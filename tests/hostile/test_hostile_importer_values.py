"""Hypothesis over each importer's format: the fixture's records keep their shape while
some of their values (any of them: usage counts, times, ids, URLs, status codes, texts,
OTel attributes) turn hostile. ``import`` ends in exit 0, or in exit 2 with one line
naming the file; never ``internal error``; what it writes loads (the command loads it)."""

from __future__ import annotations

import contextlib
import copy
import io
import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from build import CLAUDE, CODEX, IMPORTER_FIXTURES, REQUESTS
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from assembler.cli import main

CAPTURE = IMPORTER_FIXTURES / "capture" / "proxy_streamed.jsonl"
OTEL = IMPORTER_FIXTURES / "otel" / "openinference.json"
GENAI = IMPORTER_FIXTURES / "otel" / "genai.json"


def _documents(path: Path) -> list[Any]:
    """The JSON documents of a file: one per line, or one pretty-printed."""
    text = path.read_text("utf-8")
    try:
        return [json.loads(text)]
    except json.JSONDecodeError:
        return [json.loads(line) for line in text.splitlines() if line.strip()]


FORMATS = {
    "claude-code": (CLAUDE, _documents(CLAUDE)),
    "codex": (CODEX, _documents(CODEX)),
    "requests": (REQUESTS, _documents(REQUESTS)),
    "capture": (CAPTURE, _documents(CAPTURE)),
    "otel": (OTEL, _documents(OTEL)),
    "otel-genai": (GENAI, _documents(GENAI)),
}
COMMAND = {"capture": "requests", "otel-genai": "otel"}

Path_ = tuple[int | str, ...]


def _leaves(value: Any, path: Path_ = ()) -> Iterator[Path_]:
    """The path of every value of a document, containers included (a whole usage object
    or attribute list may be replaced)."""
    if path:
        yield path
    if isinstance(value, dict):
        for key, child in value.items():
            yield from _leaves(child, (*path, key))
    elif isinstance(value, list):
        for i, child in enumerate(value):
            yield from _leaves(child, (*path, i))


LEAVES = {name: [(i, p) for i, d in enumerate(docs) for p in _leaves(d)] for name, (_, docs) in FORMATS.items()}  # fmt: skip
DIGITS = "9" * 5000
# Values that broke readers before: past 2**53, negative, fractional, huge, the calendar's
# ends, unparsable URLs, structures where text belongs, lone surrogates, long text.
HOSTILE = st.one_of(
    st.sampled_from(
        [
            2**53, 2**64, -1, -(2**63), 0.5, 1e300, float("inf"), float("nan"), True, None,
            "", "9" * 20, DIGITS, "0001-01-01T00:00:00Z", "9999-12-31T23:59:59-01:00",
            "http://[::1/v1/messages", "https://[x", "-62135596800000000000", "\ud800",
            {"a": 1}, [1, [2]], {"stringValue": {"a": 1}}, {"intValue": DIGITS},
            {"arrayValue": {"values": 7}}, {"kvlistValue": {"values": [{"key": 1}]}},
            "x" * 300, "llm.input_messages." + "9" * 900 + ".message.content",
        ]
    ),
    st.integers(),
    st.text(max_size=12),
)  # fmt: skip


def _set(doc: Any, path: Path_, value: Any) -> None:
    for key in path[:-1]:
        doc = doc[key]
    doc[path[-1]] = value


def _write(name: str, docs: list[Any], folder: Path) -> Path:
    path = folder / ("t.json" if name.startswith("otel") else "t.jsonl")
    text = "".join(json.dumps(d) + "\n" for d in docs)
    path.write_bytes(text.encode("utf-8", "surrogatepass"))
    return path


def _import(name: str, path: Path) -> tuple[int, str]:
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = main(["import", COMMAND.get(name, name), str(path), "-o", str(path.parent / "o.jsonl")])  # fmt: skip
    return code, err.getvalue()


@pytest.mark.parametrize("name", sorted(FORMATS))
@settings(
    max_examples=int(os.environ.get("HOSTILE_EXAMPLES", "40")),
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(data=st.data())
def test_hostile_values(name: str, data: st.DataObject) -> None:
    _, docs = FORMATS[name]
    docs = json.loads(json.dumps(docs))  # a fresh copy to make hostile
    leaves = LEAVES[name]
    picks = data.draw(st.lists(st.sampled_from(leaves), min_size=1, max_size=3, unique=True))
    for doc_index, path in picks:
        value = copy.deepcopy(data.draw(HOSTILE))  # sampled values are shared objects
        # an earlier pick may have replaced a container on this path
        with contextlib.suppress(KeyError, IndexError, TypeError):
            _set(docs[doc_index], path, value)
    with tempfile.TemporaryDirectory() as folder:
        path = _write(name, docs, Path(folder))
        code, err = _import(name, path)
    assert code in (0, 2), err
    assert "internal error" not in err and "Traceback" not in err, err
    if code == 2:
        lines = err.strip().splitlines()
        assert len(lines) == 1 and len(lines[0]) < 800, err
        assert "t.json" in lines[0] or "o.jsonl" in lines[0], err

"""Property: truncated or garbled lines never crash an importer.

Each damaged file either imports (the damaged lines skipped and counted in one
warning, the result a session our loader reads and replays) or fails with one
``ImporterError`` line naming the file.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from importer_helpers import CLAUDE, CODEX, REQUESTS, SUBAGENT, steps

from assembler.analysis.engine.importing import import_session
from assembler.sessions.importers import ImporterError

SOURCES = {"claude-code": CLAUDE, "codex": CODEX, "requests": REQUESTS}
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 10**6) | st.text(max_size=12),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=6,
)


def _paths(value: Any, prefix: tuple[str | int, ...] = ()) -> list[tuple[str | int, ...]]:
    out: list[tuple[str | int, ...]] = [prefix] if prefix else []
    if isinstance(value, dict):
        for k, v in value.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += _paths(v, (*prefix, i))
    return out


@st.composite
def damaged(draw: st.DrawFn) -> tuple[str, bytes]:
    fmt = draw(st.sampled_from(sorted(SOURCES)))
    lines = SOURCES[fmt].read_bytes().split(b"\n")
    for _ in range(draw(st.integers(1, 4))):
        i = draw(st.integers(0, len(lines) - 1))
        how = draw(st.sampled_from(["truncate", "text", "bytes", "drop", "retype"]))
        if how == "truncate":
            lines[i] = lines[i][: draw(st.integers(0, max(0, len(lines[i]) - 1)))]
        elif how == "text":
            lines[i] = draw(st.text(max_size=30)).encode("utf-8")
        elif how == "bytes":
            lines[i] = draw(st.binary(max_size=30))
        elif how == "drop":
            del lines[i]
            if not lines:
                lines = [b""]
        else:
            try:
                record = json.loads(lines[i])
            except ValueError:
                continue
            paths = _paths(record)
            if not paths:
                continue
            path = draw(st.sampled_from(paths))
            target = record
            for key in path[:-1]:
                target = target[key]
            target[path[-1]] = draw(JSON_VALUES)
            lines[i] = json.dumps(record).encode("utf-8")
    return fmt, b"\n".join(lines)


def not_a_json_object(line: bytes) -> bool:
    if not line.strip():
        return False
    try:
        return not isinstance(json.loads(line.decode("utf-8")), dict)
    except (UnicodeDecodeError, ValueError, RecursionError):
        return True


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(damaged())
def test_damaged_lines_are_skipped_and_counted_or_a_clear_error(case: tuple[str, bytes]) -> None:
    fmt, raw = case
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "damaged.jsonl"
        path.write_bytes(raw)
        if fmt == "claude-code":
            (Path(tmp) / "subagents").mkdir()
            shutil.copy(SUBAGENT, Path(tmp) / "subagents" / SUBAGENT.name)
        try:
            result = import_session(fmt, path)
        except ImporterError as exc:
            text = str(exc)
            assert text.startswith(str(path)) and "\n" not in text
            return
        bad = sum(not_a_json_object(x) for x in raw.removeprefix(b"\xef\xbb\xbf").split(b"\n"))
        if bad:
            assert len(result.warnings) == 1
            assert result.warnings[0].startswith(f"skipped {bad} malformed line")
        else:
            assert result.warnings == ()
        assert steps(result.data)  # schema-valid and replayable

"""The checked-in fixtures are exactly what fixtures/build.py writes."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest
from importer_helpers import FIXTURES


def test_build_reproduces_every_fixture(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spec = importlib.util.spec_from_file_location("fixture_build", FIXTURES / "build.py")
    assert spec is not None and spec.loader is not None
    build = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "fixture_build", build)  # dataclasses look it up
    spec.loader.exec_module(build)
    monkeypatch.setattr(build, "HERE", tmp_path)
    build.claude_code()
    build.codex()
    build.requests_log()
    written = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*.jsonl"))
    checked_in = sorted(p.relative_to(FIXTURES) for p in FIXTURES.rglob("*.jsonl"))
    assert written == checked_in and len(written) == 7
    for rel in written:
        assert (tmp_path / rel).read_bytes() == (FIXTURES / rel).read_bytes(), rel

"""The checked-in fixtures are exactly what fixtures/build.py writes."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

import pytest
from importer_helpers import FIXTURES


def _builder(name: str, monkeypatch: pytest.MonkeyPatch, here: Path) -> Any:
    spec = importlib.util.spec_from_file_location(f"fixture_{name}", FIXTURES / f"{name}.py")
    assert spec is not None and spec.loader is not None
    build = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, f"fixture_{name}", build)  # dataclasses look it up
    spec.loader.exec_module(build)
    monkeypatch.setattr(build, "HERE", here)
    return build


def test_build_reproduces_every_fixture(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    build = _builder("build", monkeypatch, tmp_path)
    build.claude_code()
    build.codex()
    build.requests_log()
    _builder("build_traffic", monkeypatch, tmp_path).main()
    _builder("build_codex_traffic", monkeypatch, tmp_path).main()
    # the captures are built from requests/proxy.jsonl as checked in (just compared)
    _builder("build_capture", monkeypatch, tmp_path).main()
    written = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*.jsonl"))
    checked_in = sorted(p.relative_to(FIXTURES) for p in FIXTURES.rglob("*.jsonl"))
    assert written == checked_in and len(written) == 7 + 9 + 2 + 2
    for rel in written:
        assert (tmp_path / rel).read_bytes() == (FIXTURES / rel).read_bytes(), rel
